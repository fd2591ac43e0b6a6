"""What a streaming model call yields, and what a whole call returns.

A stream is a sequence of `ThinkingDelta` / `TextDelta` chunks, at most one `ToolCallsChunk` (all
calls of the turn, complete), and exactly one `StreamFinal` last. Token counts in the final chunk
are the backend's own when it reports them; `estimated` says when they are not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from navi.llm.messages import Message, ToolCall

FinishReason = Literal["stop", "tool_calls", "length", "error"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ThinkingDelta:
    text: str
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallsChunk:
    tool_calls: list[ToolCall]
    type: Literal["tool_calls"] = "tool_calls"


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamFinal:
    finish_reason: FinishReason
    usage: Usage
    model: str = ""
    thinking_signature: str | None = None
    # Through a model chain (navi/llm/chain.py): the endpoint that wrote it, and why the ones
    # before it in the chain were passed over ("id: reason").
    endpoint: str = ""
    switched: tuple[str, ...] = ()
    type: Literal["final"] = "final"


@dataclass(frozen=True, kw_only=True, slots=True)
class Fallback:
    """Through a model chain, before any chunk of the answer: the call moves on from `endpoint`
    (it failed just now, or it cools down after failing recently: `cooling`) to `next_endpoint`.
    Yielded as it happens, so a page can say so while the next endpoint reads the prompt; the
    final chunk's `switched` says the same for the record. Carries no text: consumers that fold a
    stream into a completion skip it."""

    endpoint: str
    model: str
    reason: str
    next_endpoint: str
    next_model: str
    cooling: bool = False
    type: Literal["fallback"] = "fallback"


Chunk = ThinkingDelta | TextDelta | ToolCallsChunk | Fallback | StreamFinal


@dataclass(kw_only=True, slots=True)
class Completion:
    """A whole model turn: the assistant message plus why it ended and what it cost."""

    message: Message
    finish_reason: FinishReason
    usage: Usage
    model: str = ""

    @property
    def text(self) -> str:
        return self.message.content or ""


@dataclass(kw_only=True, slots=True)
class CompletionBuilder:
    """Folds chunks into a `Completion`; used by `complete()` and by the agent loop alike."""

    thinking: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    final: StreamFinal | None = None

    def add(self, chunk: Chunk) -> None:
        if isinstance(chunk, ThinkingDelta):
            self.thinking.append(chunk.text)
        elif isinstance(chunk, TextDelta):
            self.text.append(chunk.text)
        elif isinstance(chunk, ToolCallsChunk):
            self.tool_calls.extend(chunk.tool_calls)
        elif isinstance(chunk, StreamFinal):
            self.final = chunk

    def build(self) -> Completion:
        final = self.final or StreamFinal(finish_reason="stop", usage=Usage(estimated=True))
        message = Message.assistant(
            "".join(self.text),
            thinking="".join(self.thinking) or None,
            thinking_signature=final.thinking_signature,
            tool_calls=list(self.tool_calls),
        )
        return Completion(
            message=message, finish_reason=final.finish_reason, usage=final.usage, model=final.model
        )
