"""A chain of model endpoints behind one backend: routing and fallback per call (docs/models.md).

`ModelChain` is an `LLMBackend` like any other: the agent, summaries and memory extraction call
it as they call one backend. For each call it orders its endpoints —

- a side call (naming, planning, summaries, memory extraction) tries `SIDE_MODEL` first;
- a prompt larger than an endpoint's window goes to the first endpoint whose window holds it;
- a message with an image goes to the first endpoint that has vision;
- an endpoint the circuit breaker has open (it failed a moment ago, here or on another worker)
  comes last, tried only when every other one failed —

then calls them in that order. A call that fails before its first chunk (server unreachable, model
missing, 429/5xx, a first-token timeout, the context too long, the key refused) moves on to the
next endpoint; the reason is logged and carried on the call's `StreamFinal` (`switched`), which
also says which endpoint and model wrote the answer. A call that fails after its first chunk is
not switched: the error goes up, and the turn keeps what streamed (`interrupted`).

Each endpoint is bounded on its own (`bounded()`: the first-token timeout applies per endpoint, so
a hanging one leaves time for the next), and a stop reaches whichever is streaming.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.breaker import Breaker, MemoryBreaker, Trip
from navi.llm.calls import CallLimits, GuardedBackend
from navi.llm.chunks import Chunk, Fallback, StreamFinal
from navi.llm.endpoints import ModelEndpoint, ModelList
from navi.llm.errors import (
    AuthenticationFailed,
    BackendHTTPError,
    BackendTimeout,
    BackendUnreachable,
    ContextOverflow,
    LLMError,
    ModelNotFound,
    StreamInterrupted,
)
from navi.llm.messages import Message, ToolSpec
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.logging import get_logger

log = get_logger(__name__)

# The calls `SIDE_MODEL` takes (a summary that extends the conversation's cached prompt does not).
SIDE_KINDS = frozenset({"planning", "naming", "summary", "analysis", "extraction", "memory_summary"})


def movable(exc: LLMError) -> bool:
    """Whether a failure before the first chunk sends the call to the next endpoint."""
    if isinstance(exc, BackendHTTPError):
        return exc.status in (408, 429) or exc.status >= 500
    return isinstance(
        exc,
        BackendUnreachable
        | ModelNotFound
        | BackendTimeout
        | ContextOverflow
        | AuthenticationFailed
        | StreamInterrupted,
    )


@dataclass
class ChainShared:
    """What every chain of one model list shares: the breaker, its clock and cool-down, and the
    windows the servers reported."""

    models: ModelList
    breaker: Breaker = field(default_factory=MemoryBreaker)
    clock: Callable[[], float] = time.time
    cooldown: float = 60.0
    default_window: int = 65536  # OLLAMA_NUM_CTX: an endpoint's window when nothing says otherwise
    windows: dict[str, int] = field(default_factory=dict)  # learnt from the servers, by endpoint
    # What each chain says of itself, by name, and when it was asked.
    infos: dict[str, tuple[ModelInfo, float]] = field(default_factory=dict)

    def window(self, endpoint: ModelEndpoint) -> int:
        if endpoint.window:
            return min(endpoint.window, self.default_window)
        return self.windows.get(endpoint.id, self.default_window)


class ModelChain(LLMBackend):
    """The endpoints `ids` of `shared.models`, each called through `backend_of(id)`."""

    def __init__(
        self,
        name: str,
        ids: Sequence[str],
        shared: ChainShared,
        backend_of: Callable[[str], LLMBackend],
    ) -> None:
        self.name = name
        self.ids = tuple(ids)
        self.shared = shared
        self.backend_of = backend_of

    @property
    def endpoints(self) -> list[ModelEndpoint]:
        return [self.shared.models.get(i) for i in self.ids]

    @property
    def where(self) -> str:  # type: ignore[override]
        return " → ".join(self.ids)

    def bounded(self, limits: CallLimits, stop: asyncio.Event | None) -> ModelChain:
        """This chain with each endpoint's calls within `limits` and abandoned on `stop`."""
        inner = self.backend_of
        return ModelChain(self.name, self.ids, self.shared, lambda i: GuardedBackend(inner(i), limits, stop))

    # --- the order of a call ---------------------------------------------------------------------
    async def order(
        self, messages: Sequence[Message], options: CallOptions, tools: Sequence[ToolSpec] | None
    ) -> tuple[list[ModelEndpoint], dict[str, Trip]]:
        """The endpoints in the order this call tries them, and the breaker's trips of them."""
        models = self.shared.models
        ids = list(self.ids)
        side = models.side
        if side and options.kind in SIDE_KINDS and not options.extends_conversation:
            ids = [side, *(i for i in ids if i != side)]
        need = estimate_messages_tokens(messages) + (options.max_tokens or 0)
        need += sum(
            estimate_tokens(json.dumps(t.parameters)) + estimate_tokens(t.description) for t in tools or ()
        )
        vision = any(m.images for m in messages)
        trips = await self._trips()
        now = self.shared.clock()

        def rank(endpoint: ModelEndpoint) -> tuple[int, int, int]:
            has = endpoint.has("vision")
            seeing = 0 if not vision or has else (1 if has is None else 2)
            cooling = endpoint.id in trips and trips[endpoint.id].open(now)
            return (int(cooling), int(self.shared.window(endpoint) < need), seeing)

        ordered = sorted((models.get(i) for i in ids), key=rank)  # stable: the chain's order within a rank
        return ordered, trips

    async def _trips(self) -> dict[str, Trip]:
        """The breaker's trips of this chain's endpoints (open or not)."""
        try:
            trips = await self.shared.breaker.trips()
        except Exception as exc:  # the database is busy: no endpoint is skipped
            log.warning("llm.breaker_unreadable", error=str(exc))
            return {}
        return {i: t for i, t in trips.items() if i in self.ids or i == self.shared.models.side}

    # --- the call --------------------------------------------------------------------------------
    def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        return self._call(messages, options, list(tools or ()))

    async def _call(
        self, messages: Sequence[Message], options: CallOptions, tools: list[ToolSpec]
    ) -> AsyncIterator[Chunk]:
        order, trips = await self.order(messages, options, tools)
        now = self.shared.clock()
        # Endpoints cooling down come last: tried only when every other one failed.
        cooling = {e.id: trips[e.id] for e in order if e.id in trips and trips[e.id].open(now)}
        for skipped in self._skipped(order[0], cooling):  # said now: the answer may be slow to come
            yield skipped
        failed: list[str] = []
        last: LLMError | None = None
        for at, endpoint in enumerate(order):
            if at and last is not None:  # said before the next endpoint is asked, not after it answers
                before = order[at - 1]
                yield Fallback(
                    endpoint=before.id,
                    model=before.model,
                    reason=str(last),
                    next_endpoint=endpoint.id,
                    next_model=endpoint.model,
                )
            stream = self.backend_of(endpoint.id).stream_complete(
                messages, self._options(endpoint, options), tools
            )
            try:
                first = await anext(stream)
            except StopAsyncIteration:
                first = None
            except LLMError as exc:
                await _close(stream)
                if not movable(exc):
                    raise
                last = exc
                failed.append(f"{endpoint.id}: {exc}")
                log.warning(
                    "llm.fallback", chain=self.name, endpoint=endpoint.id, kind=exc.kind, reason=str(exc)
                )
                if not isinstance(exc, ContextOverflow):  # the prompt's fault, not the endpoint's
                    await self._trip(endpoint, exc)
                continue
            except BaseException:
                await _close(stream)
                raise
            if endpoint.id in trips:
                await self._clear(endpoint)
            ahead = self.ids[: self.ids.index(endpoint.id)] if endpoint.id in self.ids else ()
            switched = [
                f"{i}: skipped, it failed recently ({trip.reason})"
                for i, trip in cooling.items()
                if i in ahead and not any(f.startswith(f"{i}: ") for f in failed)
            ]
            switched += failed
            if switched:
                log.info("llm.fell_back", chain=self.name, endpoint=endpoint.id, switched=switched)
            rest = self._rest(stream, first, endpoint, switched)
            async with contextlib.aclosing(rest):  # a stop closes the endpoint's stream at once
                async for chunk in rest:
                    yield chunk
            return
        assert last is not None  # every endpoint was tried
        raise _exhausted(last, failed)

    def _skipped(self, first: ModelEndpoint, cooling: dict[str, Trip]) -> list[Fallback]:
        """The endpoints ahead of `first` in the chain that are passed over because they cool down
        (none when `first` cools down too: then every endpoint is tried in the chain's order)."""
        if first.id in cooling or first.id not in self.ids:
            return []
        ahead = self.ids[: self.ids.index(first.id)]
        models = self.shared.models
        return [
            Fallback(
                endpoint=i,
                model=models.get(i).model,
                reason=f"it failed recently ({trip.reason})",
                next_endpoint=first.id,
                next_model=first.model,
                cooling=True,
            )
            for i, trip in cooling.items()
            if i in ahead
        ]

    async def _rest(
        self, stream: AsyncIterator[Chunk], first: Chunk | None, endpoint: ModelEndpoint, switched: list[str]
    ) -> AsyncGenerator[Chunk, None]:
        """The stream from its first chunk; its final chunk says which endpoint wrote it and why
        the ones before were passed over. A failure now is not switched: it goes up as it is."""
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            chunk = first
            while chunk is not None:
                if isinstance(chunk, StreamFinal):
                    chunk = replace(
                        chunk, model=endpoint.model, endpoint=endpoint.id, switched=tuple(switched)
                    )
                yield chunk
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    chunk = None
                except StreamInterrupted as exc:
                    log.warning("llm.interrupted", chain=self.name, endpoint=endpoint.id, reason=str(exc))
                    await self._trip(endpoint, exc)
                    raise

    def _options(self, endpoint: ModelEndpoint, options: CallOptions) -> CallOptions:
        num_ctx = options.num_ctx
        if endpoint.window and num_ctx:
            num_ctx = min(num_ctx, endpoint.window)
        return replace(options, model=endpoint.model, num_ctx=num_ctx)

    async def _trip(self, endpoint: ModelEndpoint, exc: LLMError) -> None:
        try:
            trip = await self.shared.breaker.failed(
                endpoint.id, f"{exc.kind}: {exc}", self.shared.clock(), self.shared.cooldown
            )
        except Exception as error:
            log.warning("llm.breaker_unwritable", endpoint=endpoint.id, error=str(error))
            return
        log.warning("llm.breaker_open", endpoint=endpoint.id, failures=trip.failures, until=trip.until)

    async def _clear(self, endpoint: ModelEndpoint) -> None:
        try:
            await self.shared.breaker.cleared(endpoint.id)
        except Exception as error:
            log.warning("llm.breaker_unwritable", endpoint=endpoint.id, error=str(error))
            return
        log.info("llm.breaker_closed", endpoint=endpoint.id)

    # --- what the chain says about itself ----------------------------------------------------------
    async def model_info(self, model: str) -> ModelInfo:
        """The first endpoint's information, its window the largest of the chain's (a context
        that outgrows the first endpoint's goes to one that holds it). Each endpoint's window is
        learnt here for routing. Kept, so the questions after every turn (does the server cache
        prompts?) cost nothing; while an endpoint has not told its window, asked again after a
        cool-down (until then its window is OLLAMA_NUM_CTX, or what the list says)."""
        known = self.shared.infos.get(self.name)
        endpoints = self.endpoints
        if known is not None:
            info, at = known
            whole = all(e.id in self.shared.windows or e.window for e in endpoints)
            if whole or self.shared.clock() - at < max(self.shared.cooldown, 1.0):
                return info  # the ones that did not answer are asked again after a cool-down
        answers = await asyncio.gather(
            *(self.backend_of(e.id).model_info(e.model) for e in endpoints), return_exceptions=True
        )
        first: ModelInfo | None = None
        error: BaseException | None = None
        for endpoint, answer in zip(endpoints, answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, LLMError):
                    raise answer
                error = error or answer
                continue
            if answer.context_length:
                self.shared.windows[endpoint.id] = answer.context_length
            first = first or answer
        if first is None:
            assert error is not None
            raise error
        window = max(self.shared.window(e) for e in endpoints)
        info = replace(first, context_length=window)
        self.shared.infos[self.name] = (info, self.shared.clock())
        return info

    async def status(self) -> ServerStatus:
        return await self.backend_of(self.ids[0]).status()

    async def list_models(self) -> list[str]:
        return await self.backend_of(self.ids[0]).list_models()

    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        return await self.backend_of(self.ids[0]).embed(texts, self.endpoints[0].model)

    async def aclose(self) -> None:
        """Nothing to release: the endpoints' backends belong to the registry."""


async def _close(stream: Any) -> None:
    with contextlib.suppress(Exception):
        await stream.aclose()


def _exhausted(last: LLMError, failed: list[str]) -> LLMError:
    """The last endpoint's error, saying what the others said before it."""
    earlier = failed[:-1]
    if earlier:  # the error is this call's own: said again with the others' words
        last.message = f"{last.message} (tried before it: {'; '.join(earlier)})"
        last.args = (last.message,)
    return last
