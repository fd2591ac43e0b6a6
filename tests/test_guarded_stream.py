"""`guarded()` reads a stream in the caller's own task (no pump task): its limits and a stop cancel
that task only while it waits, and each cancellation becomes the right error and leaves the task
as it was. Scripted streams, for exact timing; the HTTP path is in test_agent_bounds.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from navi.llm.calls import CallLimits, CallStopped, guarded
from navi.llm.chunks import Chunk, TextDelta
from navi.llm.errors import BackendTimeout

QUICK = CallLimits(first_token=5.0, idle=0.2)


async def read(stream: AsyncIterator[Chunk]) -> list[str]:
    return [chunk.text async for chunk in stream if isinstance(chunk, TextDelta)]


async def test_a_quiet_stream_fails_after_the_idle_limit_and_the_task_is_left_as_it_was() -> None:
    async def quiet() -> AsyncIterator[Chunk]:
        yield TextDelta(text="a")
        await asyncio.sleep(30)
        yield TextDelta(text="never")

    with pytest.raises(BackendTimeout, match=r"stopped sending for 0\.2 s"):
        await read(guarded(quiet(), stop=None, limits=QUICK))
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
    await asyncio.sleep(0.01)  # no cancellation left pending for the caller's next wait


async def test_slow_chunks_within_the_limit_are_read_whole() -> None:
    """The idle limit counts from each wait, not from the first: 10 chunks 0.1 s apart are 1 s of
    stream under a 0.2 s limit."""

    async def steady() -> AsyncIterator[Chunk]:
        for i in range(10):
            await asyncio.sleep(0.1)
            yield TextDelta(text=str(i))

    assert await read(guarded(steady(), stop=None, limits=QUICK)) == [str(i) for i in range(10)]


async def test_a_stream_that_swallows_its_cancellation_still_fails() -> None:
    async def swallowing() -> AsyncIterator[Chunk]:
        yield TextDelta(text="a")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            pass
        yield TextDelta(text="after")

    with pytest.raises(BackendTimeout, match="stopped sending"):
        await read(guarded(swallowing(), stop=None, limits=QUICK))
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0


async def test_stop_while_waiting_raises_call_stopped_and_closes_the_stream() -> None:
    closed = asyncio.Event()

    async def waiting() -> AsyncIterator[Chunk]:
        try:
            yield TextDelta(text="a")
            await asyncio.sleep(30)
        finally:
            closed.set()

    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, stop.set)
    with pytest.raises(CallStopped):
        await read(guarded(waiting(), stop=stop, limits=CallLimits(first_token=5, idle=5)))
    assert closed.is_set()
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0


async def test_a_cancellation_from_outside_is_not_turned_into_an_error() -> None:
    async def waiting() -> AsyncIterator[Chunk]:
        yield TextDelta(text="a")
        await asyncio.sleep(30)

    reader = asyncio.create_task(read(guarded(waiting(), stop=asyncio.Event(), limits=QUICK)))
    await asyncio.sleep(0.05)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
