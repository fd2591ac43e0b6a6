"""The one interface every model backend implements.

A backend is an adapter from Navi's `Message`/`ToolSpec` to one API format over an official client.
`stream_complete()` is an async generator: closing it early (``aclose()``) must close the underlying
HTTP request, which is what makes a cooperative stop actually stop the model server.

`stream_complete()` is the single entry point the agent calls, and the part every adapter shares:
it normalises the messages for strict chat templates (`normalize.py`) and, when tools are offered
to a model whose server was found to lack native tool calls, switches to text tool calling
(`text_tools.py`). An adapter implements `_stream()`, the plain call in its wire format.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from navi.llm import text_tools
from navi.llm.chunks import Chunk, Completion, CompletionBuilder
from navi.llm.messages import Message, ToolSpec
from navi.llm.normalize import normalize_messages
from navi.logging import get_logger

log = get_logger(__name__)


# What a model call is for, as metrics and traces tell calls apart (backends ignore it).
CallKind = Literal[
    "answer",
    "warm",
    "planning",
    "naming",
    "summary",
    "analysis",
    "extraction",
    "memory_summary",
    "research",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class CallOptions:
    model: str
    temperature: float | None = None
    think: bool = False
    num_ctx: int | None = None
    max_tokens: int | None = None
    kind: CallKind = "answer"
    # The call's prompt is the conversation's own with one message after it (a summary after the
    # answer): it goes where that prompt is cached, not to a side slot.
    extends_conversation: bool = False

    @property
    def side(self) -> bool:
        """A side call (planning, naming, summaries, memory, analysis), not the conversation's
        answer: on a server with several slots it goes to a slot of its own, so the conversation's
        cached prompt stays where the next answer finds it. A "warm" call reads the next answer's
        prompt ahead of it, in the conversation's slot, as does a call that `extends_conversation`."""
        return self.kind not in ("answer", "warm") and not self.extends_conversation


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelInfo:
    """What the server says about a model, for the engine and `navi doctor`.

    `context_length` is the window the server runs the model with (llama.cpp's `n_ctx`, vLLM's
    `max_model_len`, LM Studio's loaded length); Ollama follows the `num_ctx` Navi sends, so there
    it is the most the model can take. `trained_context_length` is the model's own limit when the
    server tells it. `capabilities` may hold "completion", "tools" (native tool calls), "thinking"
    and "vision". `probed` is False when the server told nothing and defaults are assumed: then
    tools are taken as native, since most servers that say nothing (OpenAI, vLLM) have them.
    """

    name: str
    context_length: int | None = None
    trained_context_length: int | None = None
    capabilities: tuple[str, ...] = ()
    probed: bool = False
    server: str = ""
    details: dict[str, object] = field(default_factory=dict)

    def supports(self, capability: str) -> bool:
        return capability in self.capabilities

    @property
    def native_tools(self) -> bool:
        """Whether tools go to the server as schemas (else Navi uses text tool calling)."""
        return not self.probed or self.supports("tools")


class ModelInfoCache:
    """Model information per model, looked up once; concurrent first lookups share one request.

    `lookup` returns the information and whether to keep it: an answer that came from a server
    that could not be reached is not kept, so a server that comes back is asked again.
    """

    def __init__(self, lookup: Callable[[str], Awaitable[tuple[ModelInfo, bool]]]) -> None:
        self._lookup = lookup
        self._items: dict[str, ModelInfo] = {}
        self._pending: dict[str, asyncio.Future[ModelInfo]] = {}

    def peek(self, model: str) -> ModelInfo | None:
        """What is known of `model` already, without asking the server."""
        return self._items.get(model)

    async def get(self, model: str) -> ModelInfo:
        if model in self._items:
            return self._items[model]
        pending = self._pending.get(model)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[ModelInfo] = asyncio.get_running_loop().create_future()
        self._pending[model] = future
        try:
            info, keep = await self._lookup(model)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # marks it retrieved when nobody else was waiting
            raise
        else:
            if keep:
                self._items[model] = info
            future.set_result(info)
            return info
        finally:
            self._pending.pop(model, None)


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerStatus:
    ok: bool
    detail: str
    version: str = ""


class LLMBackend:
    """Abstract model backend. Subclasses set `name` and implement `_stream()`.

    A backend may instead override `stream_complete()` whole (the in-process scripted backend
    does), giving up the shared normalisation and text tool calling.
    """

    name: str = "abstract"
    where: str = ""  # the server's address as people see it (a password in it masked)

    def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        """Yield chunks of one model turn; the last one is always a `StreamFinal`."""
        return self._adapted(messages, options, list(tools or ()))

    async def _adapted(
        self, messages: Sequence[Message], options: CallOptions, tools: list[ToolSpec]
    ) -> AsyncIterator[Chunk]:
        text_mode = bool(tools) and not await self.native_tools(options.model)
        if text_mode:
            log.debug("llm.text_tools", backend=self.name, model=options.model, tools=len(tools))
            sent = self.normalize(text_tools.to_text_messages(messages, tools))
            stream = text_tools.parse_stream(self._stream(sent, options, None), tools)
        else:
            stream = self._stream(self.normalize(messages), options, tools or None)
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for chunk in stream:
                yield chunk

    def _stream(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None,
    ) -> AsyncIterator[Chunk]:
        """The call in this backend's wire format, with messages already normalised."""
        raise NotImplementedError(f"the {self.name} backend implements no model call")

    def normalize(self, messages: Sequence[Message]) -> list[Message]:
        """Messages as this backend sends them (see `navi.llm.normalize`)."""
        return normalize_messages(messages)

    async def native_tools(self, model: str) -> bool:
        """Whether to send tool schemas; a lookup that fails keeps native tools (and the call goes on)."""
        try:
            info = await self.model_info(model)
        except Exception as exc:  # the model call itself will report what is wrong
            log.debug("llm.model_info_failed", backend=self.name, model=model, error=str(exc))
            return True
        return info.native_tools

    async def complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Completion:
        """One whole turn without streaming to the caller (planning, summaries, extraction)."""
        builder = CompletionBuilder()
        stream = self.stream_complete(messages, options, tools)
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for chunk in stream:
                builder.add(chunk)
        return builder.build()

    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        """Embedding vectors for `texts` (used by long-term memory search when configured)."""
        from navi.llm.errors import LLMError

        raise LLMError(f"the {self.name} backend does not compute embeddings", backend=self.name)

    async def model_info(self, model: str) -> ModelInfo:
        """Context length and capabilities of a model, as far as the server tells."""
        return ModelInfo(name=model)

    async def list_models(self) -> list[str]:
        return []

    async def status(self) -> ServerStatus:
        """Whether the server answers at all (used by `navi doctor` and `/health` details)."""
        return ServerStatus(ok=True, detail="no check available")

    async def aclose(self) -> None:
        """Release HTTP connections."""


def model_listed(available: list[str], model: str) -> bool:
    """Whether `model` is among a server's listed models (Ollama lists `name:latest` for `name`)."""
    if model in available:
        return True
    if ":" not in model:
        return f"{model}:latest" in available
    return model.endswith(":latest") and model.removesuffix(":latest") in available
