"""Running one batch of tool calls: checks, approval, the tool in its own task, events, results saved.

Secrets (`Tool.secret_arguments`: text typed into a password field) are taken out of the model's
reply before it is stored (`hide_secrets`): the stored call, every frame and the approval question
carry `SECRET_MARKER`; only the tool gets the value.

Each call: `tool_started` → checks (offered in this model call, arguments parsed, schema) → the
approval gate (`gate.py`: a call the policy says must ask waits for the user, who may decline) → the
tool runs in its own task while events a subagent inside it emits are forwarded and stop is watched →
intents the tool returned become events (`profile_switched`) → `tool_call` → the result saved to
both buffers (clipped in the context when long; the full text stays recallable).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Collection
from typing import Any, Protocol

from navi import redact
from navi.agent.compression.shorten import head_and_tail
from navi.agent.disclosure import schema_answer
from navi.agent.events import AgentEvent, ProfileSwitched, ToolEvent, ToolStarted
from navi.agent.gate import STOPPED, ApprovalGate, Verdict
from navi.agent.persistence import RunWriter
from navi.agent.run import RunState
from navi.llm.messages import Message, ToolCall, strip_data_uri
from navi.llm.meta import MessageMeta, ToolStatus
from navi.llm.tokens import estimate_message_tokens, estimate_messages_tokens
from navi.protocol import BrowserView
from navi.sessions.keys import recall_key
from navi.tools.base import Intent, SwitchProfile, ToolResult, masked_arguments
from navi.tools.registry import ToolRegistry, ToolView

EVENT_RESULT_MAX = 20_000
STDERR_KEPT = 4_000  # characters of a tool's stderr kept in its message's metadata


def kept_stderr(text: str, limit: int = STDERR_KEPT) -> str:
    """A tool's stderr as its stored message keeps it: credentials masked (`navi.redact`), and
    when long its start and end (where errors usually are), saying how much was left out."""
    text = redact.text(text)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half} characters left out] …\n{text[-half:]}"


class ToolLimits(Protocol):
    tool_result_max_chars: int  # longer results are clipped in the context (recallable in full)
    stop_grace_seconds: float  # how long a stopped tool gets to finish before its task is cancelled


class ToolRunner:
    def __init__(
        self, registry: ToolRegistry, writer: RunWriter, config: ToolLimits, gate: ApprovalGate | None = None
    ) -> None:
        self.registry = registry
        self.writer = writer
        self.config = config
        self.gate = gate  # None: no call asks (a runtime built without approvals)

    async def hide_secrets(
        self, run: RunState, reply: Message
    ) -> tuple[list[ToolCall], dict[str, frozenset[str]]]:
        """Before `reply` is stored: each call's secret arguments replaced by the marker in
        `reply` itself. Returns the calls as the model made them (for the tools) and, per call id,
        the names hidden."""
        real = list(reply.tool_calls)
        hidden: dict[str, frozenset[str]] = {}
        shown: list[ToolCall] = []
        seen: set[str] = set()
        for call in real:
            tool = run.tools.get(call.name)
            names = await _secret(tool, call.arguments, after=call.name in seen)
            seen.add(call.name)
            if names:
                hidden[call.id] = names
                call = call.model_copy(update={"arguments": masked_arguments(call.arguments, names)})
            shown.append(call)
        if hidden:
            reply.tool_calls = shown
        return real, hidden

    async def batch(
        self,
        run: RunState,
        calls: list[ToolCall],
        offered: ToolView,
        intents: list[Intent],
        listed: Collection[str] = (),
        results: list[ToolResult] | None = None,
        hidden: dict[str, frozenset[str]] | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the calls in order. Only the tools `offered` in this model call may run; what the
        tools ask of the loop (their intents) is collected in `intents`. `listed` of them were
        offered by name only: a call that does not fit such a tool's schema gets the schema back.
        `results` collects each call's result, for a caller that reads them (research). `hidden`:
        per call id, the arguments `hide_secrets` took out of the stored calls."""
        images: list[Message] = []
        for call in calls:
            outcome: dict[str, Any] = {}
            profile = next((i.profile_id for i in reversed(intents) if isinstance(i, SwitchProfile)), None)
            secret = (hidden or {}).get(call.id, frozenset())
            async for event in self._call(
                run, call, offered, outcome, profile or run.profile.id, listed, secret
            ):
                yield event
            result: ToolResult = outcome["result"]
            if results is not None:
                results.append(result)
            intents.extend(result.intents)
            display, context = self._result_messages(run, call, result, outcome["duration_ms"])
            await self.writer.save(run, display=[display], context=[context])
            run.grew(estimate_message_tokens(context))
            run.failures = 0 if result.success else run.failures + 1
            if result.success and result.metadata.get("is_image") and result.metadata.get("base64"):
                images.append(
                    Message.user(
                        f"[Image from {call.name}: {result.output[:200]}]",
                        images=[strip_data_uri(str(result.metadata["base64"]))],
                        metadata=MessageMeta(synthetic="image", tool_call_id=call.id),
                    )
                )
        if images:  # after all results: a user message between results would break tool pairing
            await self.writer.save(run, context=images)
            run.grew(estimate_messages_tokens(images))

    def _result_messages(
        self, run: RunState, call: ToolCall, result: ToolResult, duration_ms: float
    ) -> tuple[Message, Message]:
        status: ToolStatus = (
            "ok" if result.success else ("stopped" if result.metadata.get("stopped") else "error")
        )
        content = result.to_message_content()
        metadata = MessageMeta(status=status, duration_ms=duration_ms)
        stderr = result.metadata.get("stderr")
        if isinstance(stderr, str) and stderr:
            metadata.stderr = kept_stderr(stderr)
        if result.metadata.get("declined"):  # not run: the user said no ("user") or nobody answered
            metadata.declined = str(result.metadata["declined"])
        if view := _browser_view(call.name, result).get("browser"):
            metadata.page = {"url": view.url, "title": view.title}
        display = Message.tool(content, tool_call_id=call.id, name=call.name, metadata=metadata)
        limit = self.config.tool_result_max_chars
        if len(content) <= limit:
            return display, display
        run.ctx.full_texts[display.id] = content
        key = recall_key(display.id)
        context = display.model_copy(update={"content": head_and_tail(content, limit, key)})
        context.metadata = display.metadata.but(truncated_from=len(content), recall_key=key)
        return display, context

    async def _call(
        self,
        run: RunState,
        call: ToolCall,
        offered: ToolView,
        outcome: dict[str, Any],
        profile_id: str,
        listed: Collection[str] = (),
        secret: frozenset[str] = frozenset(),
    ) -> AsyncIterator[AgentEvent]:
        args = call.arguments if call.raw_arguments is None else {"_raw": call.raw_arguments}
        args = masked_arguments(args, secret)
        yield ToolStarted(tool=call.name, args=args, is_subagent=run.is_subagent, call_id=call.id)
        tool = offered.get(call.name)
        result = self._check(run, call, offered, listed)
        if result is None and (newly := await _secret(tool, call.arguments) - secret):
            # The call would put a secret where the stored reply already shows its value (a tool
            # that did not foresee what an earlier call of the batch changed): not run, and said so.
            result = ToolResult.fail(
                f"not run: {', '.join(sorted(newly))} would go into a secret field (a password "
                "field) that was not one when you made this call; read the page and call again"
            )
        if result is None and self.gate is not None:
            verdict = Verdict()
            facts = await _facts(tool, call.arguments)
            asked = call.model_copy(update={"arguments": args}) if secret else call
            async for event in self.gate.screen(run.ctx, asked, verdict, facts):
                yield event
            result = verdict.refusal
        started = time.perf_counter()  # the call's own time, not the wait for the user
        if result is None:
            sink: asyncio.Queue[Any] = asyncio.Queue()
            run.ctx.event_sink = sink
            task = asyncio.create_task(_invoke(tool, call.arguments))
            async for event in self._drain(task, sink, run.ctx.stop_event):
                yield event
            run.ctx.event_sink = None
            if task.cancelled():
                result = ToolResult.fail("stopped by the user while running", stopped=True)
            else:
                result = task.result()
                if not result.success and run.ctx.stopped:
                    result.metadata["stopped"] = True
        outcome["result"] = result
        outcome["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        shown = result.to_message_content()
        if len(shown) > EVENT_RESULT_MAX:
            extra = len(shown) - EVENT_RESULT_MAX
            shown = f"{shown[:EVENT_RESULT_MAX]}\n… ({extra} more characters in the history)"
        for intent in result.intents:  # the loop acts on them after the batch; clients hear now
            if isinstance(intent, SwitchProfile) and intent.profile_id != profile_id:
                profile_id = intent.profile_id
                yield ProfileSwitched(profile_id=intent.profile_id, profile_name=intent.profile_name)
        yield ToolEvent(
            tool=call.name,
            args=args,
            result=shown,
            success=result.success,
            is_subagent=run.is_subagent,
            call_id=call.id,
            **_browser_view(call.name, result),
        )

    def _check(
        self, run: RunState, call: ToolCall, offered: ToolView, listed: Collection[str] = ()
    ) -> ToolResult | None:
        """Why the call cannot run (as its result), or None when it may."""
        tool = offered.get(call.name)
        if run.ctx.stopped:
            return ToolResult.fail(STOPPED, stopped=True)
        if tool is None:
            available = ", ".join(offered.names) or "none"
            known = "is not available right now" if call.name in run.tools else "does not exist"
            return ToolResult.fail(f"the tool '{call.name}' {known}. Available tools: {available}")
        if offered.canonical(call.name) in listed and (
            call.arguments_error or self.registry.validation_error(tool, call.arguments)
        ):  # called by name without its schema: the schema, and the model calls again
            return ToolResult.ok(schema_answer(tool.spec()), loaded=[call.name])
        if call.arguments_error:
            return ToolResult.fail(
                f"{call.arguments_error}. The call was not run. Call {call.name} again with the arguments "
                f"as one JSON object that matches its schema. You sent: {(call.raw_arguments or '')[:500]}"
            )
        if problem := self.registry.validation_error(tool, call.arguments):
            return ToolResult.fail(f"{problem}. The call was not run; fix the arguments and try again.")
        return None

    async def _drain(
        self, task: asyncio.Task[ToolResult], sink: asyncio.Queue[Any], stop: asyncio.Event
    ) -> AsyncIterator[Any]:
        """Yield events the tool (or a subagent inside it) emits while it runs; watch for stop."""
        stop_wait = asyncio.ensure_future(stop.wait())
        try:
            while not task.done():
                getter = asyncio.ensure_future(sink.get())
                done, _ = await asyncio.wait({task, getter, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                else:
                    getter.cancel()
                if stop_wait in done and not task.done():
                    # Tools watch the stop event themselves (killing their processes); give them a moment.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(task), self.config.stop_grace_seconds)
                    if not task.done():
                        task.cancel()  # a tool task, never the run
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await task
                    break
            while not sink.empty():
                yield sink.get_nowait()
        finally:
            stop_wait.cancel()


def _browser_view(tool: str, result: ToolResult) -> dict[str, Any]:
    """The `browser` field of a browser call's `tool_call` frame (its page), when it left one."""
    view = result.metadata.get("browser")
    if tool != "browser" or not isinstance(view, dict):
        return {}
    try:
        return {"browser": BrowserView.model_validate(view)}
    except ValueError:  # not the shape the protocol promises: the frame goes without it
        return {}


async def _facts(tool: Any, args: dict[str, Any]) -> dict[str, Any] | None:
    """What the tool says about the call for the approval rules; None when it says nothing or
    fails to (the rules then assume the worst)."""
    try:
        facts = await tool.call_facts(args)
    except Exception:
        return None
    return facts if isinstance(facts, dict) else None


async def _secret(tool: Any, args: dict[str, Any], *, after: bool = False) -> frozenset[str]:
    """The arguments of the call the tool says are secret (none for no tool; a tool that fails to
    say hides every string argument but its action, to be safe)."""
    if tool is None:
        return frozenset()
    try:
        names = await tool.secret_arguments(args, after=after)
    except Exception:
        return frozenset(k for k, v in args.items() if isinstance(v, str) and k != "action")
    return frozenset(names)


async def _invoke(tool: Any, args: dict[str, Any]) -> ToolResult:
    try:
        result = await asyncio.wait_for(tool.execute(args), timeout=tool.timeout)
    except TimeoutError:
        return ToolResult.fail(f"{tool.name} timed out after {tool.timeout:g} s")
    except Exception as exc:  # a tool's failure becomes a failed result the model sees, never a crash
        return ToolResult.fail(f"{type(exc).__name__}: {exc}")
    if isinstance(result, ToolResult):
        return result
    return ToolResult.ok(str(result))
