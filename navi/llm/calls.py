"""Bounded model calls: every call can be stopped at once and none can hang.

`guarded()` wraps a backend's chunk stream: it fails when the first chunk takes longer than the
first-token timeout (loading the model and reading the prompt) or when the stream then goes quiet
for longer than the idle timeout, and it raises `CallStopped` as soon as the stop event is set,
closing the stream (and with it the HTTP request). `GuardedBackend` applies that to every call made
through a backend — the answer, planning, summaries, naming — so none of them needs to know.
`stoppable()` does the same for any other awaitable (a model-information lookup).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import Chunk
from navi.llm.errors import BackendTimeout
from navi.llm.messages import Message, ToolSpec

T = TypeVar("T")


class CallStopped(Exception):
    """The user pressed stop while a model call (or a lookup) was under way; it was abandoned."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallLimits:
    first_token: float = 300.0
    idle: float = 60.0
    probe: float = 15.0  # model-information lookups: a slow answer falls back to the defaults


async def guarded(
    stream: AsyncIterator[Chunk],
    *,
    stop: asyncio.Event | None,
    limits: CallLimits,
    backend: str = "",
    model: str = "",
) -> AsyncIterator[Chunk]:
    """Iterate `stream` within the limits; on stop, close it and raise `CallStopped`.

    One pump task reads the stream (HTTP clients want a response read and closed in the task that
    opened it) into a queue; a stop puts a marker in the same queue. The reader only ever awaits the
    queue, with the timeout that applies at that moment.
    """
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for chunk in stream:
                queue.put_nowait(("chunk", chunk))
            queue.put_nowait(("end", None))
        except Exception as exc:
            queue.put_nowait(("error", exc))
        finally:
            with contextlib.suppress(Exception):
                await stream.aclose()  # type: ignore[attr-defined]

    async def watch(event: asyncio.Event) -> None:
        await event.wait()
        queue.put_nowait(("stop", None))

    reader = asyncio.create_task(pump())
    watcher = asyncio.create_task(watch(stop)) if stop is not None else None
    first = True
    try:
        while True:
            try:
                if queue.empty():  # waiting: bounded by the limit that applies now
                    async with asyncio.timeout(limits.first_token if first else limits.idle):
                        kind, item = await queue.get()
                else:  # already read: no timer, no task (this runs once per chunk)
                    kind, item = queue.get_nowait()
            except TimeoutError:
                if first:
                    raise BackendTimeout(
                        f"the model produced no output within {limits.first_token:g} s "
                        "(LLM_FIRST_TOKEN_TIMEOUT_SECONDS); it may still be loading or the prompt is "
                        "too long for this machine",
                        backend=backend,
                        model=model,
                    ) from None
                raise BackendTimeout(
                    f"the model stopped sending for {limits.idle:g} s in the middle of its reply "
                    "(LLM_IDLE_TIMEOUT_SECONDS)",
                    backend=backend,
                    model=model,
                ) from None
            if kind == "chunk":
                first = False
                yield item
            elif kind == "end":
                return
            elif kind == "error":
                raise item
            else:
                raise CallStopped
    finally:
        if watcher is not None:
            watcher.cancel()  # helper tasks of this stream, never the caller
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


async def stoppable(aw: Awaitable[T], stop: asyncio.Event | None, limit: float | None = None) -> T:
    """Await `aw`, abandoning it (cancelled) when `stop` is set (`CallStopped`) or time runs out."""
    task = asyncio.ensure_future(aw)
    waiter = asyncio.ensure_future(stop.wait()) if stop is not None else None
    try:
        pending = {task} if waiter is None else {task, waiter}
        done, _ = await asyncio.wait(pending, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if waiter is not None and waiter in done:
            raise CallStopped
        raise TimeoutError
    finally:
        if waiter is not None:
            waiter.cancel()


class GuardedBackend(LLMBackend):
    """A view of a backend whose calls obey `CallLimits` and one run's stop event.

    It owns nothing: closing it does not close the backend it wraps.
    """

    def __init__(self, inner: LLMBackend, limits: CallLimits, stop: asyncio.Event | None = None) -> None:
        self.inner = inner
        self.limits = limits
        self.stop = stop
        self.name = inner.name

    def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        return guarded(
            self.inner.stream_complete(messages, options, tools),
            stop=self.stop,
            limits=self.limits,
            backend=self.inner.name,
            model=options.model,
        )

    async def model_info(self, model: str) -> ModelInfo:
        """The server's answer; `BackendTimeout` when it does not answer within the probe limit."""
        try:
            return await stoppable(self.inner.model_info(model), self.stop, self.limits.probe)
        except TimeoutError:
            raise BackendTimeout(
                f"the model server did not describe {model} within {self.limits.probe:g} s",
                backend=self.inner.name,
                model=model,
            ) from None

    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        return await stoppable(self.inner.embed(texts, model), self.stop)

    async def list_models(self) -> list[str]:
        return await self.inner.list_models()

    async def status(self) -> ServerStatus:
        return await self.inner.status()

    async def aclose(self) -> None:
        """Nothing to release: the wrapped backend belongs to the registry."""
