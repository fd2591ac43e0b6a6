"""The recent sessions' contexts a session store keeps parsed, tagged with their `context_rev`
(navi/storage/sessions.py): a read that finds the same revision reuses the messages."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from navi.llm.messages import Message


class ContextCache:
    """LRU of (context_rev, messages) per session; used from worker threads, hence the lock."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[int, list[Message]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session_id: str, rev: int) -> list[Message] | None:
        with self._lock:
            hit = self._items.get(session_id)
            if hit is None or hit[0] != rev:
                return None
            self._items.move_to_end(session_id)
            return list(hit[1])

    def put(self, session_id: str, rev: int, messages: list[Message]) -> None:
        with self._lock:
            self._items[session_id] = (rev, list(messages))
            self._items.move_to_end(session_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def extend(self, session_id: str, old_rev: int, new_rev: int, added: Sequence[Message]) -> None:
        with self._lock:
            hit = self._items.get(session_id)
            if hit is not None and hit[0] == old_rev:
                self._items[session_id] = (new_rev, [*hit[1], *added])
            else:
                self._items.pop(session_id, None)

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._items.pop(session_id, None)
