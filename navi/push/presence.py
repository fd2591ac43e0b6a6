"""Which of a user's pages the person can see: each open page (a WebSocket) reports its
visibility when it connects, when it changes, and every `REPORT_SECONDS` while it stays open.

A page that has said nothing for `FRESH_SECONDS` counts as not visible, so the pages of a worker
that died (their sockets never said goodbye) stop holding notifications back. The SQL store
(`navi/storage/presence.py`) keeps the rows in the database with the database's clock, so every
worker answers "is any page of this user visible" the same way."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

REPORT_SECONDS = 30  # the page's own rhythm (navi/web/static/js/socket.js)
FRESH_SECONDS = 90


class Presence(ABC):
    @abstractmethod
    async def seen(self, page_id: str, owner: str, visible: bool) -> None:
        """The page `page_id` of `owner` is open, and visible or not."""

    @abstractmethod
    async def gone(self, page_id: str) -> None:
        """The page closed its socket."""

    @abstractmethod
    async def visible(self, owner: str) -> bool:
        """Whether any page of `owner` is open and visible now."""


@dataclass
class _Page:
    owner: str
    visible: bool
    seen_at: float


class InMemoryPresence(Presence):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._pages: dict[str, _Page] = {}

    async def seen(self, page_id: str, owner: str, visible: bool) -> None:
        self._pages[page_id] = _Page(owner, visible, self.clock())

    async def gone(self, page_id: str) -> None:
        self._pages.pop(page_id, None)

    async def visible(self, owner: str) -> bool:
        fresh = self.clock() - FRESH_SECONDS
        return any(p.owner == owner and p.visible and p.seen_at >= fresh for p in self._pages.values())
