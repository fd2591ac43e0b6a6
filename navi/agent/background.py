"""Work that must not hold a run open (naming a session in the background): best effort, logged
when it fails, and awaited on shutdown (`settle`)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from navi.logging import get_logger

log = get_logger(__name__)


class BackgroundWork:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[None]:
        task = asyncio.create_task(_guarded(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def settle(self) -> None:
        """Wait until no background work is left (work may start more)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


async def _guarded(coro: Coroutine[Any, Any, Any]) -> None:
    try:
        await coro
    except Exception as exc:  # background work is best effort
        log.warning("background.failed", error=str(exc))
