"""The one interface every model backend implements.

A backend is an adapter from Navi's `Message`/`ToolSpec` to one API format over an official client.
`stream_complete()` is an async generator: closing it early (``aclose()``) must close the underlying
HTTP request, which is what makes a cooperative stop actually stop the model server.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from navi.llm.chunks import Chunk, Completion, CompletionBuilder
from navi.llm.messages import Message, ToolSpec


@dataclass(frozen=True, kw_only=True, slots=True)
class CallOptions:
    model: str
    temperature: float | None = None
    think: bool = False
    num_ctx: int | None = None
    max_tokens: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelInfo:
    name: str
    context_length: int | None = None
    capabilities: tuple[str, ...] = ()
    details: dict[str, object] = field(default_factory=dict)

    def supports(self, capability: str) -> bool:
        return capability in self.capabilities


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerStatus:
    ok: bool
    detail: str
    version: str = ""


class LLMBackend(ABC):
    """Abstract model backend. Subclasses set `name` and implement the streaming call."""

    name: str = "abstract"

    @abstractmethod
    def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        """Yield chunks of one model turn; the last one is always a `StreamFinal`."""

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

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release HTTP connections."""
