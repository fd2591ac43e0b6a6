"""The memory store interface, shared by the in-memory, SQLite and PostgreSQL stores.

A fact is unique per (owner, category, key). Upserting the same value again counts a
confirmation; a different value replaces the old one. Categories and keys are normalised
(trimmed, lower-case, inner whitespace as `_`) so "Home Town" and "home_town" are one key.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from navi.llm.messages import utcnow
from navi.sessions.models import DEFAULT_OWNER

UpsertOutcome = Literal["created", "updated", "confirmed"]


def normalise(label: str) -> str:
    label = re.sub(r"[^\w\s-]", "", label.strip().lower())
    return re.sub(r"[\s-]+", "_", label).strip("_")


def clean_fact(category: str, key: str, value: str) -> tuple[str, str, str]:
    """A fact's parts as every store keeps them; ValueError when one is empty."""
    category, key, value = normalise(category), normalise(key), value.strip()
    if not category or not key or not value:
        raise ValueError("a fact needs a category, a key and a value")
    return category, key, value


def terms(query: str) -> list[str]:
    return [t for t in re.findall(r"[^\W_]+", query.lower()) if len(t) > 1 or t.isdigit()]


class Fact(BaseModel):
    id: int
    owner: str = DEFAULT_OWNER
    category: str
    key: str
    value: str
    session_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    confirmations: int = 1
    score: float = 0.0

    def line(self) -> str:
        return f"{self.category}: {self.key} = {self.value}"


class MemoryStore(ABC):
    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare storage (migrations). Called once before use."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""

    @abstractmethod
    async def upsert_fact(
        self,
        category: str,
        key: str,
        value: str,
        *,
        owner: str = DEFAULT_OWNER,
        session_id: str | None = None,
    ) -> tuple[Fact, UpsertOutcome]: ...

    @abstractmethod
    async def search_facts(self, query: str, *, owner: str = DEFAULT_OWNER, limit: int = 15) -> list[Fact]:
        """Ranked full-text search; any term may match, best matches first."""

    @abstractmethod
    async def get_all_facts(self, *, owner: str = DEFAULT_OWNER, limit: int | None = None) -> list[Fact]:
        """All facts ordered by category, then most recently updated."""

    @abstractmethod
    async def get_fact(self, fact_id: int, *, owner: str | None = None) -> Fact | None: ...

    @abstractmethod
    async def delete_fact_by_id(self, fact_id: int, *, owner: str | None = None) -> bool: ...

    @abstractmethod
    async def delete_fact(self, key: str, category: str | None = None, *, owner: str = DEFAULT_OWNER) -> int:
        """Delete facts with this key (in this category, if given); returns how many."""

    @abstractmethod
    async def get_summary(self, *, owner: str = DEFAULT_OWNER) -> str | None: ...

    @abstractmethod
    async def set_summary(self, content: str, *, owner: str = DEFAULT_OWNER) -> None: ...

    @abstractmethod
    async def mark_session_extracted(self, session_id: str, at: datetime | None = None) -> None: ...

    @abstractmethod
    async def get_extracted_at(self, session_id: str) -> datetime | None: ...
