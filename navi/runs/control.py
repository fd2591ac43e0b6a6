"""Acting on a session's run wherever it runs: stop, approvals, waiting for it to end, and the control
messages other workers send this one.

`Controls` reads the slots (`slots.py`: this process's runs and the leases) and reaches a run of
another worker through the bus (`Control` by NOTIFY; approvals as rows any worker answers). It
starts nothing and holds no state of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from navi.agent.approvals import Decision
from navi.agent.gate import ApprovalGate, ApprovalNotFound
from navi.runs.bus import Bus, Control
from navi.runs.slots import Slots


class Controls:
    """`approvals`: the agent's gate, where runs of this process wait for an answer (None: no
    tool ever waits)."""

    def __init__(self, slots: Slots, bus: Bus, approvals: ApprovalGate | None) -> None:
        self.slots = slots
        self.bus = bus
        self.approvals = approvals

    def received(self, message: dict[str, Any]) -> None:
        """A control message another worker sent this one (`Control.payload`)."""
        run = self.slots.get(str(message.get("s")))
        if run is None or (message.get("r") and message.get("r") != run.run_id):
            return
        if message.get("k") == "stop":
            run.stop_event.set()
        elif message.get("k") == "approve" and self.approvals is not None:
            with contextlib.suppress(ApprovalNotFound):
                decision = cast(Decision, message.get("d"))
                self.approvals.answer(run.session_id, str(message.get("c")), decision)

    async def approve(self, session_id: str, call_id: str, decision: Decision) -> None:
        """Answer the approval a run of this session waits on, wherever it runs (`approval_resolved`
        follows as a run frame, so every client sees it answered); `ApprovalNotFound` when none
        waits, or it was answered already (the first answer counts)."""
        gate = self.approvals
        if gate is not None and any(p.call_id == call_id for p in gate.waiting(session_id)):
            await self.bus.claim(session_id, call_id)  # so no other worker takes an answer too
            gate.answer(session_id, call_id, decision)
            return
        worker = await self.bus.claim(session_id, call_id)
        if worker is None or worker == self.slots.leases.worker:
            raise ApprovalNotFound(session_id, call_id)
        await self.bus.send(worker, Control("approve", session_id, call_id=call_id, decision=decision))

    async def waiting(self, session_id: str) -> list[dict[str, Any]]:
        """The approvals a run of this session waits on, as `approval_required` describes them."""
        here = [] if self.approvals is None else [p.view() for p in self.approvals.waiting(session_id)]
        return here or await self.bus.waiting(session_id)

    async def stop(self, session_id: str) -> bool:
        """Stop the session's run, wherever it runs; False when there is none (or it runs in a
        process this one cannot reach)."""
        run = self.slots.get(session_id)
        if run is not None:
            run.stop_event.set()
            return True
        holder = await self.slots.leases.holder(session_id)
        if holder is None or holder.worker == self.slots.leases.worker:
            return False
        return await self.bus.send(holder.worker, Control("stop", session_id, holder.run_id))

    async def wait(self, session_id: str, limit: float | None = None) -> None:
        """Until the session is no longer busy (`Slots.busy`: its run, wherever it runs, has let go
        of it), at most `limit` seconds."""
        run = self.slots.get(session_id)
        if run is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.finished.wait(), limit)
            return
        deadline = None if limit is None else asyncio.get_running_loop().time() + limit
        while await self.slots.busy(session_id):
            if deadline is not None and asyncio.get_running_loop().time() > deadline:
                return
            await asyncio.sleep(0.05)
