"""Model calls as operators see them: what each call was for, how long it took, how it ended.

A `CallObserver` is told of every call made through an `ObservedBackend` (the view the backend
registry hands out for calls: `BackendRegistry.observed`): `start` when the stream is first read,
then each chunk, then its end (`error`: what ended it early, `GeneratorExit` when the caller closed
it, a stop). The base class observes nothing and the registry then hands out the plain backend,
so a Navi without metrics or traces pays nothing. `navi.telemetry` implements the real one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import Chunk
from navi.llm.messages import Message, ToolSpec


class CallWatch(Protocol):
    """One call under observation."""

    def chunk(self, chunk: Chunk) -> None: ...

    def end(self, error: BaseException | None) -> None: ...


class _Unwatched:
    def chunk(self, chunk: Chunk) -> None:
        return None

    def end(self, error: BaseException | None) -> None:
        return None


UNWATCHED = _Unwatched()


class CallObserver:
    """Observes nothing. `active` False: the registry does not wrap its backends at all."""

    active = False

    def start(self, *, backend: str, options: CallOptions) -> CallWatch:
        return UNWATCHED


class ObservedBackend(LLMBackend):
    """A view of a backend whose model calls `observer` sees. It owns nothing (like `GuardedBackend`)."""

    def __init__(self, inner: LLMBackend, observer: CallObserver) -> None:
        self.inner = inner
        self.observer = observer
        self.name = inner.name
        self.where = inner.where

    def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        return self._observed(messages, options, tools)

    async def _observed(
        self, messages: Sequence[Message], options: CallOptions, tools: Sequence[ToolSpec] | None
    ) -> AsyncIterator[Chunk]:
        # Started on the first read, in the task that reads: a trace's parent is the turn there.
        watch = self.observer.start(backend=self.inner.name, options=options)
        stream = self.inner.stream_complete(messages, options, tools)
        error: BaseException | None = None
        try:
            async for chunk in stream:
                watch.chunk(chunk)
                yield chunk
        except BaseException as exc:  # GeneratorExit too: the caller closed it (a stop)
            error = exc
            raise
        finally:
            try:
                await stream.aclose()  # type: ignore[attr-defined]
            finally:
                watch.end(error)

    async def model_info(self, model: str) -> ModelInfo:
        return await self.inner.model_info(model)

    async def native_tools(self, model: str) -> bool:
        return await self.inner.native_tools(model)

    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        return await self.inner.embed(texts, model)

    async def list_models(self) -> list[str]:
        return await self.inner.list_models()

    async def status(self) -> ServerStatus:
        return await self.inner.status()

    async def aclose(self) -> None:
        """Nothing to release: the wrapped backend belongs to the registry."""
