"""A run that executes in another Navi process, followed from this one.

Its frames come from the database (the run's rows in `run_events`, written by its own worker)
and then live, as that worker announces them (`navi/runs/pg.py`). A `RemoteRun` keeps the frames
it has seen, in order and without gaps, so any number of this process's connections can follow it
from any sequence number, exactly like a run of this process (`AgentRun`; both are `Followable`):
`subscribe(since, queue)` delivers the frames after `since` into the queue (read back into events
with `typed`), then the live ones, then the subscriber itself as the end marker.

Announcements are applied one at a time by one task: a frame whose predecessor was not seen (its
announcement carried no frame because it was too large, or arrived before the catch-up read) is
read from the database with everything missing before it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

import structlog

from navi.protocol import parse_server_frame
from navi.runs.run import Subscriber

log = structlog.stdlib.get_logger(__name__)

RESYNC = -1  # an announcement that only says: read the table again


class Source(Protocol):
    """Where a run of another worker is read from (the bus)."""

    async def fetch(self, run_id: str, after: int) -> list[tuple[int, dict[str, Any] | None]]:
        """(seq, frame or None for the end of the run) of `run_id` after seq `after`."""
        ...

    async def follow(self, run_id: str) -> None: ...

    async def unfollow(self, run_id: str) -> None: ...


def _as(sub: Subscriber, frame: dict[str, Any]) -> Any:
    """The frame as `sub` takes it: JSON, or read back into its event (`typed`)."""
    return parse_server_frame(frame) if sub.typed else frame


class RemoteRun:
    def __init__(self, session_id: str, run_id: str, worker: str, source: Source) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.worker = worker
        self.frames: list[dict[str, Any]] = []
        self.ended = False
        self.subscribers: dict[Subscriber, int] = {}  # subscriber → the last seq it already had
        self._source = source
        self._following = False
        self._inbox: asyncio.Queue[tuple[int, dict[str, Any] | None, bool]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.on_idle: Callable[[RemoteRun], None] | None = None  # no subscriber left

    def start(self) -> None:
        self._task = asyncio.create_task(self._pump())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._following:
            self._following = False
            with contextlib.suppress(Exception):
                await self._source.unfollow(self.run_id)
        self._end()

    # --- what followers see ----------------------------------------------------------------------
    def subscribe(
        self, since: int = 0, queue: asyncio.Queue[Any] | None = None, *, typed: bool = False
    ) -> Subscriber:
        sub = Subscriber(queue, typed=typed) if queue is not None else Subscriber(typed=typed)
        sub.run_id, sub.leave = self.run_id, self.unsubscribe
        for frame in self.frames[since:]:
            sub.put(_as(sub, frame))
        if self.ended:
            sub.end()
        else:
            self.subscribers[sub] = max(since, len(self.frames))
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.pop(sub, None)
        if not self.subscribers and self.on_idle is not None:
            self.on_idle(self)

    # --- what its worker announces -----------------------------------------------------------------
    def announce(self, seq: int, frame: dict[str, Any] | None, end: bool = False) -> None:
        """An announcement from the run's worker: frame `seq` (None: read it from the database),
        or with `end`, that `seq` is the end of the run."""
        self._inbox.put_nowait((seq, frame, end))

    def resync(self) -> None:
        """Announcements may have been missed: read the table again."""
        self._inbox.put_nowait((RESYNC, None, False))

    async def _pump(self) -> None:
        try:
            await self._source.follow(self.run_id)  # announcements from here on, then what came before
            self._following = True
            await self._catch_up()
            while not self.ended:
                seq, frame, end = await self._inbox.get()
                if seq != RESYNC and seq <= len(self.frames) and not end:
                    continue  # seen already (in the catch-up read)
                if end or frame is None or seq != len(self.frames) + 1:
                    await self._catch_up()
                else:
                    self._append(frame)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database went away: followers end, and reconnect
            log.warning("runs.remote_follow_failed", run_id=self.run_id, error=str(exc))
            self._end()

    async def _catch_up(self) -> None:
        for seq, frame in await self._source.fetch(self.run_id, len(self.frames)):
            if frame is None:
                self._end()
                return
            if seq == len(self.frames) + 1:
                self._append(frame)

    def _append(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        seq = len(self.frames)
        for sub, had in list(self.subscribers.items()):
            if seq > had:
                sub.put(_as(sub, frame))
                self.subscribers[sub] = seq

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        for sub in list(self.subscribers):
            sub.end()
        self.subscribers.clear()
        if self.on_idle is not None:
            self.on_idle(self)
