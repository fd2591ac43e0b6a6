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
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from navi import runctx
from navi.agent.budget import Budget
from navi.agent.compression import partition
from navi.agent.context import StoppedQuestions, build_context, unanswered, unanswered_marker
from navi.agent.events import (
    AgentEvent,
    ApprovalRequired,
    ApprovalResolved,
    ErrorEvent,
    Notice,
    PlanReady,
    Status,
    StreamEnd,
    StreamStopped,
    ToolEvent,
    ToolStarted,
    TurnThinking,
    TurnUsage,
)
from navi.agent.gate import ApprovalGate
from navi.agent.persistence import RunWriter
from navi.agent.planning import run_planning
from navi.agent.pump import pump
from navi.agent.run import RunState
from navi.agent.shorten import LongMessages, saving
from navi.agent.tool_batch import ToolRunner
from navi.agent.windows import ContextWindows
from navi.agent.workers import (
    CompressionFailed,
    ContextCompressor,
    Worker,
    WorkerContext,
    condense_budget,
    summary_failed,
)
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.calls import CallLimits, CallStopped, GuardedBackend
from navi.llm.chunks import CompletionBuilder
from navi.llm.errors import ContextOverflow, LLMError
from navi.llm.messages import Message, ToolSpec, strip_data_uri
from navi.llm.registry import BackendRegistry
from navi.llm.tokens import estimate_message_tokens, estimate_messages_tokens, estimate_tokens
from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry
from navi.sessions.models import Session
from navi.sessions.store import SessionNotFound, SessionStore
from navi.tools.base import Intent, SwitchProfile
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
    # Messages older than the recent turns and longer than this (tokens) go to the model shortened,
    # recallable by key (navi/agent/shorten.py); 0 sends them whole.
    long_message_tokens: int = 1500
    planning: bool = True
    max_consecutive_tool_failures: int = 3
    stop_grace_seconds: float = 5.0
    limits: CallLimits = field(default_factory=CallLimits)
    max_tokens_answer: int = 2048
    max_tokens_planning: int = 160
    max_tokens_naming: int = 24
    # A question stopped before any answer: "mark" tells the model so, "omit" leaves it out.
    stopped_questions: StoppedQuestions = "mark"


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
        offered_tools: Callable[[str], list[str]] | None = None,
        on_session_end: Sequence[Callable[[str], Awaitable[None] | None]] = (),
        windows: ContextWindows | None = None,
        approvals: ApprovalGate | None = None,
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
        # Tools every profile gets besides its list and the user tools (MCP servers' tools), by profile id.
        self.offered_tools = offered_tools or (lambda _profile_id: [])
        self.on_session_end = list(on_session_end)
        self.windows = windows or ContextWindows(backends, profiles, config.num_ctx)
        self.budget = Budget(config, self.windows)
        self.writer = RunWriter(sessions)
        # Where calls that need the user's consent wait for it; the API delivers the answers.
        self.approvals = approvals
        self.tool_runner = ToolRunner(tools, self.writer, config, approvals)
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
    @property
    def long_messages(self) -> LongMessages:
        """Which old messages a call sends shortened; "recent" means what compression keeps."""
        return LongMessages(self.config.long_message_tokens, self.compressor.settings.keep_recent)

    def model_view(
        self, profile: AgentProfile, context: Sequence[Message], memory: str | None = None
    ) -> list[Message]:
        """The messages a model call in `profile` would send for `context`: the one place the
        system prompt is built (the engine, `GET /sessions/{id}/context` and archives use it)."""
        return build_context(
            self.config.persona,
            profile,
            context,
            memory,
            long_messages=self.long_messages,
            stopped=self.config.stopped_questions,
        )

    def view_tokens(self, context: Sequence[Message]) -> int:
        """Estimated tokens of `context` as a model call sends it (old long messages shortened)."""
        return estimate_messages_tokens(context) - saving(context, self.long_messages)

    def system_prompt(self, profile: AgentProfile, memory: str | None = None) -> str:
        return self.model_view(profile, [], memory)[0].content or ""

    # --- set-up helpers --------------------------------------------------------------------------
    def _tool_view(self, profile: AgentProfile) -> ToolView:
        return self.tools.view([*profile.enabled_tools, *self.user_tools(), *self.offered_tools(profile.id)])

    def tool_specs(self, profile: AgentProfile) -> list[ToolSpec]:
        """The tools a profile's model is offered (its list, user tools enabled for all, and the MCP
        servers' tools its profile may use)."""
        return self._tool_view(profile).specs()

    def _guard(self, backend: LLMBackend, stop: asyncio.Event | None) -> LLMBackend:
        return GuardedBackend(backend, self.config.limits, stop)

    async def _bind(self, run: RunState, profile: AgentProfile) -> None:
        run.profile = profile
        run.llm = self._guard(self.backends.get(self.profiles.backend_of(profile)), run.ctx.stop_event)
        run.model = self.profiles.model_of(profile)
        run.window = await self.windows.window(run.llm, run.model)
        run.tools = self._tool_view(profile)
        run.ctx.profile_id = profile.id
        run.tool_costs = {}  # another backend or model may price tools differently
        run.fixed = self.budget.overhead(run)

    async def _new_run(
        self,
        ctx: runctx.RunContext,
        profile: AgentProfile,
        context: list[Message],
        *,
        persistent: bool,
        stream: bool,
    ) -> RunState:
        memory = await self.memory_summary(ctx.owner) if self.memory_summary else None
        run = RunState(
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

    def _options(self, run: RunState, max_tokens: int | None = None) -> CallOptions:
        return CallOptions(
            model=run.model,
            temperature=run.profile.temperature,
            think=self.config.think,
            num_ctx=self.config.num_ctx,
            max_tokens=max_tokens or self.config.max_tokens_answer,
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
        on_stored: Callable[[], None] | None = None,
        unattended: runctx.Unattended | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn of a stored session, yielding events as they happen.

        `planning=False` skips the planning phase (the REST endpoint's non-streaming turns).
        `message_id` is the id the user's message is stored under (announced before the turn).
        `retry=True` runs the session's latest failed turn again on its stored message (`message`,
        `images` and `files` are ignored): the message is not stored twice.
        `on_stored` is called once the user's message is committed, before any event: the server
        acknowledges the message (`stream_start`) only then, so an acknowledged message survives
        a crash.
        `unattended` ("deny" or "allow"): nobody can be asked during this turn, so calls that need
        approval are settled at once (see `ApprovalGate.screen`).
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
            on_stored=on_stored,
            unattended=unattended,
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
        answer, error = "", None
        turn = self._session_turn(session_id, message, images, files, stop_event, planning=False)
        async with contextlib.aclosing(turn):  # run to the end: the turn saves after its last event
            async for event in turn:
                if isinstance(event, ErrorEvent):
                    error = event
                elif isinstance(event, StreamEnd):
                    answer = event.content
        if error is not None:
            raise AgentRunError(error.message)
        return answer

    async def run_ephemeral(self, message: str, profile_id: str) -> str:
        """A subagent: fresh context, no persistence, its own session id; returns its answer."""
        parent = runctx.current()
        sub_id = f"subagent_{uuid.uuid4().hex[:12]}"
        ctx = runctx.RunContext(
            session_id=sub_id,
            profile_id=profile_id,
            root_session_id=parent.root_session if parent else sub_id,
            owner=parent.owner if parent else "local",
            stop_event=parent.stop_event if parent else asyncio.Event(),
            is_subagent=True,
            depth=(parent.depth + 1) if parent else 1,
            persistent=False,
            unattended=parent.unattended if parent else None,
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
                    forwarded = TurnThinking | ToolStarted | ToolEvent | ApprovalRequired | ApprovalResolved
                    if isinstance(event, forwarded) and parent is not None:
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
        on_stored: Callable[[], None] | None = None,
        unattended: runctx.Unattended | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        self.active.add(session_id)
        try:
            user = None
            if not retry:
                # The message is committed before anything else, even loading the session: only
                # then may the server acknowledge it (`on_stored`). One small transaction, about a
                # millisecond on SQLite.
                user = self._user_message(message, images, files, message_id)
                await self.sessions.append(session_id, display=[user], context=[user])
                if on_stored is not None:
                    on_stored()
            session = await self.sessions.get(session_id, display=False)
            if session is None:
                raise SessionNotFound(session_id)
            profile = self.profiles.of_session(session.profile_id)
            ctx = runctx.RunContext(
                session_id=session_id,
                profile_id=profile.id,
                owner=session.owner,
                stop_event=stop_event or asyncio.Event(),
                unattended=unattended,
            )
            with structlog.contextvars.bound_contextvars(session_id=session_id), runctx.using(ctx):
                if user is None:
                    turn = self._retry(session, profile, ctx, planning)
                else:
                    turn = self._turn(session, profile, ctx, user, planning)
                stopped = False
                async for event in turn:
                    stopped = stopped or isinstance(event, StreamStopped)
                    yield event
                if stopped:  # every write of the turn is in: did anything answer the question?
                    await self._mark_unanswered(session_id)
        finally:
            self.active.discard(session_id)

    async def _mark_unanswered(self, session_id: str) -> None:
        """A turn stopped before any answer: a marker after its question, in the context only, so
        the next question is not merged into it (`build_context` says it was stopped, or leaves
        it out)."""
        session = await self.sessions.get(session_id, display=False)
        question = unanswered(session.context) if session is not None else None
        if question is not None:
            with contextlib.suppress(SessionNotFound):
                await self.sessions.append(session_id, context=[unanswered_marker(question)])

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
        async for event in self._turn(session, profile, ctx, user, planning, retry=True):
            yield event

    async def _turn(
        self,
        session: Session,
        profile: AgentProfile,
        ctx: runctx.RunContext,
        user: Message,
        planning: bool,
        *,
        retry: bool = False,
    ) -> AsyncIterator[AgentEvent]:
        """One turn on `user`'s message, already stored: `session` (loaded after it was) ends
        with it. `retry`: the message is that of a failed turn, run again.

        A turn that ends with an error leaves a record of it in the display history (never in the
        context) before the error is yielded, so a client that reloads on the error sees what
        failed, under the message, with Retry.
        """
        content = user.content or ""
        try:
            if not self.windows.known(profile):
                yield Status(phase="preparing", detail="asking the model server about the model")
            run = await self._new_run(ctx, profile, list(session.context), persistent=True, stream=True)
        except (CallStopped, LLMError) as exc:
            if isinstance(exc, CallStopped):
                yield StreamStopped()
            else:
                yield await self._failed(session.id, user, ErrorEvent.of(exc))
            return
        run.tokens = session.context_token_count or (run.fixed + self.view_tokens(run.context))
        # The stored count was taken before the new message: it is pending until the next call.
        run.pending = estimate_message_tokens(user) if session.context_token_count and not retry else 0
        if session.context_token_count and not retry:
            # That count was of the calls before this message. With it, the oldest recent turn
            # ages out of the recent ones: its long messages are sent shortened from now on.
            policy = self.long_messages
            aged = saving(run.context, policy) - saving(run.context[:-1], policy)
            run.tokens = max(run.fixed, run.tokens - aged)
        if retry:
            run.answer_metadata["retry_of"] = user.id
            await self._drop_broken_answer(run)
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
                if isinstance(event, ErrorEvent):
                    await self.writer.flush(run)  # the record goes after everything the turn saved
                    event = await self._failed(session.id, user, event)
                yield event
        finally:
            await self.writer.flush(run)  # every write of the turn is in, even if it ends early
        if finished:
            async for event in self._after_turn(run, session.name is None, content):
                yield event

    async def _failed(self, session_id: str, user: Message, error: ErrorEvent) -> ErrorEvent:
        """Keep a failed turn's error in the display history (for the page and Retry); the model
        never sees it."""
        record = Message.assistant(
            error.message,
            metadata={"error": {"code": error.code, "message": error.message}, "failed_turn": user.id},
        )
        with contextlib.suppress(SessionNotFound):  # deleted meanwhile: nothing left to mark
            await self.sessions.append(session_id, display=[record])
        return error

    async def _drop_broken_answer(self, run: RunState) -> None:
        """Before a retry: leave out of the context the text a broken stream left at its end.

        As the last message it would be a prefill the model continues, and after the new answer a
        fragment merged into it. The display history keeps it.
        """
        kept = list(run.context)
        while kept and kept[-1].role == "assistant" and kept[-1].metadata.get("interrupted"):
            kept.pop()
        if len(kept) == len(run.context):
            return
        run.context = kept
        run.tokens = run.fixed + self.view_tokens(kept)
        await self.sessions.replace_context(run.ctx.session_id, kept, context_token_count=run.tokens)

    async def _plan(self, run: RunState) -> AsyncIterator[AgentEvent]:
        yield Status(phase="planning", detail="deciding whether the request needs a plan")
        outcome = await run_planning(
            run.llm,
            run.model,
            run.context,
            run.tools.names,
            max_tokens=self.config.max_tokens_planning,
            num_ctx=self.config.num_ctx,
        )
        await self.writer.flush(run)
        await self.sessions.add_planning_log(run.ctx.session_id, outcome.log_entry(run.model))
        if outcome.plan:
            plan = Message.assistant(outcome.plan, is_plan=True)
            await self.writer.save(run, display=[plan], context=[plan])
            run.pending += estimate_tokens(outcome.plan)  # it goes into the system message
            yield PlanReady(plan=outcome.plan)
        elif outcome.error:
            log.warning("planning.failed", error=outcome.error)

    async def _after_turn(self, run: RunState, needs_name: bool, user_text: str) -> AsyncIterator[AgentEvent]:
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
            overhead_tokens=self.budget.overhead(run),
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

    async def _compress_if_needed(
        self, run: RunState, *, overflowing: bool = False
    ) -> AsyncIterator[AgentEvent]:
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
        await self.writer.flush(run)  # compression rewrites stored rows: earlier writes must be in
        # Keep the configured number of turns; if that is still too much, one turn; in the end only
        # the latest instruction and its newest tool results.
        for keep in dict.fromkeys([self.compressor.settings.keep_recent, 1, 0]):
            if condense:
                done = await self.compressor.condense(
                    run.ctx.session_id,
                    run.context,
                    overhead_tokens=self.budget.overhead(run),
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
                        overhead_tokens=self.budget.overhead(run),
                        persistent=run.persistent,
                        keep_recent=keep,
                    )
                except CompressionFailed as exc:
                    run.compression_failed = True  # carry on with the context as it is
                    yield summary_failed(exc)
                    return
            if done is not None:
                run.context, run.tokens, run.pending = done.context, done.tokens, 0
                run.fixed = self.budget.overhead(run)
                yield done.event
                if condense:
                    yield Notice(message=CONDENSED_NOTICE)
            if not self.compressor.needed(run.size, run.window) and (
                not overflowing
                or self.budget.fit_tools(run, run.tools.specs())[1] + self.budget.reserve(run) <= run.window
            ):
                return

    # --- the loop --------------------------------------------------------------------------------
    async def _loop(self, run: RunState) -> AsyncIterator[AgentEvent]:
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
            specs, need = self.budget.fit_tools(run, offered)
            if need + self.budget.reserve(run) > run.window:
                try:  # the model could not summarise: Navi condenses rather than refuse
                    async for event in self._compress_if_needed(run, overflowing=True):
                        yield event
                except CallStopped:
                    yield StreamStopped()
                    return
                specs, need = self.budget.fit_tools(run, offered)
            if need + self.budget.reserve(run) > run.window:
                yield ErrorEvent(message=self.budget.too_small(run, need), code="context_overflow")
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
                await self.writer.save_partial(run, builder, stopped=True)
                yield StreamStopped()
                return
            except LLMError as exc:
                if isinstance(exc, ContextOverflow):  # the server knows better: compress next time
                    run.tokens, run.pending = max(run.size, run.window), 0
                await self.writer.save_partial(run, builder, error=str(exc))
                yield ErrorEvent.of(exc)
                return
            completion = builder.build()
            final = builder.final
            assert final is not None
            if not final.usage.estimated and run.sent:
                self.budget.calibrate(run, run.sent, specs, final.usage.prompt_tokens)
            run.tokens, run.pending = final.usage.total_tokens, 0
            run.spent_prompt += final.usage.prompt_tokens
            run.spent_completion += final.usage.completion_tokens
            run.spent_estimated = run.spent_estimated or final.usage.estimated
            run.fixed = self.budget.fixed(run, run.sent[0].content or "", specs)
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
                await self.writer.save(run, display=[reply], context=[reply], tokens=run.size)
                run.final_text = reply.content or ""
                yield StreamEnd(
                    content=run.final_text,
                    context_tokens=run.size,
                    max_context_tokens=run.window,
                    finish_reason="length" if completion.finish_reason == "length" else "stop",
                    usage=TurnUsage(
                        prompt_tokens=run.spent_prompt,
                        completion_tokens=run.spent_completion,
                        estimated=run.spent_estimated,
                    ),
                )
                return
            await self.writer.save(run, display=[reply], context=[reply], tokens=run.size)
            intents: list[Intent] = []
            offered_now = ToolView([tool for s in specs if (tool := run.tools.get(s.name)) is not None])
            async for event in self.tool_runner.batch(run, reply.tool_calls, offered_now, intents):
                yield event
            switch = next((i for i in reversed(intents) if isinstance(i, SwitchProfile)), None)
            if switch is not None and switch.profile_id != run.profile.id:  # announced as the tool returned
                await self._bind(run, self.profiles.get(switch.profile_id))
        yield ErrorEvent(message="the run ended without an answer", code="no_answer")  # unreachable

    async def _model_turn(
        self, run: RunState, builder: CompletionBuilder, specs: list[ToolSpec], note: str | None, need: int
    ) -> AsyncIterator[AgentEvent]:
        messages = build_context(
            self.config.persona,
            run.profile,
            run.context,
            run.memory,
            note=note,
            long_messages=self.long_messages,
            texts=None if run.persistent else run.ctx.full_texts,  # a subagent's texts live nowhere else
            stopped=self.config.stopped_questions,
        )
        run.sent = messages
        # Never ask for more than the window has left: a reply cannot push the context past it.
        room = max(self.budget.reserve(run), run.window - need)
        options = self._options(run, min(self.config.max_tokens_answer, room))
        yield Status(phase="waiting", detail=f"the model is reading about {need} tokens")
        async for event in pump(run, builder, messages, options, specs):
            yield event


FILES_NOTE = "\n\n[Uploaded files on disk:\n"


def with_files(message: str, files: Sequence[dict[str, str]] | None) -> str:
    """Append uploaded files' paths to the user's text, as the reference shows."""
    if not files:
        return message
    lines = "\n".join(f"- {f.get('name', '')} → {f.get('path', '')}" for f in files)
    return f"{message}{FILES_NOTE}{lines}]"


def without_files(message: Message) -> str:
    """What the person typed: a user message's text without the uploaded files' note `with_files`
    added (file names and server paths, which the person did not write)."""
    text = message.content or ""
    if message.metadata.get("files") and FILES_NOTE in text:
        return text[: text.rindex(FILES_NOTE)]
    return text
