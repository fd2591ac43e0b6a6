"""The loop of one run: model call → tools → model call → … → answer.

Each step: stop is checked; the context is compressed if it passed the threshold; the step's tools
are chosen (none at the step limit, or after several failed calls in a row) and fitted to the
window, condensing the earlier conversation when even that does not fit; the model is called, its
reply saved; an answer ends the run (`stream_end`), tool calls run (navi/agent/tool_batch.py) and
the next step follows. Stop raises `CallStopped` from wherever it is noticed (what a model call had
produced is kept); the caller ends the run's events there (`until_stopped`, navi/agent/pump.py).
The run's token counts come from each call's usage (`RunState.called`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Protocol

import structlog

from navi.agent.budget import Budget
from navi.agent.compression.continued import ConversationPrompt
from navi.agent.compression.in_turn import TurnCompression
from navi.agent.compression.shorten import LongMessages
from navi.agent.context import StoppedQuestions, SystemParts, build_context
from navi.agent.events import (
    AgentEvent,
    ErrorEvent,
    Notice,
    Status,
    Steered,
    StreamEnd,
    TurnUsage,
    said_by_user,
)
from navi.agent.persistence import RunWriter
from navi.agent.pump import CallTimes, check_stop, pump
from navi.agent.run import RunState
from navi.agent.tool_batch import ToolRunner
from navi.llm.base import CallKind, CallOptions
from navi.llm.calls import CallStopped
from navi.llm.chunks import Completion, CompletionBuilder, StreamFinal
from navi.llm.errors import ContextOverflow, LLMError
from navi.llm.messages import Message, ToolCall, ToolSpec
from navi.llm.meta import TokenUsage
from navi.llm.prices import Prices
from navi.llm.tokens import estimate_messages_tokens
from navi.sessions.continuations import CONTINUE_NOTE
from navi.tools.base import Intent, SwitchProfile
from navi.tools.registry import ToolView

log = structlog.stdlib.get_logger(__name__)

# Servers that keep a conversation's prompt cached between calls, on this machine or the user's own.
WARM_SERVERS = frozenset({"llama.cpp", "ollama", "lm-studio", "vllm"})

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


class LoopConfig(Protocol):
    persona: str
    think: bool
    num_ctx: int
    max_tokens_answer: int
    max_consecutive_tool_failures: int
    stopped_questions: StoppedQuestions
    prices: Prices


class Loop:
    def __init__(
        self,
        config: LoopConfig,
        *,
        budget: Budget,
        writer: RunWriter,
        compression: TurnCompression,
        tool_runner: ToolRunner,
        long_messages: Callable[[], LongMessages],
        rebind: Callable[[RunState, str], Awaitable[None]],
        next_memory: Callable[[RunState], Awaitable[bool]] | None = None,
    ) -> None:
        self.config = config
        self.budget = budget
        self.writer = writer
        self.compression = compression
        self.tool_runner = tool_runner
        self.long_messages = long_messages  # which old messages a call sends shortened
        self.rebind = rebind  # switch the run to another profile (a tool asked for it)
        self.next_memory = next_memory  # the memory summary of the session's next turn (changed?)
        # What model calls are timed with (an answer's ttft_ms and duration_ms): `AgentParts.clock`.
        self.clock: Callable[[], float] = time.monotonic

    async def steps(self, run: RunState) -> AsyncGenerator[AgentEvent, None]:
        """Model calls and tool batches until an answer or an error. Raises `CallStopped` on stop."""
        limit = max(1, run.profile.max_iterations)
        for step in range(limit + 1):
            check_stop(run)
            async for event in self._steered(run):
                yield event
            if step:  # the turn's start was the engine's (`before_answer`); tool results since may add
                async for event in self.compression.maybe(run):
                    yield event
            note, offered = self._offer(run, last_step=step == limit)
            specs, need = self.budget.fit_tools(run, offered)
            if need + self.budget.reserve(run) > run.window:
                # The model could not summarise: Navi condenses rather than refuse.
                async for event in self.compression.maybe(run, overflowing=True):
                    yield event
                specs, need = self.budget.fit_tools(run, offered)
            if need + self.budget.reserve(run) > run.window:
                yield ErrorEvent(message=self.budget.too_small(run, need), code="context_overflow")
                return
            if notice := self._left_out(run, offered, specs):
                yield notice
            builder = CompletionBuilder()
            times = CallTimes(self.clock)
            try:
                async for event in self._model_turn(run, (builder, times), specs, note, need):
                    yield event
            except LLMError as exc:
                if isinstance(exc, ContextOverflow):  # the server knows better: compress next time
                    run.counted(max(run.size, run.window))
                await self.writer.save_partial(run, builder, error=str(exc))
                yield ErrorEvent.of(exc)
                return
            completion = self._completed(run, builder, specs)
            self._measured(run, completion, times, builder.final)
            reply = completion.message
            calls, hidden = await self.tool_runner.hide_secrets(run, reply)  # never stored
            await self.writer.save(run, display=[reply], context=[reply], tokens=run.size)
            if not reply.tool_calls:
                yield self._answer(run, completion, self.compression.compressor.starts_at(run.window))
                return
            async for event in self._tools(run, calls, hidden, specs):
                yield event
        yield ErrorEvent(message="the run ended without an answer", code="no_answer")  # unreachable

    async def _steered(self, run: RunState) -> AsyncIterator[AgentEvent]:
        """The user's words sent to steer this turn since the last step: stored here, after what
        the turn has done so far, and read by the next model call."""
        if run.ctx.steering is None or run.is_subagent:
            return
        said: list[Message] = await run.ctx.steering()
        if not said:
            return
        run.grew(estimate_messages_tokens(said))
        await self.writer.save(run, display=said, context=said)
        for message in said:
            log.info("turn.steered", message_id=message.id)
            yield Steered(message_id=message.id, message=said_by_user(message))

    def _offer(self, run: RunState, *, last_step: bool) -> tuple[str | None, list[ToolSpec]]:
        """The note and the tools of the next call: none at the step limit or after failures, nor
        when the call continues a cut-off answer (the note asks for the rest of its text)."""
        if run.continues is not None:
            return CONTINUE_NOTE, []
        if last_step:
            return LIMIT_NOTE, []
        if run.failures >= self.config.max_consecutive_tool_failures:
            return FAILURE_NOTE, []
        return None, run.tool_specs()

    @staticmethod
    def _left_out(run: RunState, offered: list[ToolSpec], specs: list[ToolSpec]) -> Notice | None:
        """Say once which tools the window cannot hold, when that changes."""
        left_out = tuple(s.name for s in offered if s not in specs)
        if not left_out or left_out == run.trimmed:
            return None
        run.trimmed = left_out
        log.info("tools.trimmed", window=run.window, left_out=left_out)
        return Notice(
            message=f"The model's context window ({run.window} tokens) cannot hold every tool; "
            f"left out for now: {', '.join(left_out)}."
        )

    def messages(self, run: RunState, note: str | None = None) -> list[Message]:
        """What a model call of `run` sends: the system message, the conversation, `note`."""
        return build_context(
            SystemParts(self.config.persona, run.profile, run.memory, run.tool_index),
            run.disclosure.hinted(run.context) if run.disclosure is not None else run.context,
            note=note,
            long_messages=self.long_messages(),
            texts=None if run.persistent else run.ctx.full_texts,  # a subagent's texts live nowhere else
            stopped=self.config.stopped_questions,
            quoted=run.quoted[:2] if run.quoted is not None else None,
        )

    async def _model_turn(
        self,
        run: RunState,
        call: tuple[CompletionBuilder, CallTimes],
        specs: list[ToolSpec],
        note: str | None,
        need: int,
    ) -> AsyncIterator[AgentEvent]:
        builder, times = call
        messages = self.messages(run, note)
        run.sent = messages
        # Never ask for more than the window has left: a reply cannot push the context past it.
        room = max(self.budget.reserve(run), run.window - need)
        cap = self.config.max_tokens_answer
        options = self._options(run, min(cap, room) or cap)
        yield Status(phase="waiting", detail=f"the model is reading about {need} tokens")
        try:
            async for event in pump(run, builder, messages, options, specs, times):
                yield event
        except CallStopped:
            await self.writer.save_partial(run, builder, stopped=True)
            raise

    def _options(self, run: RunState, max_tokens: int, kind: CallKind = "answer") -> CallOptions:
        return CallOptions(
            model=run.model,
            temperature=run.profile.temperature,
            think=self.config.think,
            num_ctx=self.config.num_ctx,
            max_tokens=max_tokens,
            kind=kind,
        )

    async def warm(self, run: RunState, rewritten: bool) -> None:
        """After a turn whose next prompt differs from this one's beyond the new message — its
        context `rewritten` (a compression after the answer), or the session changed memory, so
        the next turn reads a new memory summary — while the user reads: the server reads the next
        answer's prompt now (the same messages, tools and options, one token written and dropped),
        so the next turn reads only its new message from the cache instead of the summary and the
        turns kept (4.7 s on SmolLM2 in a 4,096-token window), or the whole prompt after a new
        memory summary. Only on a server that keeps prompts cached here (`WARM_SERVERS`; a hosted
        API would bill the read). Raises `CallStopped` when a new message stops the run, `LLMError`
        when the call fails."""
        if not await self._caches(run):
            return
        if self.next_memory is not None and await self.next_memory(run):
            rewritten = True
        if not rewritten:
            return
        prompt = self._prompt(run, 1, "warm")
        if prompt is None:
            return
        await run.llm.complete(prompt.messages, prompt.options, prompt.tools)
        log.info("turn.warmed", session_id=run.ctx.session_id, tokens=run.window - prompt.room)

    async def cached_prompt(self, run: RunState) -> ConversationPrompt | None:
        """After an answer, on a server that keeps prompts cached here: the next answer's prompt
        as the server holds it (for a summary that extends it, navi/agent/compression/continued.py).
        None elsewhere, or when it no longer fits the window."""
        if not await self._caches(run):
            return None
        return self._prompt(run, self.config.max_tokens_answer, "answer")

    @staticmethod
    async def _caches(run: RunState) -> bool:
        return (await run.llm.model_info(run.model)).server in WARM_SERVERS

    def _prompt(self, run: RunState, max_tokens: int, kind: CallKind) -> ConversationPrompt | None:
        specs, need = self.budget.fit_tools(run, run.tool_specs())
        if need + self.budget.reserve(run) > run.window:
            return None
        options = self._options(run, max_tokens, kind)
        return ConversationPrompt(self.messages(run), specs, options, room=run.window - need)

    def _completed(self, run: RunState, builder: CompletionBuilder, specs: list[ToolSpec]) -> Completion:
        """The model's reply as the turn keeps it, and the run's counts as the server gave them."""
        completion = builder.build()
        final = builder.final
        assert final is not None
        if not final.usage.estimated and run.sent:
            self.budget.calibrate(run, run.sent, specs, final.usage.prompt_tokens)
        run.called(final.usage, fixed=self.budget.fixed(run, run.sent[0].content or "", specs))
        reply = completion.message
        usage = final.usage
        reply.metadata.usage = TokenUsage(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            estimated=usage.estimated,
        )
        if completion.finish_reason == "length":
            reply.metadata.finish_reason = "length"
        if reply.tool_calls and not specs:  # no tool was offered: calls are not run, text is the answer
            log.info("tools.unoffered_calls_dropped", calls=[c.name for c in reply.tool_calls])
            reply.tool_calls = []
            reply.content = reply.content or STOPPED_CALLING_TOOLS
        if not reply.tool_calls and run.retry_of is not None:
            reply.metadata.retry_of = run.retry_of
        if run.continues is not None:
            reply.metadata.continues = run.continues
        return completion

    def _measured(
        self, run: RunState, completion: Completion, times: CallTimes, final: StreamFinal | None
    ) -> None:
        """The reply's model call as its metadata keeps it: the model that answered (the one the
        server says served the call, else the one asked; through a chain, the endpoint that wrote
        it and why others were passed over), how long the first token and the whole call took,
        and the cost where the model has a price (issue 48)."""
        meta = completion.message.metadata
        endpoint = final.endpoint if final is not None else ""
        model = completion.model or run.model
        meta.model = model
        if endpoint:
            meta.endpoint = endpoint
            if final is not None and final.switched:
                meta.fallback = list(final.switched)
        if times.ttft_ms is not None:
            meta.ttft_ms = times.ttft_ms
        if times.duration_ms is not None:
            meta.duration_ms = times.duration_ms
        usage = meta.usage
        if usage is not None:
            cost = self.config.prices.cost(
                model, usage.prompt_tokens or 0, usage.completion_tokens or 0, endpoint
            )
            if cost is not None:
                meta.cost = cost

    @staticmethod
    def _answer(run: RunState, completion: Completion, compress_at: int | None) -> StreamEnd:
        run.final_text = completion.message.content or ""
        cut = completion.finish_reason == "length"
        return StreamEnd(
            content=run.final_text,
            context_tokens=run.size,
            max_context_tokens=run.window,
            compress_at_tokens=compress_at,
            finish_reason="length" if cut else "stop",
            message_id=completion.message.id,
            model=completion.message.metadata.model or run.model,
            usage=TurnUsage(
                prompt_tokens=run.spent_prompt,
                completion_tokens=run.spent_completion,
                estimated=run.spent_estimated,
            ),
        )

    async def _tools(
        self, run: RunState, calls: list[ToolCall], hidden: dict[str, frozenset[str]], specs: list[ToolSpec]
    ) -> AsyncIterator[AgentEvent]:
        """Run the reply's tool calls; a profile switch a tool asked for applies from the next call."""
        intents: list[Intent] = []
        names = [s.name for s in specs]
        listed = [n for n in run.disclosure.listed if n not in names] if run.disclosure and specs else []
        offered = ToolView(
            [tool for n in [*names, *listed] if (tool := run.tools.get(n)) is not None], run.tools.aliases
        )
        async for event in self.tool_runner.batch(run, calls, offered, intents, listed, hidden=hidden):
            yield event
        switch = next((i for i in reversed(intents) if isinstance(i, SwitchProfile)), None)
        if switch is not None and switch.profile_id != run.profile.id:  # announced as the tool returned
            await self.rebind(run, switch.profile_id)
