"""Per-session working state for tools (todo lists, scratchpads), kept in memory by session id.

As in the reference, this state lives for the process, not in the database: it is a workspace for
the current task. Subagents have their own session ids, so their state is their own; the agent
drops a subagent's state when it finishes, and a session's when the session is deleted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


class SessionState:
    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = defaultdict(dict)

    def bucket(self, session_id: str, name: str, default: Any) -> Any:
        return self._data[session_id].setdefault(name, default)

    def forget(self, session_id: str) -> None:
        self._data.pop(session_id, None)

    def sessions(self) -> list[str]:
        return list(self._data)
