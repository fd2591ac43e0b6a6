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
from navi.llm.deadline import Deadline
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


class _Watch:
    """The limits of one guarded stream, kept without a task or a timer per chunk (`Deadline`).

    The reading task is cancelled (and the cancellation turned into the right error) only while it
    waits for the stream: when the limit that applies to this wait runs out, or when the user stops."""

    def __init__(self, task: asyncio.Task[Any], limits: CallLimits, backend: str, model: str) -> None:
        self.task = task
        self.limits = limits
        self.backend = backend
        self.model = model
        self.first = True
        self.cause: str | None = None  # "timeout" or "stop", once this watch has cancelled the task
        self.deadline = Deadline(lambda: self._cancel("timeout"))

    def waiting(self) -> None:
        self.deadline.start(self.limits.first_token if self.first else self.limits.idle)

    def stop(self) -> None:
        if self.deadline.due is not None and self.cause is None:
            self.deadline.clear()
            self._cancel("stop")

    def _cancel(self, cause: str) -> None:
        self.cause = cause
        self.task.cancel()

    def error(self) -> Exception:
        """What this watch's cancellation means for the caller."""
        if self.cause == "stop":
            return CallStopped()
        if self.first:
            return BackendTimeout(
                f"the model produced no output within {self.limits.first_token:g} s "
                "(LLM_FIRST_TOKEN_TIMEOUT_SECONDS); it may still be loading or the prompt is "
                "too long for this machine",
                backend=self.backend,
                model=self.model,
            )
        return BackendTimeout(
            f"the model stopped sending for {self.limits.idle:g} s in the middle of its reply "
            "(LLM_IDLE_TIMEOUT_SECONDS)",
            backend=self.backend,
            model=self.model,
        )


async def guarded(
    stream: AsyncIterator[Chunk],
    *,
    stop: asyncio.Event | None,
    limits: CallLimits,
    backend: str = "",
    model: str = "",
) -> AsyncIterator[Chunk]:
    """Iterate `stream` within the limits; on stop, close it and raise `CallStopped`.

    The stream is read in the task that iterates this one (HTTP clients want a response read and
    closed in the task that opened it), with nothing between a chunk's arrival and its consumer: no
    pump task, no queue, no timer per chunk (`_Watch`), which is most of what a streamed token
    costs Navi besides the socket itself (docs/benchmarks.md).
    """
    task = asyncio.current_task()  # the one task that reads it (an `async for`)
    assert task is not None, "a guarded stream is read by a task"
    watch = _Watch(task, limits, backend, model)
    watcher = asyncio.create_task(_watch_stop(stop, watch)) if stop is not None else None
    try:
        while True:
            if stop is not None and stop.is_set():  # before the stream starts, too
                raise CallStopped
            watch.waiting()
            chunk: Chunk | None = None
            try:
                chunk = await anext(stream)
            except asyncio.CancelledError:
                if watch.cause is None or task.uncancel() > 0:
                    raise  # cancelled by someone else: not this call's limits
                raise watch.error() from None
            except StopAsyncIteration:
                pass
            except Exception:
                if watch.cause is None:
                    raise
            finally:
                watch.deadline.clear()
            if watch.cause is not None:  # the stream turned its cancellation into something else
                task.uncancel()
                raise watch.error()
            if chunk is None:
                return
            watch.first = False
            yield chunk
    finally:
        watch.deadline.close()
        if watcher is not None:
            watcher.cancel()  # a helper task of this stream, never the caller
        with contextlib.suppress(Exception):
            await stream.aclose()  # type: ignore[attr-defined]


async def _watch_stop(event: asyncio.Event, watch: _Watch) -> None:
    await event.wait()
    watch.stop()


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


def bound(backend: LLMBackend, limits: CallLimits, stop: asyncio.Event | None = None) -> LLMBackend:
    """`backend` with its calls within `limits` and abandoned on `stop`. A backend that routes
    between others (a model chain, navi/llm/chain.py) bounds each of them itself, so a first-token
    timeout of one leaves the next its own time."""
    bounded = getattr(backend, "bounded", None)
    return bounded(limits, stop) if bounded is not None else GuardedBackend(backend, limits, stop)
