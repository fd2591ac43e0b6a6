"""Per-session working state, kept where every worker sees it: the todo list, the scratchpad, the
memory snapshot a session's prompt carries, and what compression learnt about the session.

Workers that share a database serve every session (docs/deploy.md), and a session's next turn may
run on another worker than its last: whatever a turn leaves for the next one is therefore stored,
not held in the process. A `SessionStateStore` keeps one JSON value per (session, name) —
`SqlSessionStateStore` (navi/storage/session_state.py) in the `session_state` table, whose rows go
with their session; `InMemorySessionStateStore` for runtimes without a database (and tests).

Subagents have their own session ids and no stored session: their state stays in the process that
runs them (a subagent runs where its parent's turn runs, start to end), and is dropped when they
finish. `SessionState` routes between the two by the run's `persistent` flag.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# The names a session's state is kept under.
TODO = "todo"
SCRATCHPAD = "scratchpad"
MEMORY = "memory"  # the memory summary frozen into the session's prompt, and the writes counted then
COMPRESSION = "compression"  # {"futile": tokens, "unsummarisable": true}

# `edit` in `SessionStateStore.change`: the current value (None: none) → the new one (None: delete
# it) and what `change` returns.
Edit = Callable[[Any], tuple[Any, T]]


def encode(value: Any) -> str:
    """A value as the JSON text stored (ASCII: no NUL or lone surrogate reaches the database)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


class SessionStateStore(ABC):
    """One JSON value (a list, an object, a string, a number) per session and name."""

    @abstractmethod
    async def get(self, session_id: str, name: str) -> Any:
        """The value, or None when there is none."""

    @abstractmethod
    async def put(self, session_id: str, name: str, value: Any) -> None:
        """Store `value` (None deletes it)."""

    @abstractmethod
    async def change(self, session_id: str, name: str, edit: Edit[T]) -> T:
        """Read, edit and write the value in one step: no other change to it comes in between (tool
        calls of one turn may run at once)."""

    @abstractmethod
    async def forget(self, session_id: str) -> None:
        """Drop every value of the session."""


class InMemorySessionStateStore(SessionStateStore):
    """The values in this process (stored as JSON text, so no caller holds a value another changes)."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, str]] = {}

    async def get(self, session_id: str, name: str) -> Any:
        text = self._data.get(session_id, {}).get(name)
        return None if text is None else json.loads(text)

    async def put(self, session_id: str, name: str, value: Any) -> None:
        self._set(session_id, name, value)

    async def change(self, session_id: str, name: str, edit: Edit[T]) -> T:
        text = self._data.get(session_id, {}).get(name)
        value, result = edit(None if text is None else json.loads(text))
        self._set(session_id, name, value)
        return result

    async def forget(self, session_id: str) -> None:
        self._data.pop(session_id, None)

    def sessions(self) -> list[str]:
        return list(self._data)

    def _set(self, session_id: str, name: str, value: Any) -> None:
        if value is not None:
            self._data.setdefault(session_id, {})[name] = encode(value)
            return
        values = self._data.get(session_id, {})
        values.pop(name, None)
        if not values:
            self._data.pop(session_id, None)


class SessionState:
    """Stored sessions' state in `shared` (the database, for every worker); the state of runs that
    store nothing (subagents) in this process."""

    def __init__(self, shared: SessionStateStore | None = None) -> None:
        self.local = InMemorySessionStateStore()
        self.shared = shared if shared is not None else InMemorySessionStateStore()

    def of(self, persistent: bool) -> SessionStateStore:
        """Where a run's state is kept: `persistent` — a stored session's run — in the shared store."""
        return self.shared if persistent else self.local

    async def forget(self, session_id: str) -> None:
        """A session ended (a subagent finished, a session was deleted): drop its state."""
        await self.local.forget(session_id)
        await self.shared.forget(session_id)

    def sessions(self) -> list[str]:
        """The runs that store nothing (subagents) whose state this process holds."""
        return self.local.sessions()
