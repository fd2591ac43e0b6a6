"""The stop-aware stream pump: one model call's chunks become events as they arrive.

The stream is closed however the pump ends (an answer, an error, or stop: the run's backend is a
`GuardedBackend` bound to its stop event, which raises `CallStopped` and closes the HTTP request).
Thinking opens and closes around the text; a run that does not stream (a subagent) gets its
reasoning as one `turn_thinking` event at the end.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from navi.agent.events import AgentEvent, TextDelta, ThinkingDelta, ThinkingEnd, TurnThinking
from navi.agent.run import RunState
from navi.llm.base import CallOptions
from navi.llm.chunks import CompletionBuilder
from navi.llm.chunks import TextDelta as TextChunk
from navi.llm.chunks import ThinkingDelta as ThinkingChunk
from navi.llm.messages import Message, ToolSpec


async def pump(
    run: RunState,
    builder: CompletionBuilder,
    messages: Sequence[Message],
    options: CallOptions,
    specs: Sequence[ToolSpec],
) -> AsyncIterator[AgentEvent]:
    stream = run.llm.stream_complete(list(messages), options, list(specs) or None)
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
