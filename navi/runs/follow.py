"""Following runs: the one way anything in this process reads a run's frames, wherever it runs.

`Followers.follow(session_id, since, run_id)` finds the run — the session's current one, or the
one named — and subscribes to it: a run of this process (`AgentRun`, from the slots), else,
through a bus that carries frames (PostgreSQL), a run of another worker (`RemoteRun`: its rows and
announcements). Both are `Followable` and hand out the same `Subscriber`; `LocalBus` finds no run
elsewhere, so with one process the same call follows the process's own runs only.

A client that follows a session rather than one run (a page's socket) `watch`es it: the run it
saw before a reconnect (what it missed, while its frames are kept), the current one, then every
run that starts there, here or on another worker, into the client's queue, each once. A run of
another worker is one `RemoteRun` for all of this process's followers, made when it is first
wanted and let go once nobody follows it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from navi.runs.bus import Bus
from navi.runs.remote import RemoteRun
from navi.runs.run import Followable, Subscriber, is_run_id
from navi.runs.slots import Slots


@dataclass(eq=False)
class Watch:
    """A client following a session: every run there delivers its frames into `queue`."""

    session_id: str
    queue: asyncio.Queue[Any]
    subs: dict[str, Subscriber] = field(default_factory=dict)  # run id → its subscriber, until it ends


class Followers:
    def __init__(self, slots: Slots, bus: Bus) -> None:
        self.slots = slots  # this process's runs
        self.bus = bus
        self._watches: dict[str, set[Watch]] = {}
        self._remote: dict[str, RemoteRun] = {}  # run id → a run of another worker followed here
        self._closing: set[asyncio.Task[None]] = set()

    # --- one run -----------------------------------------------------------------------------------
    async def follow(
        self,
        session_id: str,
        since: int = 0,
        run_id: str | None = None,
        *,
        queue: asyncio.Queue[Any] | None = None,
        typed: bool = False,
    ) -> Subscriber | None:
        """Follow the session's current run (or run `run_id` of it, going or ended while its frames
        are kept), wherever it runs, from frame `since` on: its frames go into `queue` (a new one by
        default; the events with `typed`), then the subscriber as the end marker. None when there
        is no such run. `close()` the subscriber to stop early."""
        run = await self.find(session_id, run_id)
        return None if run is None else run.subscribe(since, queue, typed=typed)

    async def find(self, session_id: str, run_id: str | None = None) -> Followable | None:
        """The session's current run (or run `run_id` of it): this process's, else another
        worker's, when the bus lets this process follow it."""
        here = self.slots.get(session_id) if run_id is None else self.slots.kept(session_id, run_id)
        if here is not None or not self.bus.shared:
            return here
        if run_id is not None:  # going or ended, while the bus keeps its frames
            if await self.bus.kept(run_id) != session_id:
                return None
            return self._remote_run(session_id, run_id, "")
        lease = await self.slots.leases.holder(session_id)
        if lease is None or lease.worker == self.slots.leases.worker or lease.kind != "turn":
            return None
        return self._remote_run(session_id, lease.run_id, lease.worker)

    # --- a session -------------------------------------------------------------------------------
    async def watch(
        self, session_id: str, queue: asyncio.Queue[Any], since: int = 0, seen_run: str | None = None
    ) -> Watch:
        """Follow the session into `queue` until `unwatch`: its current run, then every run that
        starts there. `since` counts frames of `seen_run` when given (a client that reconnects):
        if that run has ended meanwhile, what the client missed of it comes first, then the whole
        of the current one."""
        watch = Watch(session_id, queue)
        first = session_id not in self._watches
        self._watches.setdefault(session_id, set()).add(watch)
        try:
            if first:
                await self.bus.watch(session_id)
            current = await self.find(session_id)
            if seen_run and since and is_run_id(seen_run) and (current is None or seen_run != current.run_id):
                missed = await self.find(session_id, seen_run)
                if missed is not None:
                    self._into(watch, missed, since)
            if current is not None:
                same_run = seen_run is None or seen_run == current.run_id
                self._into(watch, current, since if same_run else 0)
        except BaseException:
            await self.unwatch(watch)
            raise
        return watch

    async def unwatch(self, watch: Watch) -> None:
        for sub in list(watch.subs.values()):
            sub.close()
        watches = self._watches.get(watch.session_id)
        if watches is None or watch not in watches:
            return
        watches.discard(watch)
        if not watches:
            del self._watches[watch.session_id]
            await self.bus.unwatch(watch.session_id)

    def count(self, session_id: str) -> int:
        """How many clients watch this session: each open connection once, none after it closed."""
        return len(self._watches.get(session_id, ()))

    def started(self, run: Followable) -> None:
        """A run started in a session: every client watching it follows it."""
        for watch in list(self._watches.get(run.session_id, ())):
            self._into(watch, run, 0)

    def _into(self, watch: Watch, run: Followable, since: int) -> None:
        if run.run_id in watch.subs:
            return  # announced and found at once (a run of another worker): followed once
        sub = run.subscribe(since, watch.queue)
        leave = sub.leave

        def left(sub: Subscriber) -> None:
            if watch.subs.get(sub.run_id) is sub:
                del watch.subs[sub.run_id]
            if leave is not None:
                leave(sub)

        sub.leave = left
        watch.subs[run.run_id] = sub

    # --- runs of other workers -----------------------------------------------------------------------
    def _remote_run(self, session_id: str, run_id: str, worker: str) -> RemoteRun:
        remote = self._remote.get(run_id)
        if remote is None:
            remote = RemoteRun(session_id, run_id, worker, self.bus)
            remote.on_idle = self._idle
            self._remote[run_id] = remote
            remote.start()
        return remote

    def _idle(self, remote: RemoteRun) -> None:
        if remote.subscribers and not remote.ended:
            return
        if self._remote.get(remote.run_id) is remote:
            del self._remote[remote.run_id]
        task = asyncio.get_running_loop().create_task(remote.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def remote_started(self, session_id: str, run_id: str, worker: str) -> None:
        if worker == self.slots.leases.worker or session_id not in self._watches:
            return
        self.started(self._remote_run(session_id, run_id, worker))

    def remote_frame(self, run_id: str, seq: int, frame: dict[str, Any] | None, end: bool) -> None:
        remote = self._remote.get(run_id)
        if remote is not None:
            remote.announce(seq, frame, end)

    def resync(self) -> None:
        for remote in list(self._remote.values()):
            remote.resync()

    async def close(self) -> None:
        for remote in list(self._remote.values()):
            await remote.close()
        self._remote.clear()
