"""The agent loop: one async generator over plan → model call → tools → … → answer.

`run_stream()` drives a persistent session and yields `AgentEvent`s; `run()` is the same loop
without planning, returning the answer; `run_ephemeral()` is a subagent with no persistence whose
events reach the parent run through its event sink, flagged `is_subagent` (navi/agent/subagents.py).

Every message is written as soon as it is complete (user message, plan, each assistant turn, each
tool result), so a crash loses at most the one in flight. Stop is cooperative and reaches every
phase: every model call and lookup goes through a `GuardedBackend` bound to the run's stop event
(closing the stream and its HTTP request), and tools are watched while they run; a run is never
cancelled. A stop anywhere raises `CallStopped`, which `until_stopped` (navi/agent/pump.py) turns
into the run's one `stream_stopped`. Every model call is bounded: a token cap per kind of call, and
first-token and idle timeouts. While no token flows, `status` events say what Navi is doing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from pydantic import MISSING

from navi import runctx
from navi.agent import subagents
from navi.agent.background import BackgroundWork
from navi.agent.binding import RunBinder
from navi.agent.budget import Budget
from navi.agent.compression.in_turn import TurnCompression
from navi.agent.compression.shorten import LongMessages, saving
from navi.agent.context import StoppedQuestions, SystemParts, build_context, unanswered, unanswered_marker
from navi.agent.disclosure import disclose
from navi.agent.events import AgentEvent, ErrorEvent, Status, StreamEnd, StreamStopped
from navi.agent.loop import FAILURE_NOTE as FAILURE_NOTE
from navi.agent.loop import LIMIT_NOTE as LIMIT_NOTE
from navi.agent.loop import STOPPED_CALLING_TOOLS as STOPPED_CALLING_TOOLS
from navi.agent.loop import Loop
from navi.agent.parts import AgentParts
from navi.agent.persistence import RunWriter
from navi.agent.planning import needs_plan, plan_phase
from navi.agent.pump import until_stopped
from navi.agent.quoting import TurnDocuments
from navi.agent.research import ResearchConfig, Researcher
from navi.agent.retry import NOTHING_TO_RETRY, drop_broken_answer, failed_turn, record_failure
from navi.agent.run import RunState
from navi.agent.said import user_message
from navi.agent.tool_batch import ToolRunner
from navi.agent.turns import (
    DEFAULT_OPTIONS,
    Continue,
    FromQueue,
    NewMessage,
    Research,
    Retry,
    RunControl,
    Turn,
    TurnOptions,
    as_turn,
    steered,
)
from navi.agent.windows import ContextWindows
from navi.agent.workers import EndedTurn, after_turn
from navi.llm.attached import AttachedFile
from navi.llm.calls import CallLimits, CallStopped
from navi.llm.errors import LLMError
from navi.llm.messages import Message, ToolSpec
from navi.llm.messages import with_files as with_files
from navi.llm.messages import without_files as without_files
from navi.llm.prices import Prices
from navi.llm.tokens import estimate_message_tokens, estimate_messages_tokens
from navi.profiles.base import AgentProfile
from navi.sessions.continuations import NOTHING_TO_CONTINUE, continuable
from navi.sessions.models import Session
from navi.sessions.store import SessionNotFound

log = structlog.stdlib.get_logger(__name__)


class AgentRunError(Exception):
    """A non-streaming run ended with an error (the message is meant for the user)."""


@dataclass
class AgentConfig:
    persona: str = ""
    num_ctx: int = 65536
    think: bool = True
    tool_result_max_chars: int = 16_000
    # Messages older than the recent turns and longer than this (tokens) go to the model shortened,
    # recallable by key (navi/agent/compression/shorten.py); 0 sends them whole.
    long_message_tokens: int = 1500
    planning: bool = True
    planning_skip_words: int = 0  # (the settings ship 12: navi/agent/planning.py `needs_plan`)
    # The likely tools' schemas, the rest listed one line each (navi/agent/disclosure.py); False:
    # every schema on every call.
    tool_disclosure: bool = True
    max_consecutive_tool_failures: int = 3
    stop_grace_seconds: float = 5.0
    limits: CallLimits = field(default_factory=CallLimits)
    max_tokens_answer: int = 2048
    max_tokens_planning: int = 160
    max_tokens_naming: int = 24
    # A question stopped before any answer: "mark" tells the model so, "omit" leaves it out.
    stopped_questions: StoppedQuestions = "mark"
    research: ResearchConfig = field(default_factory=ResearchConfig)  # a `Research` turn's budgets
    prices: Prices = field(default_factory=Prices)  # what models cost (LLM_PRICE_PER_MTOK; none: no cost)


class Agent:
    def __init__(self, config: AgentConfig, parts: AgentParts) -> None:
        self.config = config
        self.backends = backends = parts.backends
        self.profiles = profiles = parts.profiles
        self.tools = tools = parts.tools
        self.sessions = sessions = parts.sessions
        self.compressor = compressor = parts.compressor
        self.workers = list(parts.workers)
        self.memory_summary = parts.memory_summary
        self.instructions = parts.instructions
        self.user_tools = parts.user_tools or (lambda: [])
        # Tools every profile gets besides its list and the user tools (MCP servers' tools), by profile id.
        self.offered_tools = parts.offered_tools or (lambda _profile_id: [])
        self.on_session_end = list(parts.on_session_end)
        self.windows = parts.windows or ContextWindows(backends, profiles, config.num_ctx)
        self.budget = Budget(config, self.windows)
        self.writer = RunWriter(sessions)
        self.compression = TurnCompression(compressor, self.budget, self.writer)
        # Where calls that need the user's consent wait for it; the API delivers the answers.
        self.approvals = approvals = parts.approvals
        self.quotes = TurnDocuments(parts.documents, sessions)  # passages of the user's documents, per turn
        self.tool_runner = ToolRunner(tools, self.writer, config, approvals)
        self.binder = RunBinder(
            config,
            backends=backends,
            profiles=profiles,
            tools=tools,
            budget=self.budget,
            tool_names=lambda p: [*p.enabled_tools, *self.user_tools(), *self.offered_tools(p.id)],
            memory=self._memory,
            state=compressor.state.shared,  # the memory snapshots, where the compressor keeps its findings
        )
        self.binder.picked_model = parts.picked_model
        self.loop = Loop(
            config,
            budget=self.budget,
            writer=self.writer,
            compression=self.compression,
            tool_runner=self.tool_runner,
            long_messages=lambda: self.long_messages,
            rebind=self.binder.rebind,
            next_memory=self.binder.next_memory,
        )
        self.loop.clock = parts.clock
        self.research = Researcher(config.research, config.num_ctx, tools, self.tool_runner, self.binder)
        self.background = BackgroundWork()
        self.active: set[str] = set()  # sessions with a turn in progress (memory extraction skips them)

    async def _memory(self, owner: str) -> str | None:
        return await self.memory_summary(owner) if self.memory_summary else None

    async def session_profile(self, session: Session) -> AgentProfile:
        """The profile a session's calls run in: its own, with its model and instructions if it has
        them (else the model its owner picked for the profile), and its owner's custom instructions."""
        base = self.profiles.of_session(session.profile_id)
        model = session.model or await self.binder.owners_model(session.owner, base)
        profile = base.for_session(session.system_prompt, model)
        return profile.for_user(await self.instructions(session.owner)) if self.instructions else profile

    def spawn_background(self, coro: Any) -> asyncio.Task[None]:
        return self.background.spawn(coro)

    async def settle(self) -> None:
        """Wait for background work (session naming) to finish: for shutdown and tests."""
        await self.background.settle()

    # --- what the model sees ---------------------------------------------------------------------
    @property
    def long_messages(self) -> LongMessages:
        """Which old messages a call sends shortened; "recent" means what compression keeps."""
        return LongMessages(self.config.long_message_tokens, self.compressor.settings.keep_recent)

    def model_view(
        self, profile: AgentProfile, context: Sequence[Message], memory: str | None = None, owner: str = ""
    ) -> list[Message]:
        """The messages a model call in `profile` would send for `context` (`owner`'s skills listed;
        empty: the owner's): the one place the system prompt is built (the engine,
        `GET /sessions/{id}/context` and archives use it)."""
        view = self.binder.tool_view(profile)
        split = disclose(view, profile.core_tools if self.config.tool_disclosure else view.names)
        return build_context(
            SystemParts(self.config.persona, profile, memory, self.binder.tool_index(split, owner)),
            context,
            long_messages=self.long_messages,
            stopped=self.config.stopped_questions,
        )

    def view_tokens(self, context: Sequence[Message]) -> int:
        """Estimated tokens of `context` as a model call sends it (old long messages shortened)."""
        return estimate_messages_tokens(context) - saving(context, self.long_messages)

    def system_prompt(self, profile: AgentProfile, memory: str | None = None) -> str:
        return self.model_view(profile, [], memory)[0].content or ""

    def tool_specs(self, profile: AgentProfile) -> list[ToolSpec]:
        """The tools a profile's model is offered (its list, user tools enabled for all, and the MCP
        servers' tools its profile may use)."""
        return self.binder.tool_view(profile).specs()

    # --- public entry points ---------------------------------------------------------------------
    async def run_stream(
        self,
        session_id: str,
        turn: Turn | str,
        options: TurnOptions = DEFAULT_OPTIONS,
        control: RunControl | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run one turn of a stored session, yielding events as they happen.

        `turn` (navi/agent/turns.py; a string is a new message): a `NewMessage` is committed
        before anything else, even loading the session, and `control.on_stored` called: only then
        may the server acknowledge it (one small transaction, about a millisecond on SQLite). A
        `Retry` runs the latest failed turn again on its stored message; a `Continue` goes on with
        the cut-off answer it names. `options.planning=False` skips the planning phase;
        `options.unattended` settles approvals at once (see `ApprovalGate.screen`). `control`
        lends the run its stop event and the steering messages sent since it was last asked (they
        join the turn before its next model call, marked `steered`).
        """
        turn = as_turn(turn)
        control = control or RunControl()
        self.active.add(session_id)
        try:
            user = None
            if isinstance(turn, NewMessage | Research):  # a question to research is stored as a message is
                said = (
                    turn
                    if isinstance(turn, NewMessage)
                    else NewMessage(turn.content, message_id=turn.message_id)
                )
                user = user_message(said.content, said.images, said.files, said.message_id, said.sender)
                await self.sessions.append(session_id, display=[user], context=[user])
                if control.on_stored is not None:
                    control.on_stored()
            session = await self.sessions.get(session_id, display=False)
            if session is None:
                raise SessionNotFound(session_id)
            profile = await self.session_profile(session)
            ctx = runctx.RunContext(
                session_id=session_id,
                profile_id=profile.id,
                browser_profile=profile.browser_profile,
                owner=session.owner,
                stop_event=control.stop_event,
                unattended=options.unattended,
                steering=None if control.steering is None else steered(control.steering),
            )
            with structlog.contextvars.bound_contextvars(session_id=session_id), runctx.using(ctx):
                stopped = False
                events = self._turn_of(turn, user, session, profile, ctx, options)
                try:  # `until_stopped`, inlined: one generator less for every token to pass through
                    async with contextlib.aclosing(events):
                        async for event in events:
                            if isinstance(event, StreamStopped):
                                stopped = True  # said once every write of the turn is in, below
                                continue
                            yield event
                except CallStopped:
                    stopped = True
                if stopped:  # every write of the turn is in: did anything answer the question?
                    await self._mark_unanswered(session_id)
                    yield StreamStopped(message_id=await self._stopped_answer(session_id))
        finally:
            self.active.discard(session_id)

    def _turn_of(
        self,
        turn: Turn,
        user: Message | None,
        session: Session,
        profile: AgentProfile,
        ctx: runctx.RunContext,
        options: TurnOptions,
    ) -> AsyncGenerator[AgentEvent, None]:
        """The turn's events, by its kind."""
        match turn:
            case NewMessage():
                assert user is not None  # stored by `run_stream`
                return self._turn(session, profile, ctx, user, options.planning)
            case Retry():
                return self._retry(session, profile, ctx, options.planning)
            case Continue(answer_id=answer_id):
                return self._continuation(session, profile, ctx, answer_id)
            case Research():
                assert user is not None  # stored by `run_stream`
                return self.research.turn(session, profile, ctx, user)
            case FromQueue():
                raise TypeError("a queued turn is taken from the queue by the run manager first")

    async def _stopped_answer(self, session_id: str) -> str | MISSING:
        """The id of the answer a stop left part-written, which `continue` goes on with (MISSING
        when there is none)."""
        shown = await self.sessions.get(session_id)
        path = shown.messages if shown is not None else []
        if not path or continuable(path, path[-1].id) is None:
            return MISSING
        return path[-1].id

    async def _mark_unanswered(self, session_id: str) -> None:
        """A turn stopped before any answer: a marker after its question, in the context only, so
        the next question is not merged into it (`build_context` says it was stopped, or leaves
        it out)."""
        session = await self.sessions.get(session_id, display=False)
        question = unanswered(session.context) if session is not None else None
        if question is not None:
            with contextlib.suppress(SessionNotFound):
                await self.sessions.append(session_id, context=[unanswered_marker(question)])

    async def run(
        self,
        session_id: str,
        message: str,
        images: Sequence[str] | None = None,
        files: Sequence[AttachedFile] | None = None,
        *,
        stop_event: asyncio.Event | None = None,
    ) -> str:
        """One turn without streaming or planning; returns the answer or raises `AgentRunError`."""
        answer, error = "", None
        turn = self.run_stream(
            session_id,
            NewMessage(message, images or (), files or ()),
            TurnOptions(planning=False),
            RunControl(stop_event=stop_event or asyncio.Event()),
        )
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
        ctx = subagents.subagent_context(parent, profile_id)
        try:
            context = [Message.user(message)]
            run = await self.binder.new_run(
                ctx, self.profiles.get(profile_id), context, persistent=False, stream=False
            )
        except CallStopped:
            return subagents.NOT_STARTED
        except LLMError as exc:
            return subagents.failed(exc)
        run.grew(estimate_messages_tokens(run.context) + run.fixed)
        try:
            with runctx.using(ctx):
                why_not = await subagents.outcome(until_stopped(self.loop.steps(run)), parent)
            return run.final_text if why_not is None else why_not
        finally:
            await self.end_session(ctx.session_id)

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
    async def _retry(
        self, session: Session, profile: AgentProfile, ctx: runctx.RunContext, planning: bool
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run the latest failed turn again: its message is stored already (display and context)."""
        user = await failed_turn(self.sessions, session.id)
        if user is None:
            yield ErrorEvent(message=NOTHING_TO_RETRY, code="nothing_to_retry")
            return
        async for event in self._turn(session, profile, ctx, user, planning, retry=True):
            yield event

    async def _continuation(
        self, session: Session, profile: AgentProfile, ctx: runctx.RunContext, message_id: str
    ) -> AsyncGenerator[AgentEvent, None]:
        """Go on with the cut-off answer `message_id` names (navi/sessions/continuations.py): one
        model call on the context as it is plus the note for that call only, its reply stored as
        the answer's child, marked `continues`. Planning is skipped. Anything else is refused
        (`nothing_to_continue`), storing nothing. A failure leaves no failure record (Retry does not
        apply): what a broken stream wrote is kept as a part, and the answer can be continued again."""
        shown = await self.sessions.get(session.id)
        last = continuable(shown.messages if shown is not None else [], message_id)
        if last is None:
            yield ErrorEvent(message=NOTHING_TO_CONTINUE, code="nothing_to_continue")
            return
        try:
            run = await self.binder.new_run(ctx, profile, list(session.context), persistent=True, stream=True)
        except LLMError as exc:
            yield ErrorEvent.of(exc)
            return
        if session.context_token_count:
            run.counted(session.context_token_count)
        else:
            run.counted(run.fixed + self.view_tokens(run.context))
        run.continues = last.id
        finished = False
        try:
            async for event in self.loop.steps(run):
                finished = finished or isinstance(event, StreamEnd)
                yield event
        finally:
            await self.writer.flush(run)
        if finished:
            async for event in self._after(run, session, ""):
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
    ) -> AsyncGenerator[AgentEvent, None]:
        """One turn on `user`'s message, already stored: `session` (loaded after it was) ends
        with it. `retry`: the message is that of a failed turn, run again.

        A turn that ends with an error leaves a record of it in the display history (never in the
        context) before the error is yielded (navi/agent/retry.py).
        """
        try:
            if not self.windows.known(profile):
                yield Status(phase="preparing", detail="asking the model server about the model")
            run = await self.binder.new_run(ctx, profile, list(session.context), persistent=True, stream=True)
        except LLMError as exc:
            yield await record_failure(self.sessions, session.id, user, ErrorEvent.of(exc))
            return
        self._count_context(run, session.context_token_count, user, retry)
        if retry:
            run.retry_of = user.id
            await drop_broken_answer(self.sessions, run, self.view_tokens)
        finished = False
        try:
            await self.quotes.before(run, user, self.budget.reserve(run))
            async for event in self.compression.before_answer(run):
                yield event
            wanted = planning and self.config.planning and run.profile.planning_enabled and not ctx.stopped
            if wanted and needs_plan(user.content or "", self.config.planning_skip_words):
                answer = self.loop.messages(run)
                async for event in plan_phase(run, self.writer, self.sessions, self.config, answer):
                    yield event
            async for event in self.loop.steps(run):
                finished = finished or isinstance(event, StreamEnd)
                if isinstance(event, ErrorEvent):
                    await self.writer.flush(run)  # the record goes after everything the turn saved
                    event = await record_failure(self.sessions, session.id, user, event)
                yield event
        finally:
            await self.writer.flush(run)  # every write of the turn is in, even if it ends early
            await self.quotes.after(run)
        if finished:
            async for event in self._after(run, session, user.content or ""):
                yield event

    def _after(self, run: RunState, session: Session, user_text: str) -> AsyncIterator[AgentEvent]:
        """The post-turn work of an answered turn (summary, naming), as events."""
        turn = EndedTurn(
            detached_llm=self.binder.backend(run.profile, None),
            overhead_tokens=self.budget.overhead(run),
            needs_name=session.name is None,
            user_text=user_text,
            background=self.spawn_background,
        )
        return after_turn(self.workers, run, turn, warm=self.loop.warm, cached_prompt=self.loop.cached_prompt)

    def _count_context(self, run: RunState, stored: int, user: Message, retry: bool) -> None:
        """The context's size as a turn starts: the stored count, or an estimate without one."""
        if not stored:
            run.counted(run.fixed + self.view_tokens(run.context))
            return
        if retry:
            run.counted(stored)
            return
        # The stored count was of the calls before this message, which is pending until the next
        # call. With it, the oldest recent turn ages out of the recent ones: its long messages are
        # sent shortened from now on.
        policy = self.long_messages
        aged = saving(run.context, policy) - saving(run.context[:-1], policy)
        run.counted(max(run.fixed, stored - aged))
        run.grew(estimate_message_tokens(user))
