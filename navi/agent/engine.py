"""The agent loop: one async generator over plan → model call → tools → … → answer.

`run_stream()` drives a persistent session and yields `AgentEvent`s; `run()` is the same loop
without planning, returning the answer; `run_ephemeral()` is a subagent with no persistence whose
events reach the parent run through its event sink, flagged `is_subagent`.

Every message is written as soon as it is complete (user message, plan, each assistant turn, each
tool result), so a crash loses at most the one in flight. Stop is cooperative and reaches every
phase: every model call and lookup goes through a `GuardedBackend` bound to the run's stop event
(closing the stream and its HTTP request), and tools are watched while they run; a run is never
cancelled. Every model call is bounded: a token cap per kind of call, and first-token and idle
timeouts. While no token flows, `status` events say what Navi is doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from navi import runctx
from navi.agent.compression import partition
from navi.agent.context import build_context, system_text
from navi.agent.events import (
    AgentEvent,
    ErrorEvent,
    Notice,
    PlanReady,
    ProfileSwitched,
    Status,
    StreamEnd,
    StreamStopped,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolEvent,
    ToolStarted,
    TurnThinking,
)
from navi.agent.planning import run_planning
from navi.agent.windows import ContextWindows
from navi.agent.workers import (
    CompressionFailed,
    ContextCompressor,
    Worker,
    WorkerContext,
    condense_budget,
    summary_failed,
)
from navi.llm import text_tools
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.calls import CallLimits, CallStopped, GuardedBackend
from navi.llm.chunks import CompletionBuilder
from navi.llm.chunks import TextDelta as TextChunk
from navi.llm.chunks import ThinkingDelta as ThinkingChunk
from navi.llm.errors import ContextOverflow, LLMError
from navi.llm.messages import Message, ToolCall, ToolSpec, strip_data_uri
from navi.llm.registry import BackendRegistry
from navi.llm.tokens import estimate_message_tokens, estimate_messages_tokens, estimate_tokens
from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry
from navi.sessions.models import Session
from navi.sessions.store import SessionNotFound, SessionStore
from navi.tools.base import Intent, SwitchProfile, ToolResult
from navi.tools.registry import ToolRegistry, ToolView

log = structlog.stdlib.get_logger(__name__)

FAILURE_NOTE = (
    "Several tool calls in a row have failed. Do not call tools now: answer the user with what you "
    "have, and say plainly what failed."
)
LIMIT_NOTE = (
    "You have reached the step limit for this request. Do not call tools: tell the user what was "
    "done, what the results are, and what remains."
)


STOPPED_CALLING_TOOLS = (
    "I stopped calling tools here (the step limit was reached or several tools failed in a row). "
    "Ask me to continue if there is more to do."
)
EVENT_RESULT_MAX = 20_000
CONDENSED_NOTICE = (
    "The model could not summarise the earlier conversation, so Navi kept your earlier messages in "
    "short form; every message is still in the history."
)


class AgentRunError(Exception):
    """A non-streaming run ended with an error (the message is meant for the user)."""


@dataclass
class AgentConfig:
    persona: str = ""
    num_ctx: int = 65536
    think: bool = True
    tool_result_max_chars: int = 16_000
    planning: bool = True
    max_consecutive_tool_failures: int = 3
    stop_grace_seconds: float = 5.0
    limits: CallLimits = field(default_factory=CallLimits)
    max_tokens_answer: int = 2048
    max_tokens_planning: int = 160
    max_tokens_naming: int = 24


@dataclass
class _Run:
    ctx: runctx.RunContext
    profile: AgentProfile
    llm: LLMBackend
    model: str
    window: int
    tools: ToolView
    context: list[Message]
    persistent: bool
    stream: bool
    memory: str | None = None
    tokens: int = 0  # the backend's count for the context as of the last model call
    pending: int = 0  # estimated tokens of messages added since that count
    fixed: int = 0  # of `tokens`, what the system prompt and tool schemas took
    final_text: str = ""
    failures: int = 0
    compression_failed: bool = False  # don't retry a failing summary on every step of this run
    write: asyncio.Task[None] | None = None  # a save still in flight; every later write waits for it
    trimmed: tuple[str, ...] = ()  # tools left out because the window cannot hold their schemas
    sent: list[Message] = field(default_factory=list)  # the messages of the latest model call
    tool_costs: dict[str, int] = field(default_factory=dict)  # estimated tokens per tool (see _tool_cost)
    answer_metadata: dict[str, Any] = field(default_factory=dict)  # added to the final answer (retry_of)

    @property
    def is_subagent(self) -> bool:
        return self.ctx.is_subagent

    @property
    def size(self) -> int:
        return self.tokens + self.pending


class Agent:
    def __init__(
        self,
        config: AgentConfig,
        *,
        backends: BackendRegistry,
        profiles: ProfileRegistry,
        tools: ToolRegistry,
        sessions: SessionStore,
        compressor: ContextCompressor,
        workers: Sequence[Worker] = (),
        memory_summary: Callable[[str], Awaitable[str | None]] | None = None,
        user_tools: Callable[[], list[str]] | None = None,
        on_session_end: Sequence[Callable[[str], Awaitable[None] | None]] = (),
        windows: ContextWindows | None = None,
    ) -> None:
        self.config = config
        self.backends = backends
        self.profiles = profiles
        self.tools = tools
        self.sessions = sessions
        self.compressor = compressor
        self.workers = list(workers)
        self.memory_summary = memory_summary
        self.user_tools = user_tools or (lambda: [])
        self.on_session_end = list(on_session_end)
        self.windows = windows or ContextWindows(backends, profiles, config.num_ctx)
        # Measured ÷ estimated tokens of the fixed prompt (system + tool schemas), per model:
        # learnt from the server's own prompt counts, so budgeting stops guessing after one call.
        self._calibration: dict[tuple[str, str], float] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.active: set[str] = set()  # sessions with a turn in progress (memory extraction skips them)

    def spawn_background(self, coro: Any) -> None:
        task = asyncio.create_task(self._guarded(coro))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    async def _guarded(coro: Any) -> None:
        try:
            await coro
        except Exception as exc:  # background work is best effort
            log.warning("background.failed", error=str(exc))

    async def settle(self) -> None:
        """Wait for background work (session naming) to finish: for shutdown and tests."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    # --- what the model sees ---------------------------------------------------------------------
    def model_view(
        self, profile: AgentProfile, context: Sequence[Message], memory: str | None = None
    ) -> list[Message]:
        """The messages a model call in `profile` would send for `context`: the one place the
        system prompt is built (the engine, `GET /sessions/{id}/context` and archives use it)."""
        return build_context(self.config.persona, profile, context, memory)

    def system_prompt(self, profile: AgentProfile, memory: str | None = None) -> str:
        return self.model_view(profile, [], memory)[0].content or ""

    # --- set-up helpers --------------------------------------------------------------------------
    def _tool_view(self, profile: AgentProfile) -> ToolView:
        return self.tools.view([*profile.enabled_tools, *self.user_tools()])

    def tool_specs(self, profile: AgentProfile) -> list[ToolSpec]:
        """The tools a profile's model is offered (its list plus user tools enabled for all)."""
        return self._tool_view(profile).specs()

    def _guard(self, backend: LLMBackend, stop: asyncio.Event | None) -> LLMBackend:
        return GuardedBackend(backend, self.config.limits, stop)

    async def _bind(self, run: _Run, profile: AgentProfile) -> None:
        run.profile = profile
        run.llm = self._guard(self.backends.get(self.profiles.backend_of(profile)), run.ctx.stop_event)
        run.model = self.profiles.model_of(profile)
        run.window = await self.windows.window(run.llm, run.model)
        run.tools = self._tool_view(profile)
        run.ctx.profile_id = profile.id
        run.tool_costs = {}  # another backend or model may price tools differently
        run.fixed = self._overhead(run)

    async def _new_run(
        self,
        ctx: runctx.RunContext,
        profile: AgentProfile,
        context: list[Message],
        *,
        persistent: bool,
        stream: bool,
    ) -> _Run:
        memory = await self.memory_summary(ctx.owner) if self.memory_summary else None
        run = _Run(
            ctx=ctx,
            profile=profile,
            llm=self._guard(self.backends.get(self.profiles.backend_of(profile)), ctx.stop_event),
            model="",
            window=self.config.num_ctx,
            tools=ToolView([]),
            context=context,
            persistent=persistent,
            stream=stream,
            memory=memory,
        )
        await self._bind(run, profile)
        return run

    # --- token accounting --------------------------------------------------------------------------
    def _tool_cost(self, run: _Run, spec: ToolSpec) -> int:
        """Estimated tokens one tool adds: its schema, or its line in the text-tool listing.

        Worked out once per tool and run (every model call budgets every tool several times).
        """
        cost = run.tool_costs.get(spec.name)
        if cost is None:
            if self.windows.text_tools(run.llm, run.model):
                cost = estimate_tokens(text_tools.tool_instructions([spec])) - TEXT_TOOLS_BASE
            else:
                cost = schema_tokens(spec)
            run.tool_costs[spec.name] = cost
        return cost

    def _raw_fixed(self, run: _Run, system: str, specs: Sequence[ToolSpec]) -> int:
        """Estimated tokens of a system prompt plus tools, before calibration."""
        tools = sum(self._tool_cost(run, s) for s in specs)
        if specs and self.windows.text_tools(run.llm, run.model):
            tools += TEXT_TOOLS_BASE
        return estimate_message_tokens(Message.system(system)) + tools

    def _ratio(self, run: _Run) -> float:
        return self._calibration.get((run.llm.name, run.model), 1.0)

    def _overhead(self, run: _Run, specs: Sequence[ToolSpec] | None = None) -> int:
        """Tokens every call adds to the stored context: system prompt, memory, tool schemas."""
        system = system_text(self.config.persona, run.profile, run.memory)
        specs = run.tools.specs() if specs is None else specs
        return math.ceil(self._raw_fixed(run, system, specs) * self._ratio(run))

    def _calibrate(self, run: _Run, sent: Sequence[Message], specs: Sequence[ToolSpec], prompt: int) -> None:
        """Learn the real cost of the fixed prompt from the server's count of a prompt it read.

        Only while the conversation is small next to the fixed part, so estimation errors in the
        conversation cannot swamp the measurement.
        """
        fixed = self._raw_fixed(run, sent[0].content or "", specs)
        conversation = estimate_messages_tokens(sent[1:])
        if fixed <= 0 or conversation > fixed or prompt <= conversation:
            return
        ratio = min(3.0, max(0.2, (prompt - conversation) / fixed))
        self._calibration[(run.llm.name, run.model)] = ratio

    def _reserve(self, run: _Run) -> int:
        """Room kept free in the window for the reply."""
        return min(self.config.max_tokens_answer, max(64, run.window // 8))

    def _fit_tools(self, run: _Run, specs: list[ToolSpec]) -> tuple[list[ToolSpec], int]:
        """The tools whose schemas fit the window with the conversation, and the prompt size then.

        When the window cannot hold every schema, the costliest are left out first: a smaller set
        of tools beats refusing the message.
        """
        conversation = max(0, run.size - run.fixed)
        kept = list(specs)
        need = conversation + self._overhead(run, kept)
        budget = run.window - self._reserve(run)
        ratio = self._ratio(run)
        while kept and need > budget:
            drop = max(kept, key=lambda spec: self._tool_cost(run, spec))
            kept.remove(drop)
            need -= math.ceil(self._tool_cost(run, drop) * ratio)
        return kept, need

    def _too_small(self, run: _Run, need: int) -> str:
        """Why the prompt cannot fit, naming the real cause and the smallest window that works."""
        fixed_bare = self._overhead(run, [])
        fixed_all = self._overhead(run)
        latest = next((m for m in reversed(run.context) if m.role == "user"), None)
        latest_tokens = estimate_message_tokens(latest) if latest is not None else 0
        reserve = self._reserve(run)
        if fixed_bare + latest_tokens + reserve > run.window:
            minimum = fixed_all + latest_tokens + reserve
            return (
                f"the model's context window ({run.window} tokens) is too small for Navi: its "
                f"instructions alone take about {fixed_bare} tokens, your message {latest_tokens}, and "
                f"{reserve} are kept for the reply. Give the model a window of at least {minimum} tokens "
                f"(OLLAMA_NUM_CTX, and the server's own context size)"
            )
        return (
            f"the conversation ({need} tokens with Navi's instructions) no longer fits the model's "
            f"context window ({run.window} tokens), even after compression and without tools; "
            "start a new session or give the model a larger window (OLLAMA_NUM_CTX)"
        )

    def _options(self, run: _Run, max_tokens: int | None = None) -> CallOptions:
        return CallOptions(
            model=run.model,
            temperature=run.profile.temperature,
            think=self.config.think,
            num_ctx=self.config.num_ctx,
            max_tokens=max_tokens or self.config.max_tokens_answer,
        )

    # --- persistence -----------------------------------------------------------------------------
    async def _save(
        self,
        run: _Run,
        *,
        display: Sequence[Message] = (),
        context: Sequence[Message] = (),
        tokens: int | None = None,
        behind: bool = False,
    ) -> None:
        """Save messages to the run's context and (for stored sessions) the database, in order.

        `behind=True` lets the write finish while the caller goes on (the user's message is saved
        while the model request is being made); the next save, or the end of the run, waits for it.
        """
        run.context.extend(context)
        await self._flush(run)
        if run.persistent and behind:
            run.write = asyncio.create_task(
                self.sessions.append(
                    run.ctx.session_id, display=display, context=context, context_token_count=tokens
                )
            )
        elif run.persistent:
            await self.sessions.append(
                run.ctx.session_id, display=display, context=context, context_token_count=tokens
            )

    # --- public entry points ---------------------------------------------------------------------
    async def run_stream(
        self,
        session_id: str,
        message: str,
        images: Sequence[str] | None = None,
        files: Sequence[dict[str, str]] | None = None,
        *,
        stop_event: asyncio.Event | None = None,
        planning: bool = True,
        message_id: str | None = None,
        retry: bool = False,
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn of a stored session, yielding events as they happen.

        `planning=False` skips the planning phase (the REST endpoint's non-streaming turns).
        `message_id` is the id the user's message is stored under (announced before the turn).
        `retry=True` runs the session's latest failed turn again on its stored message (`message`,
        `images` and `files` are ignored): the message is not stored twice.
        """
        async for event in self._session_turn(
            session_id,
            message,
            images,
            files,
            stop_event,
            planning=planning,
            message_id=message_id,
            retry=retry,
        ):
            yield event

    async def run(
        self,
        session_id: str,
        message: str,
        images: Sequence[str] | None = None,
        files: Sequence[dict[str, str]] | None = None,
        *,
        stop_event: asyncio.Event | None = None,
    ) -> str:
        """One turn without streaming or planning; returns the answer or raises `AgentRunError`."""
        answer = ""
        async for event in self._session_turn(session_id, message, images, files, stop_event, planning=False):
            if isinstance(event, ErrorEvent):
                raise AgentRunError(event.message)
            if isinstance(event, StreamEnd):
                answer = event.content
        return answer

    async def run_ephemeral(self, message: str, profile_id: str) -> str:
        """A subagent: fresh context, no persistence, its own session id; returns its answer."""
        parent = runctx.current()
        sub_id = f"subagent_{uuid.uuid4().hex[:12]}"
        ctx = runctx.RunContext(
            session_id=sub_id,
            profile_id=profile_id,
            owner=parent.owner if parent else "local",
            stop_event=parent.stop_event if parent else asyncio.Event(),
            is_subagent=True,
            depth=(parent.depth + 1) if parent else 1,
            persistent=False,
        )
        try:
            run = await self._new_run(
                ctx, self.profiles.get(profile_id), [Message.user(message)], persistent=False, stream=False
            )
        except CallStopped:
            return "The subagent was stopped before it started."
        except LLMError as exc:
            return f"The subagent failed: {exc}"
        run.pending = estimate_messages_tokens(run.context) + run.fixed
        try:
            with runctx.using(ctx):
                async for event in self._loop(run):
                    if isinstance(event, TurnThinking | ToolStarted | ToolEvent) and parent is not None:
                        parent.emit(event)
                    elif isinstance(event, ErrorEvent):
                        return f"The subagent failed: {event.message}"
                    elif isinstance(event, StreamStopped):
                        return "The subagent was stopped before it finished."
            return run.final_text
        finally:
            await self.end_session(sub_id)

    async def end_session(self, session_id: str) -> None:
        """Release per-session resources (scratchpads, SSH connections…) of a finished session."""
        for hook in self.on_session_end:
            try:
                result = hook(session_id)
                if result is not None:
                    await result
            except Exception as exc:  # one hook failing must not keep the others from running
                log.warning("session_end.hook_failed", session_id=session_id, error=str(exc))

    # --- a turn of a stored session --------------------------------------------------------------
    async def _session_turn(
        self,
        session_id: str,
        message: str,
        images: Sequence[str] | None,
        files: Sequence[dict[str, str]] | None,
        stop_event: asyncio.Event | None,
        *,
        planning: bool,
        message_id: str | None = None,
        retry: bool = False,
    ) -> AsyncIterator[AgentEvent]:
        session = await self.sessions.get(session_id, display=False)
        if session is None:
            raise SessionNotFound(session_id)
        profile = self.profiles.of_session(session.profile_id)
        ctx = runctx.RunContext(
            session_id=session_id,
            profile_id=profile.id,
            owner=session.owner,
            stop_event=stop_event or asyncio.Event(),
        )
        with structlog.contextvars.bound_contextvars(session_id=session_id), runctx.using(ctx):
            self.active.add(session_id)
            try:
                if retry:
                    turn = self._retry(session, profile, ctx, planning)
                else:
                    user = self._user_message(message, images, files, message_id)
                    turn = self._turn(session, profile, ctx, user, planning)
                async for event in turn:
                    yield event
            finally:
                self.active.discard(session_id)

    @staticmethod
    def _user_message(
        message: str,
        images: Sequence[str] | None,
        files: Sequence[dict[str, str]] | None,
        message_id: str | None,
    ) -> Message:
        user = Message.user(with_files(message, files), images=[strip_data_uri(i) for i in images or ()])
        if message_id:
            user.id = message_id
        if files:  # so a client can show them as attachments rather than as text
            user.metadata["files"] = [{"name": f.get("name", ""), "path": f.get("path", "")} for f in files]
        return user

    async def _retry(
        self, session: Session, profile: AgentProfile, ctx: runctx.RunContext, planning: bool
    ) -> AsyncIterator[AgentEvent]:
        """Run the latest failed turn again: its message is stored already (display and context)."""
        full = await self.sessions.get(session.id)
        last = full.messages[-1] if full is not None and full.messages else None
        wanted = last.metadata.get("failed_turn") if last is not None and last.metadata.get("error") else None
        user = next(
            (m for m in reversed(full.messages if full else []) if m.role == "user" and m.id == wanted), None
        )
        if user is None:
            yield ErrorEvent(
                message="there is no failed turn to retry in this session", code="nothing_to_retry"
            )
            return
        async for event in self._turn(session, profile, ctx, user, planning, stored=True):
            yield event

    async def _turn(
        self,
        session: Session,
        profile: AgentProfile,
        ctx: runctx.RunContext,
        user: Message,
        planning: bool,
        *,
        stored: bool = False,
    ) -> AsyncIterator[AgentEvent]:
        """One turn on `user`'s message (`stored`: already in the session, as for a retry).

        A turn that ends with an error leaves a record of it in the display history (never in the
        context), so after a reload the user sees what failed, under their message, with Retry.
        """
        failure: ErrorEvent | None = None
        async for event in self._answer(session, profile, ctx, user, planning, stored):
            if isinstance(event, ErrorEvent):
                failure = event
            yield event
        if failure is not None:
            record = Message.assistant(
                failure.message,
                metadata={
                    "error": {"code": failure.code, "message": failure.message},
                    "failed_turn": user.id,
                },
            )
            with contextlib.suppress(SessionNotFound):  # deleted meanwhile: nothing left to mark
                await self.sessions.append(session.id, display=[record])

    async def _answer(
        self,
        session: Session,
        profile: AgentProfile,
        ctx: runctx.RunContext,
        user: Message,
        planning: bool,
        stored: bool,
    ) -> AsyncIterator[AgentEvent]:
        content = user.content or ""
        # The user's message is written while Navi prepares the call: whatever happens next, it is kept.
        write = None
        if not stored:
            write = asyncio.create_task(self.sessions.append(session.id, display=[user], context=[user]))
        try:
            if not self.windows.known(profile):
                yield Status(phase="preparing", detail="asking the model server about the model")
            run = await self._new_run(ctx, profile, list(session.context), persistent=True, stream=True)
        except (CallStopped, LLMError) as exc:
            if write is not None:
                await write
            yield StreamStopped() if isinstance(exc, CallStopped) else ErrorEvent.of(exc)
            return
        if stored:
            run.answer_metadata["retry_of"] = user.id
        else:
            run.context.append(user)
        run.write = write
        run.tokens = session.context_token_count or (run.fixed + estimate_messages_tokens(run.context))
        run.pending = estimate_message_tokens(user) if session.context_token_count and not stored else 0
        finished = False
        try:
            try:
                async for event in self._compress_if_needed(run):
                    yield event
                if planning and self.config.planning and run.profile.planning_enabled and not ctx.stopped:
                    async for event in self._plan(run):
                        yield event
            except CallStopped:
                yield StreamStopped()
                return
            async for event in self._loop(run):
                finished = finished or isinstance(event, StreamEnd)
                yield event
        finally:
            await self._flush(run)  # the user's message is saved even if the turn ends early
        if finished:
            async for event in self._after_turn(run, session.name is None, content):
                yield event

    async def _plan(self, run: _Run) -> AsyncIterator[AgentEvent]:
        yield Status(phase="planning", detail="deciding whether the request needs a plan")
        outcome = await run_planning(
            run.llm,
            run.model,
            run.context,
            run.tools.names,
            max_tokens=self.config.max_tokens_planning,
            num_ctx=self.config.num_ctx,
        )
        await self._flush(run)
        await self.sessions.add_planning_log(run.ctx.session_id, outcome.log_entry(run.model))
        if outcome.plan:
            plan = Message.assistant(outcome.plan, is_plan=True)
            await self._save(run, display=[plan], context=[plan])
            run.pending += estimate_tokens(outcome.plan)  # it goes into the system message
            yield PlanReady(plan=outcome.plan)
        elif outcome.error:
            log.warning("planning.failed", error=outcome.error)

    async def _after_turn(self, run: _Run, needs_name: bool, user_text: str) -> AsyncIterator[AgentEvent]:
        """Post-turn work (compression, naming). `stream_end` is already out; a new message from
        the user stops the run, which abandons this work at once (see RunManager.start)."""
        wctx = WorkerContext(
            session_id=run.ctx.session_id,
            llm=run.llm,
            detached_llm=self._guard(self.backends.get(self.profiles.backend_of(run.profile)), None),
            model=run.model,
            window=run.window,
            context=run.context,
            context_tokens=run.size,
            overhead_tokens=self._overhead(run),
            persistent=run.persistent,
            needs_name=needs_name,
            user_text=user_text,
            answer=run.final_text,
            background=self.spawn_background,
        )
        for worker in self.workers:
            if run.ctx.stopped:
                log.info("worker.skipped", worker=worker.name, reason="stopped")
                continue
            try:
                result = await worker.run(wctx)
            except CallStopped:
                log.info("worker.abandoned", worker=worker.name)
                continue
            except Exception as exc:  # post-turn work is best effort; the turn is saved
                log.warning("worker.failed", worker=worker.name, error=str(exc))
                continue
            if result.context is not None:
                wctx.context = run.context = result.context
            if result.context_tokens is not None:
                wctx.context_tokens = result.context_tokens
            for event in result.events:
                yield event

    async def _compress_if_needed(self, run: _Run, *, overflowing: bool = False) -> AsyncIterator[AgentEvent]:
        """Compress when the context passed the threshold. Raises `CallStopped` on stop.

        The model summarises; for a session whose model wrote no usable summary, or when the prompt
        no longer fits the window after a failed summary (`overflowing`), Navi condenses the earlier
        conversation itself (`navi.agent.condense`) rather than refusing the message.
        """
        if not self.compressor.settings.enabled:
            return
        if not overflowing and (run.compression_failed or not self.compressor.needed(run.size, run.window)):
            return
        if not partition(run.context, 0)[0]:
            return  # nothing before the latest request to summarise: the fit check decides the rest
        condense = overflowing or run.ctx.session_id in self.compressor.unsummarisable
        detail = "condensing" if condense else "summarising"
        yield Status(phase="compressing", detail=f"{detail} the earlier conversation")
        await self._flush(run)  # compression rewrites stored rows: earlier writes must be in
        # Keep the configured number of turns; if that is still too much, one turn; in the end only
        # the latest instruction and its newest tool results.
        for keep in dict.fromkeys([self.compressor.settings.keep_recent, 1, 0]):
            if condense:
                done = await self.compressor.condense(
                    run.ctx.session_id,
                    run.context,
                    overhead_tokens=self._overhead(run),
                    persistent=run.persistent,
                    keep_recent=keep,
                    budget_tokens=condense_budget(run.window),
                )
            else:
                try:
                    done = await self.compressor.compress(
                        run.ctx.session_id,
                        run.context,
                        run.llm,
                        run.model,
                        overhead_tokens=self._overhead(run),
                        persistent=run.persistent,
                        keep_recent=keep,
                    )
                except CompressionFailed as exc:
                    run.compression_failed = True  # carry on with the context as it is
                    yield summary_failed(exc)
                    return
            if done is not None:
                run.context, run.tokens, run.pending = done.context, done.tokens, 0
                run.fixed = self._overhead(run)
                yield done.event
                if condense:
                    yield Notice(message=CONDENSED_NOTICE)
            if not self.compressor.needed(run.size, run.window) and (
                not overflowing
                or self._fit_tools(run, run.tools.specs())[1] + self._reserve(run) <= run.window
            ):
                return

    # --- the loop --------------------------------------------------------------------------------
    async def _loop(self, run: _Run) -> AsyncIterator[AgentEvent]:
        limit = max(1, run.profile.max_iterations)
        for step in range(limit + 1):
            last_step = step == limit
            if run.ctx.stopped:
                yield StreamStopped()
                return
            try:
                async for event in self._compress_if_needed(run):
                    yield event
            except CallStopped:
                yield StreamStopped()
                return
            note = None
            tools = run.tools
            if last_step:
                note, tools = LIMIT_NOTE, ToolView([])
            elif run.failures >= self.config.max_consecutive_tool_failures:
                note, tools = FAILURE_NOTE, ToolView([])
            offered = tools.specs()
            specs, need = self._fit_tools(run, offered)
            if need + self._reserve(run) > run.window:
                try:  # the model could not summarise: Navi condenses rather than refuse
                    async for event in self._compress_if_needed(run, overflowing=True):
                        yield event
                except CallStopped:
                    yield StreamStopped()
                    return
                specs, need = self._fit_tools(run, offered)
            if need + self._reserve(run) > run.window:
                yield ErrorEvent(message=self._too_small(run, need), code="context_overflow")
                return
            left_out = tuple(s.name for s in offered if s not in specs)
            if left_out and left_out != run.trimmed:
                run.trimmed = left_out
                log.info("tools.trimmed", window=run.window, left_out=left_out)
                yield Notice(
                    message=f"The model's context window ({run.window} tokens) cannot hold every tool; "
                    f"left out for now: {', '.join(left_out)}."
                )
            builder = CompletionBuilder()
            try:
                async for event in self._model_turn(run, builder, specs, note, need):
                    yield event
            except CallStopped:
                await self._save_partial(run, builder, stopped=True)
                yield StreamStopped()
                return
            except LLMError as exc:
                if isinstance(exc, ContextOverflow):  # the server knows better: compress next time
                    run.tokens, run.pending = max(run.size, run.window), 0
                await self._save_partial(run, builder, error=str(exc))
                yield ErrorEvent.of(exc)
                return
            completion = builder.build()
            final = builder.final
            assert final is not None
            if not final.usage.estimated and run.sent:
                self._calibrate(run, run.sent, specs, final.usage.prompt_tokens)
            run.tokens, run.pending = final.usage.total_tokens, 0
            run.fixed = math.ceil(self._raw_fixed(run, run.sent[0].content or "", specs) * self._ratio(run))
            reply = completion.message
            reply.metadata["usage"] = {
                "prompt_tokens": final.usage.prompt_tokens,
                "completion_tokens": final.usage.completion_tokens,
                "estimated": final.usage.estimated,
            }
            if completion.finish_reason == "length":
                reply.metadata["finish_reason"] = "length"
            if reply.tool_calls and not specs:  # no tool was offered: calls are not run, text is the answer
                log.info("tools.unoffered_calls_dropped", calls=[c.name for c in reply.tool_calls])
                reply.tool_calls = []
                reply.content = reply.content or STOPPED_CALLING_TOOLS
            if not reply.tool_calls:
                reply.metadata.update(run.answer_metadata)
                await self._save(run, display=[reply], context=[reply], tokens=run.size)
                run.final_text = reply.content or ""
                yield StreamEnd(
                    content=run.final_text,
                    context_tokens=run.size,
                    max_context_tokens=run.window,
                    finish_reason="length" if completion.finish_reason == "length" else "stop",
                )
                return
            await self._save(run, display=[reply], context=[reply], tokens=run.size)
            intents: list[Intent] = []
            offered_now = ToolView([tool for s in specs if (tool := run.tools.get(s.name)) is not None])
            async for event in self._tool_batch(run, reply.tool_calls, offered_now, intents):
                yield event
            switch = next((i for i in reversed(intents) if isinstance(i, SwitchProfile)), None)
            if switch is not None and switch.profile_id != run.profile.id:  # announced as the tool returned
                await self._bind(run, self.profiles.get(switch.profile_id))
        yield ErrorEvent(message="the run ended without an answer", code="no_answer")  # unreachable

    async def _model_turn(
        self, run: _Run, builder: CompletionBuilder, specs: list[ToolSpec], note: str | None, need: int
    ) -> AsyncIterator[AgentEvent]:
        messages = build_context(self.config.persona, run.profile, run.context, run.memory, note=note)
        run.sent = messages
        # Never ask for more than the window has left: a reply cannot push the context past it.
        room = max(self._reserve(run), run.window - need)
        options = self._options(run, min(self.config.max_tokens_answer, room))
        yield Status(phase="waiting", detail=f"the model is reading about {need} tokens")
        stream = run.llm.stream_complete(messages, options, specs or None)
        thinking_open = False
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for chunk in stream:
                builder.add(chunk)
                if isinstance(chunk, ThinkingChunk):
                    if run.stream:
                        thinking_open = True
                        yield ThinkingDelta(delta=chunk.text)
                    continue
                if thinking_open:
                    thinking_open = False
                    yield ThinkingEnd()
                if isinstance(chunk, TextChunk) and run.stream:
                    yield TextDelta(delta=chunk.text)
        if not run.stream and builder.thinking:
            yield TurnThinking(thinking="".join(builder.thinking), is_subagent=run.is_subagent)

    @staticmethod
    async def _flush(run: _Run) -> None:
        if run.write is not None:
            write, run.write = run.write, None
            await write

    async def _save_partial(
        self, run: _Run, builder: CompletionBuilder, *, stopped: bool = False, error: str | None = None
    ) -> None:
        """Keep what a stopped or failed call produced, and the token count it reached.

        The count matters: a long broken answer that is not counted leaves compression asleep and
        the next prompt overflowing.
        """
        text, thinking = "".join(builder.text), "".join(builder.thinking)
        if not text and not thinking:
            await self._flush(run)
            if run.persistent:
                await self.sessions.set_context_tokens(run.ctx.session_id, run.size)
            return
        partial = Message.assistant(text, thinking=thinking or None, stopped=stopped)
        if error:
            partial.metadata["interrupted"] = error
        run.pending += estimate_message_tokens(partial)
        await self._save(run, display=[partial], context=[partial], tokens=run.size)

    # --- tools -----------------------------------------------------------------------------------
    async def _tool_batch(
        self, run: _Run, calls: list[ToolCall], offered: ToolView, intents: list[Intent]
    ) -> AsyncIterator[AgentEvent]:
        """Run the calls in order. Only the tools `offered` in this model call may run; what the
        tools ask of the loop (their intents) is collected in `intents`."""
        images: list[Message] = []
        for call in calls:
            outcome: dict[str, Any] = {}
            profile = next((i.profile_id for i in reversed(intents) if isinstance(i, SwitchProfile)), None)
            async for event in self._tool_call(run, call, offered, outcome, profile or run.profile.id):
                yield event
            result: ToolResult = outcome["result"]
            intents.extend(result.intents)
            display, context = self._result_messages(run, call, result, outcome["duration_ms"])
            await self._save(run, display=[display], context=[context])
            run.pending += estimate_message_tokens(context)
            run.failures = 0 if result.success else run.failures + 1
            if result.success and result.metadata.get("is_image") and result.metadata.get("base64"):
                images.append(
                    Message.user(
                        f"[Image from {call.name}: {result.output[:200]}]",
                        images=[strip_data_uri(str(result.metadata["base64"]))],
                        metadata={"synthetic": "image", "tool_call_id": call.id},
                    )
                )
        if images:  # after all results: a user message between results would break tool pairing
            await self._save(run, context=images)
            run.pending += estimate_messages_tokens(images)

    def _result_messages(
        self, run: _Run, call: ToolCall, result: ToolResult, duration_ms: float
    ) -> tuple[Message, Message]:
        status = "ok" if result.success else ("stopped" if result.metadata.get("stopped") else "error")
        content = result.to_message_content()
        display = Message.tool(
            content,
            tool_call_id=call.id,
            name=call.name,
            metadata={"status": status, "duration_ms": duration_ms},
        )
        limit = self.config.tool_result_max_chars
        if len(content) <= limit:
            return display, display
        run.ctx.full_texts[display.id] = content
        head, tail = content[: int(limit * 0.6)], content[-int(limit * 0.3) :]
        omitted = len(content) - len(head) - len(tail)
        clipped = (
            f"{head}\n\n[… {omitted} characters omitted. The full text is kept: call recall with "
            f'key "{display.id}" (and optionally offset/length) to read it …]\n\n{tail}'
        )
        context = display.model_copy(update={"content": clipped})
        context.metadata = {**display.metadata, "truncated_from": len(content), "recall_key": display.id}
        return display, context

    async def _tool_call(
        self, run: _Run, call: ToolCall, offered: ToolView, outcome: dict[str, Any], profile_id: str
    ) -> AsyncIterator[AgentEvent]:
        args = call.arguments if call.raw_arguments is None else {"_raw": call.raw_arguments}
        yield ToolStarted(tool=call.name, args=args, is_subagent=run.is_subagent, call_id=call.id)
        started = time.perf_counter()
        tool = offered.get(call.name)
        if run.ctx.stopped:
            result = ToolResult.fail("not run: the user stopped the agent", stopped=True)
        elif tool is None:
            available = ", ".join(offered.names) or "none"
            known = "is not available right now" if call.name in run.tools else "does not exist"
            result = ToolResult.fail(f"the tool '{call.name}' {known}. Available tools: {available}")
        elif call.arguments_error:
            result = ToolResult.fail(
                f"{call.arguments_error}. The call was not run. Call {call.name} again with the arguments "
                f"as one JSON object that matches its schema. You sent: {(call.raw_arguments or '')[:500]}"
            )
        elif problem := self.tools.validation_error(tool, call.arguments):
            result = ToolResult.fail(f"{problem}. The call was not run; fix the arguments and try again.")
        else:
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
        )

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


TEXT_TOOLS_BASE = estimate_tokens(text_tools.tool_instructions([]))


def schema_tokens(spec: ToolSpec) -> int:
    """Estimated tokens of one tool's schema as a template lays it out (JSON, like most do)."""
    return estimate_tokens(json.dumps(spec.model_dump(), ensure_ascii=False))


def with_files(message: str, files: Sequence[dict[str, str]] | None) -> str:
    """Append uploaded files' paths to the user's text, as the reference shows."""
    if not files:
        return message
    lines = "\n".join(f"- {f.get('name', '')} → {f.get('path', '')}" for f in files)
    return f"{message}\n\n[Uploaded files on disk:\n{lines}]"
