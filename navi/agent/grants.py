"""Remembered "always allow" answers: a store per owner of (tool, subject) pairs.

The subject is "" for a whole tool, or the program (argv[0] as typed) for `terminal` (see
`navi.agent.approvals.subject`). The in-memory store is for tests and runtimes without a database;
`SqlGrantStore` (navi/storage/grants.py) keeps them in the `approval_grants` table on SQLite or
PostgreSQL, so they survive restarts. Both pass one contract suite (tests/test_approval_grants.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime

from pydantic import BaseModel, Field

from navi.llm.messages import utcnow


class Grant(BaseModel):
    owner: str
    tool: str
    subject: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class GrantStore(ABC):
    @abstractmethod
    async def is_granted(self, owner: str, tool: str, subject: str) -> bool: ...

    @abstractmethod
    async def grant(self, owner: str, tool: str, subject: str) -> None:
        """Remember the answer (granting twice is one grant)."""

    @abstractmethod
    async def grants(self, owner: str) -> list[Grant]:
        """The owner's grants, by tool then subject."""

    @abstractmethod
    async def revoke(self, owner: str, tool: str, subject: str) -> bool:
        """Forget one grant; False when there was none."""


class InMemoryGrantStore(GrantStore):
    def __init__(self) -> None:
        self._grants: dict[tuple[str, str, str], Grant] = {}

    async def is_granted(self, owner: str, tool: str, subject: str) -> bool:
        return (owner, tool, subject) in self._grants

    async def grant(self, owner: str, tool: str, subject: str) -> None:
        self._grants.setdefault((owner, tool, subject), Grant(owner=owner, tool=tool, subject=subject))

    async def grants(self, owner: str) -> list[Grant]:
        return [g.model_copy() for key, g in sorted(self._grants.items()) if key[0] == owner]

    async def revoke(self, owner: str, tool: str, subject: str) -> bool:
        return self._grants.pop((owner, tool, subject), None) is not None
