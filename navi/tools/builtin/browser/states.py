"""Where a conversation's browser cookies and storage wait for its next turn, on any worker.

After each `browser` call the context's storage state (Playwright's cookies and local storage) is
saved under the session and its user, with a version that grows by one on each change; a worker
that runs the conversation next and has no context for it (or an older one than the saved version:
another worker acted since) opens one from the saved state. On PostgreSQL (several workers) and on
SQLite the rows are in the database (`navi/storage/browser_states.py`, the `browser_states` table,
gone with its session); a Navi without a database keeps them in memory, which still brings back a
context closed for being idle or to make room.

The state is a secret, like a named sign-in: no tool reads it (only the browser pool, by the
session's id and its user), no page or API shows it, and a session's export leaves it out.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 5 * 1024 * 1024  # a saved state's JSON; a bigger one is not saved (the last one stays)


@dataclass(frozen=True)
class SavedState:
    state: dict[str, Any]  # {"cookies": [...], "origins": [...]}
    version: int
    profile: str | None  # the named sign-in the browser started from (written back as it closes)
    url: str  # the page it was on, said to the model when it must open it again


class BrowserStates(ABC):
    @abstractmethod
    async def load(self, session_id: str, owner: str) -> SavedState | None:
        """The session's saved state, when `owner` is its user."""

    @abstractmethod
    async def version(self, session_id: str, owner: str) -> int:
        """The saved state's version (0: none)."""

    @abstractmethod
    async def save(self, session_id: str, owner: str, saved: SavedState) -> None: ...

    @abstractmethod
    async def forget(self, session_id: str, owner: str | None = None) -> None:
        """Drop the session's saved state (`owner` None: whoever's, as the session is deleted)."""


class InMemoryBrowserStates(BrowserStates):
    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], SavedState] = {}

    async def load(self, session_id: str, owner: str) -> SavedState | None:
        return self._rows.get((session_id, owner))

    async def version(self, session_id: str, owner: str) -> int:
        row = self._rows.get((session_id, owner))
        return row.version if row is not None else 0

    async def save(self, session_id: str, owner: str, saved: SavedState) -> None:
        self._rows[(session_id, owner)] = saved

    async def forget(self, session_id: str, owner: str | None = None) -> None:
        for key in [k for k in self._rows if k[0] == session_id and owner in (None, k[1])]:
            del self._rows[key]
