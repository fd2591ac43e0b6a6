"""Model backends: one interface (`LLMBackend`), adapters per API format, a registry by name.

The names below are imported on first use, so importing a light module of this package (the
backends' settings and their catalogue, which `navi.config` reads) does not load the rest.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "navi.llm.base": ("CallOptions", "LLMBackend", "ModelInfo", "ServerStatus"),
    "navi.llm.chunks": (
        "Chunk",
        "Completion",
        "CompletionBuilder",
        "StreamFinal",
        "TextDelta",
        "ThinkingDelta",
        "ToolCallsChunk",
        "Usage",
    ),
    "navi.llm.errors": ("LLMError",),
    "navi.llm.messages": ("Message", "ToolCall", "ToolSpec"),
    "navi.llm.registry": ("BackendRegistry",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'navi.llm' has no attribute {name!r}")
    return getattr(import_module(module), name)
