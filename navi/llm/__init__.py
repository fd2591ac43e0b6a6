"""Model backends: one interface (`LLMBackend`), adapters per API format, a registry by name."""

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import (
    Chunk,
    Completion,
    CompletionBuilder,
    StreamFinal,
    TextDelta,
    ThinkingDelta,
    ToolCallsChunk,
    Usage,
)
from navi.llm.errors import LLMError
from navi.llm.messages import Message, ToolCall, ToolSpec
from navi.llm.registry import BackendRegistry

__all__ = [
    "BackendRegistry",
    "CallOptions",
    "Chunk",
    "Completion",
    "CompletionBuilder",
    "LLMBackend",
    "LLMError",
    "Message",
    "ModelInfo",
    "ServerStatus",
    "StreamFinal",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolCallsChunk",
    "ToolSpec",
    "Usage",
]
