"""Who follows the runs of a session in this process, and the runs they follow that run elsewhere.

Each open connection watches its session (`watch`): whenever a run starts there — in this process,
or (through a shared bus) in another worker — the connection is handed the run and follows it.
A run of another worker is a `RemoteRun`, one per run for all of this process's followers, made
when it is first wanted and let go once nobody follows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from navi.runs.bus import Bus
from navi.runs.leases import Leases
from navi.runs.remote import RemoteRun
from navi.runs.run import AgentRun

Followable = AgentRun | RemoteRun
Watcher = Callable[[Followable], None]


class Followers:
    def __init__(self, leases: Leases, bus: Bus) -> None:
        self.leases = leases
        self.bus = bus
        self._watchers: dict[str, set[Watcher]] = {}
        self._remote: dict[str, RemoteRun] = {}  # run id → a run of another worker followed here
        self._closing: set[asyncio.Task[None]] = set()

    async def watch(self, session_id: str, callback: Watcher) -> None:
        """Call `callback(run)` whenever a run starts in this session (each connected client)."""
        first = session_id not in self._watchers
        self._watchers.setdefault(session_id, set()).add(callback)
        if first:
            await self.bus.watch(session_id)

    async def unwatch(self, session_id: str, callback: Watcher) -> None:
        watchers = self._watchers.get(session_id)
        if watchers is None or callback not in watchers:
            return
        watchers.discard(callback)
        if not watchers:
            del self._watchers[session_id]
            await self.bus.unwatch(session_id)

    def count(self, session_id: str) -> int:
        return len(self._watchers.get(session_id, ()))

    def started(self, run: Followable) -> None:
        for callback in list(self._watchers.get(run.session_id, ())):
            callback(run)

    async def current(self, session_id: str) -> RemoteRun | None:
        """The turn of this session another worker runs, when the bus lets this process follow it."""
        if not self.bus.shared:
            return None
        lease = await self.leases.holder(session_id)
        if lease is None or lease.worker == self.leases.worker or lease.kind != "turn":
            return None
        return self._remote_run(session_id, lease.run_id, lease.worker)

    async def kept(self, session_id: str, run_id: str) -> RemoteRun | None:
        """A run of this session that ran on any worker and ended, while the bus keeps its frames
        (`RUN_EVENTS_KEEP_SECONDS`): a client that lost its socket near the end of a turn gets what
        it missed. None without a shared bus, or for a run of another session."""
        if not self.bus.shared or await self.bus.kept(run_id) != session_id:
            return None
        return self._remote_run(session_id, run_id, "")

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

    # --- what the bus announces ----------------------------------------------------------------------
    def remote_started(self, session_id: str, run_id: str, worker: str) -> None:
        if worker == self.leases.worker or session_id not in self._watchers:
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
