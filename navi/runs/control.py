"""What the run manager answers besides starting runs: following a session's runs, approvals,
stop, waiting for a run, and the control messages and frames other workers send this one.

`RunControls` is the part of `RunManager` (navi/runs/manager.py) that reads its runs and leases
without starting anything; it holds no state of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from navi.agent.approvals import Decision
from navi.agent.engine import Agent
from navi.agent.gate import ApprovalNotFound
from navi.runs.bus import Bus, Control
from navi.runs.feed import SessionFeed
from navi.runs.follow import Followable, Followers, Watcher
from navi.runs.leases import Leases
from navi.runs.run import AgentRun


class RunControls:
    agent: Agent
    leases: Leases
    bus: Bus
    feed: SessionFeed
    followers: Followers
    _runs: dict[str, AgentRun]
    _kept: dict[str, tuple[AgentRun, float]]  # run id → an ended run of this process, and when it ended

    def control(self, message: dict[str, Any]) -> None:
        """A control message another worker sent this one (`Control.payload`)."""
        run = self._runs.get(str(message.get("s")))
        if run is None or (message.get("r") and message.get("r") != run.run_id):
            return
        if message.get("k") == "stop":
            run.stop_event.set()
        elif message.get("k") == "approve" and self.agent.approvals is not None:
            with contextlib.suppress(ApprovalNotFound):
                decision = cast(Decision, message.get("d"))
                self.agent.approvals.answer(run.session_id, str(message.get("c")), decision)

    def remote_started(self, session_id: str, run_id: str, worker: str) -> None:
        self.followers.remote_started(session_id, run_id, worker)

    def remote_frame(self, run_id: str, seq: int, frame: dict[str, Any] | None, end: bool) -> None:
        self.followers.remote_frame(run_id, seq, frame, end)

    def resync(self) -> None:
        self.followers.resync()

    def feed_note(self, note: dict[str, Any]) -> None:
        self.feed.remote(note)

    # --- following -------------------------------------------------------------------------------
    async def watch(self, session_id: str, callback: Watcher) -> None:
        """Call `callback(run)` whenever a run starts in this session, here or on another worker."""
        await self.followers.watch(session_id, callback)

    async def unwatch(self, session_id: str, callback: Watcher) -> None:
        await self.followers.unwatch(session_id, callback)

    def watchers(self, session_id: str) -> int:
        """How many clients watch this session: each open connection once, none after it closed."""
        return self.followers.count(session_id)

    def get(self, session_id: str) -> AgentRun | None:
        """The run of this session in this process, if any."""
        return self._runs.get(session_id)

    def active(self) -> list[str]:
        """The sessions with a run in this process."""
        return list(self._runs)

    async def current(self, session_id: str) -> Followable | None:
        """The run of this session to follow, wherever it runs (another worker's through a bus
        that carries its frames)."""
        return self._runs.get(session_id) or await self.followers.current(session_id)

    async def ended_run(self, session_id: str, run_id: str) -> Followable | None:
        """A run of this session that has ended, while its frames are kept (`RUN_EVENTS_KEEP_SECONDS`):
        one of this process, else one the shared bus keeps."""
        kept = self._kept.get(run_id)
        if kept is not None and kept[0].session_id == session_id:
            return kept[0]
        return await self.followers.kept(session_id, run_id)

    async def busy(self) -> set[str]:
        """The sessions with a run going, in any process on the database."""
        held = {lease.session_id for lease in await self.leases.held()}
        return held | set(self._runs)

    async def is_busy(self, session_id: str) -> bool:
        return session_id in self._runs or await self.leases.holder(session_id) is not None

    async def approve(self, session_id: str, call_id: str, decision: Decision) -> None:
        """Answer the approval a run of this session waits on, wherever it runs (`approval_resolved`
        follows as a run frame, so every client sees it answered); `ApprovalNotFound` when none
        waits, or it was answered already (the first answer counts)."""
        gate = self.agent.approvals
        if gate is not None and any(p.call_id == call_id for p in gate.waiting(session_id)):
            await self.bus.claim(session_id, call_id)  # so no other worker takes an answer too
            gate.answer(session_id, call_id, decision)
            return
        worker = await self.bus.claim(session_id, call_id)
        if worker is None or worker == self.leases.worker:
            raise ApprovalNotFound(session_id, call_id)
        await self.bus.send(worker, Control("approve", session_id, call_id=call_id, decision=decision))

    async def waiting(self, session_id: str) -> list[dict[str, Any]]:
        """The approvals a run of this session waits on, as `approval_required` describes them."""
        here = (
            []
            if self.agent.approvals is None
            else [p.view() for p in self.agent.approvals.waiting(session_id)]
        )
        return here or await self.bus.waiting(session_id)

    async def stop(self, session_id: str) -> bool:
        """Stop the session's run, wherever it runs; False when there is none (or it runs in a
        process this one cannot reach)."""
        run = self._runs.get(session_id)
        if run is not None:
            run.stop_event.set()
            return True
        holder = await self.leases.holder(session_id)
        if holder is None or holder.worker == self.leases.worker:
            return False
        return await self.bus.send(holder.worker, Control("stop", session_id, holder.run_id))

    async def wait(self, session_id: str, limit: float | None = None) -> None:
        """Until the session's run has ended (at most `limit` seconds), wherever it runs."""
        run = self._runs.get(session_id)
        if run is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.finished.wait(), limit)
            return
        deadline = None if limit is None else asyncio.get_running_loop().time() + limit
        while await self.leases.holder(session_id) is not None:
            if deadline is not None and asyncio.get_running_loop().time() > deadline:
                return
            await asyncio.sleep(0.05)
