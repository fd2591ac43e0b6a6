"""Acting on a session's run wherever it runs: stop, approvals, MCP servers' questions, waiting for
it to end, and the control messages other workers send this one.

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
from navi.logging import get_logger
from navi.mcp.elicitation import ElicitationInvalid, ElicitationNotFound, Elicitations, passed
from navi.protocol import ElicitationAction
from navi.runs.bus import Bus, Control
from navi.runs.slots import Slots

log = get_logger(__name__)


class Controls:
    """`approvals`: the agent's gate, where runs of this process wait for an answer (None: no
    tool ever waits). `elicitations`: where runs of this process wait for the user's answers to
    MCP servers' questions (None: no MCP server is configured)."""

    def __init__(
        self, slots: Slots, bus: Bus, approvals: ApprovalGate | None, elicitations: Elicitations | None = None
    ) -> None:
        self.slots = slots
        self.bus = bus
        self.approvals = approvals
        self.elicitations = elicitations
        self._tasks: set[asyncio.Task[None]] = set()

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
        elif message.get("k") == "elicit" and self.elicitations is not None:
            task = asyncio.get_running_loop().create_task(
                self._deliver(run.session_id, str(message.get("c")))
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _deliver(self, session_id: str, elicitation_id: str) -> None:
        """An answer another worker stored for a question a run of this one waits on: taken from its
        row and handed to the run (it was checked there against the question's form)."""
        assert self.elicitations is not None
        try:
            answer = await self.bus.take_answer(session_id, elicitation_id)
        except Exception as exc:  # the database is gone: the question waits for its timeout
            log.warning("runs.elicitation_answer_unreadable", session_id=session_id, error=str(exc))
            return
        if answer is None:
            return
        with contextlib.suppress(ElicitationNotFound, ElicitationInvalid):  # answered here meanwhile
            self.elicitations.answer(
                session_id, elicitation_id, answer.get("action", "cancel"), answer.get("content")
            )

    async def answer_question(
        self, session_id: str, elicitation_id: str, action: ElicitationAction, content: dict[str, Any] | None
    ) -> None:
        """Answer an MCP server's question a run of this session waits on, wherever it runs
        (`elicitation_resolved` follows as a run frame). `ElicitationNotFound` when none waits or it
        was answered already (the first answer counts); `ElicitationInvalid` when the content does
        not fit the form (the question keeps waiting)."""
        desk = self.elicitations
        if desk is not None and any(q.elicitation_id == elicitation_id for q in desk.waiting(session_id)):
            question = next(q for q in desk.waiting(session_id) if q.elicitation_id == elicitation_id)
            kept = passed(question.mode, question.requested_schema, action, content)  # before it is taken
            await self.bus.answer_question(session_id, elicitation_id, {"action": action, "content": kept})
            desk.answer(session_id, elicitation_id, action, content)
            return
        view = await self.bus.question(session_id, elicitation_id)
        if view is None:
            raise ElicitationNotFound(session_id, elicitation_id)
        kept = passed(str(view.get("mode")), view.get("requested_schema"), action, content)
        worker = await self.bus.answer_question(
            session_id, elicitation_id, {"action": action, "content": kept}
        )
        if worker is None or worker == self.slots.leases.worker:
            raise ElicitationNotFound(session_id, elicitation_id)
        await self.bus.send(worker, Control("elicit", session_id, call_id=elicitation_id))

    async def questions(self, session_id: str) -> list[dict[str, Any]]:
        """The MCP servers' questions a run of this session waits on, as `elicitation_required`
        describes them."""
        here = [] if self.elicitations is None else [q.view() for q in self.elicitations.waiting(session_id)]
        return here or await self.bus.questions(session_id)

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
