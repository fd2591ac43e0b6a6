"""The in-process scripted backend behaves like a real one (chunks, counts, failures, closes)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from navi.llm import CallOptions, Message
from navi.llm.chunks import StreamFinal, TextDelta, ToolCallsChunk
from navi.llm.errors import ModelNotFound, StreamInterrupted
from navi.testing.script import Reply, Script, ScriptedCall
from navi.testing.scripted import ScriptedBackend

OPTS = CallOptions(model="m")


async def test_queue_then_responder() -> None:
    backend = ScriptedBackend(Script(["first"], responder=lambda req: f"echo {req.last_user_text}"))
    one = await backend.complete([Message.user("a")], OPTS)
    two = await backend.complete([Message.user("b")], OPTS)
    assert (one.text, two.text) == ("first", "echo b")
    assert [r.last_user_text for r in backend.requests] == ["a", "b"]


async def test_tool_calls_and_counts() -> None:
    backend = ScriptedBackend(
        [Reply(tool_calls=[ScriptedCall("todo", "{bad")], prompt_tokens=9, completion_tokens=1)]
    )
    chunks = [c async for c in backend.stream_complete([Message.user("x")], OPTS)]
    call = next(c for c in chunks if isinstance(c, ToolCallsChunk)).tool_calls[0]
    assert call.arguments_error and call.raw_arguments == "{bad"
    final = chunks[-1]
    assert (
        isinstance(final, StreamFinal)
        and final.usage.prompt_tokens == 9
        and final.finish_reason == "tool_calls"
    )


async def test_failures_and_unknown_models() -> None:
    backend = ScriptedBackend([Reply(text="abcdefgh" * 4, error_after=2, error="boom")], models=["m"])
    got = []
    with pytest.raises(StreamInterrupted):
        async for chunk in backend.stream_complete([Message.user("x")], OPTS):
            got.append(chunk)
    assert len([c for c in got if isinstance(c, TextDelta)]) == 2
    with pytest.raises(ModelNotFound):
        await backend.complete([Message.user("x")], CallOptions(model="other"))
    assert backend.aborted_streams == 1


async def test_wait_for_holds_the_stream_and_close_is_recorded() -> None:
    gate = asyncio.Event()
    backend = ScriptedBackend([Reply(text="0123456789", chunk_chars=2, wait_for=gate, wait_after=2)])
    stream = backend.stream_complete([Message.user("x")], OPTS)
    seen = []
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for chunk in stream:
            seen.append(chunk)
            if len(seen) == 2:
                break
    assert backend.aborted_streams == 1 and backend.completed_streams == 0
