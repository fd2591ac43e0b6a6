"""The stop-aware stream pump: one model call's chunks become events as they arrive.

The stream is closed however the pump ends (an answer, an error, or stop: the run's backend is a
`GuardedBackend` bound to its stop event, which raises `CallStopped` and closes the HTTP request).
Thinking opens and closes around the text; a run that does not stream (a subagent) gets its
reasoning as one `turn_thinking` event at the end.

Stop is handled in one place, `until_stopped`: a phase that sees the run stopped raises
`CallStopped` (the guarded backend does so for model calls), which ends the run's events with one
`stream_stopped`. What a phase must keep on stop (a partial answer) it saves before re-raising.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from navi.agent.events import (
    AgentEvent,
    ModelFallback,
    StreamStopped,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    TurnThinking,
)
from navi.agent.run import RunState
from navi.llm.base import CallOptions
from navi.llm.calls import CallStopped
from navi.llm.chunks import CompletionBuilder, Fallback, StreamFinal
from navi.llm.chunks import TextDelta as TextChunk
from navi.llm.chunks import ThinkingDelta as ThinkingChunk
from navi.llm.messages import Message, ToolSpec


@dataclass
class CallTimes:
    """When one model call started, gave its first token (thinking, text or tool calls) and ended,
    on `clock` (seconds; `time.monotonic` unless a test gives its own)."""

    clock: Callable[[], float] = time.monotonic
    started: float | None = None
    first: float | None = None
    ended: float | None = None

    def start(self) -> None:
        self.started, self.first, self.ended = self.clock(), None, None

    def token(self) -> None:
        if self.first is None:
            self.first = self.clock()

    def end(self) -> None:
        self.ended = self.clock()

    @property
    def ttft_ms(self) -> float | None:
        return _ms(self.started, self.first)

    @property
    def duration_ms(self) -> float | None:
        return _ms(self.started, self.ended)


def _ms(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None else round(max(0.0, end - start) * 1000, 1)


async def pump(
    run: RunState,
    builder: CompletionBuilder,
    messages: Sequence[Message],
    options: CallOptions,
    specs: Sequence[ToolSpec],
    times: CallTimes | None = None,
) -> AsyncIterator[AgentEvent]:
    times = times or CallTimes()
    times.start()
    stream = run.llm.stream_complete(list(messages), options, list(specs) or None)
    thinking_open = False
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for chunk in stream:
            if isinstance(chunk, Fallback):  # a model chain moved on: said now, no token yet
                yield _fallback(chunk)
                continue
            if not isinstance(chunk, StreamFinal):
                times.token()
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
    times.end()
    if not run.stream and builder.thinking:
        yield TurnThinking(thinking="".join(builder.thinking), is_subagent=run.is_subagent)


def _fallback(chunk: Fallback) -> ModelFallback:
    return ModelFallback(
        endpoint=chunk.endpoint,
        model=chunk.model,
        reason=chunk.reason,
        next_endpoint=chunk.next_endpoint,
        next_model=chunk.next_model,
        cooling=chunk.cooling,
    )


async def until_stopped(events: AsyncGenerator[AgentEvent, None]) -> AsyncIterator[AgentEvent]:
    """`events`, ended by one `stream_stopped` when the run is stopped (`CallStopped`) in them."""
    try:
        async with contextlib.aclosing(events):
            async for event in events:
                yield event
    except CallStopped:
        yield StreamStopped()


def check_stop(run: RunState) -> None:
    """Raise `CallStopped` when the user has stopped the run."""
    if run.ctx.stopped:
        raise CallStopped()
