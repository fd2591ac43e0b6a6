"""The approval gate: where a tool call that needs the user's consent waits for it.

The tool batch (`tool_batch.py`) asks the gate about each call after its checks (offered, arguments,
schema) and before the tool runs. For a call the policy (`approvals.py`) says must ask, and that no
remembered "always" covers, the gate yields `approval_required`, waits for the answer, the run's
stop or the timeout, and yields `approval_resolved`. A denial (or no answer in time) becomes the
call's failed result, which the model sees; a stop becomes "not run: stopped".

Answers come from outside the agent: the API layer calls `answer(session_id, call_id, decision)`
(a WebSocket `approval` frame or `POST /sessions/{id}/approvals/{call_id}`). The gate is built once by
the composition root and shared by the agent and the API, so the agent never imports the transport.
A subagent's calls wait under the session it works for (`RunContext.root_session`). A run nobody
can be asked in (`RunContext.unattended`, the OpenAI-compatible API) does not ask: its calls are
denied at once, or allowed when the setting that started it says so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog

from navi.agent.approvals import VERSIONED, ApprovalPolicy, Decision, Versioned, scope, subject
from navi.agent.events import AgentEvent, ApprovalRequired, ApprovalResolved
from navi.agent.grants import GrantStore, InMemoryGrantStore
from navi.llm.messages import ToolCall
from navi.runctx import RunContext
from navi.tools.base import ToolResult

log = structlog.stdlib.get_logger(__name__)

STOPPED = "not run: the user stopped the agent"
AnsweredBy = Literal["user", "timeout", "stop", "unattended"]


class ApprovalNotFound(LookupError):
    """An answer for a call that no run in this session is waiting for."""

    def __init__(self, session_id: str, call_id: str) -> None:
        super().__init__(
            f"no tool call {call_id!r} is waiting for approval in session {session_id} "
            "(it was answered already, or it never asked)"
        )


def _future() -> asyncio.Future[Decision]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class Pending:
    """One question waiting for its answer."""

    session_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    reason: str
    always_scope: str | None
    is_subagent: bool
    answer: asyncio.Future[Decision] = field(default_factory=_future)

    def view(self) -> dict[str, Any]:
        """What `GET /sessions/{id}/approvals` lists (the fields of its `approval_required`)."""
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "args": self.args,
            "reason": self.reason,
            "always_scope": self.always_scope,
            "is_subagent": self.is_subagent,
        }


@dataclass
class Verdict:
    """What the gate decided for one call: None lets it run, a result replaces running it."""

    refusal: ToolResult | None = None


class ApprovalGate:
    def __init__(self, policy: ApprovalPolicy | None = None, grants: GrantStore | None = None) -> None:
        self.policy = policy or ApprovalPolicy()
        self.grants = grants or InMemoryGrantStore()
        self._pending: dict[tuple[str, str], Pending] = {}

    def waiting(self, session_id: str) -> list[Pending]:
        """The questions a session's run is waiting on (at most one, as calls run one by one)."""
        return [p for (sid, _), p in self._pending.items() if sid == session_id]

    def answer(self, session_id: str, call_id: str, decision: Decision) -> None:
        """Deliver the user's answer; `ApprovalNotFound` when nothing waits for it."""
        pending = self._pending.get((session_id, call_id))
        if pending is None or pending.answer.done():
            raise ApprovalNotFound(session_id, call_id)
        pending.answer.set_result(decision)

    async def screen(self, ctx: RunContext, call: ToolCall, verdict: Verdict) -> AsyncIterator[AgentEvent]:
        """Ask the user about `call` if the policy says so; the outcome goes into `verdict`."""
        refused = self.policy.refusal(call.name)
        if refused is not None:  # nobody is asked: the configuration already answered
            verdict.refusal = ToolResult.fail(refused)
            return
        reason = self.policy.reason(call.name, call.arguments)
        if reason is None:
            return
        versioned = self._versioned(ctx.owner, call)
        remembered: str | None
        always: str | None
        if versioned is not None:
            remembered, always = versioned.subject, versioned.scope
            reason = f"{reason}; {versioned.note}" if versioned.note else reason
        else:
            remembered = subject(call.name, call.arguments)
            always = scope(call.name, remembered)
        if remembered is not None and await self._granted(ctx.owner, call.name, remembered):
            return
        if ctx.unattended == "allow":  # the setting that started this run said so
            log.info("approval.unattended", tool=call.name, call_id=call.id, decision="allow")
            return
        if ctx.unattended == "deny":  # nobody to ask: no question, no waiting for the timeout
            log.info("approval.unattended", tool=call.name, call_id=call.id, decision="deny")
            yield ApprovalResolved(
                call_id=call.id, decision="deny", by="unattended", is_subagent=ctx.is_subagent
            )
            verdict.refusal = ToolResult.fail(
                f"this {call.name} call needs the user's approval ({reason}), and nobody can be asked "
                "during this request, so it was not run. Do not try to get the same effect another "
                "way: tell the user what you wanted to do and why, so they can do it or allow it.",
                declined="unattended",
            )
            return
        pending = Pending(
            session_id=ctx.root_session,
            call_id=call.id,
            tool=call.name,
            args=call.arguments,
            reason=reason,
            always_scope=always,
            is_subagent=ctx.is_subagent,
        )
        key = (pending.session_id, pending.call_id)
        self._pending[key] = pending
        try:
            yield ApprovalRequired(**pending.view())
            decision, by = await self._wait(pending, ctx.stop_event)
        finally:
            if self._pending.get(key) is pending:
                del self._pending[key]
        if decision == "always" and remembered is None:
            decision = "allow"  # nothing to remember it by: this call only
        if decision == "always" and remembered is not None:
            await self._remember(ctx.owner, call.name, remembered)
        log.info("approval.resolved", tool=call.name, call_id=call.id, decision=decision, by=by)
        yield ApprovalResolved(call_id=call.id, decision=decision, by=by, is_subagent=ctx.is_subagent)
        if by == "stop":
            verdict.refusal = ToolResult.fail(STOPPED, stopped=True)
        elif by == "timeout":
            verdict.refusal = ToolResult.fail(
                f"the user did not answer within {self.policy.timeout_seconds:g} s whether to run this "
                f"{call.name} call, so it was not run. Tell the user what you wanted to do and why, "
                "and let them ask again.",
                declined="timeout",
            )
        elif decision == "deny":
            verdict.refusal = ToolResult.fail(
                f"the user declined to run this {call.name} call; it was not run. Do not try to get "
                "the same effect another way: carry on without it, or ask the user what they want.",
                declined="user",
            )

    async def _wait(self, pending: Pending, stop: asyncio.Event) -> tuple[Decision, AnsweredBy]:
        stopped = asyncio.ensure_future(stop.wait())
        either: set[asyncio.Future[Any]] = {pending.answer, stopped}
        try:
            await asyncio.wait(
                either,
                timeout=self.policy.timeout_seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            stopped.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stopped
        if stop.is_set():
            return "deny", "stop"
        if pending.answer.done():
            return pending.answer.result(), "user"
        pending.answer.cancel()  # a late answer finds nothing waiting
        return "deny", "timeout"

    def _versioned(self, owner: str, call: ToolCall) -> Versioned | None:
        if call.name not in VERSIONED:
            return None
        try:
            return self.policy.versioned(owner, call.name, call.arguments)
        except Exception as exc:  # nothing to remember it by: the call asks, this time only
            log.warning("approval.version_unknown", tool=call.name, error=str(exc))
            return None

    async def _granted(self, owner: str, tool: str, remembered: str) -> bool:
        try:
            return await self.grants.is_granted(owner, tool, remembered)
        except Exception as exc:  # an unreadable store means asking, never running unasked
            log.warning("approval.grants_unreadable", error=str(exc))
            return False

    async def _remember(self, owner: str, tool: str, remembered: str) -> None:
        try:
            await self.grants.grant(owner, tool, remembered)
        except Exception as exc:  # the answer still holds for this call
            log.warning("approval.grant_not_saved", tool=tool, error=str(exc))
