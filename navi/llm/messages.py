"""The message model shared by sessions, the agent and every model backend.

One `Message` type serves both session buffers (display history and model context) and the wire
adapters; each backend translates it to its own API format. Flags such as `is_summary` are Navi's
own and never reach a model.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


def new_id(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex}"


def new_call_id() -> str:
    return new_id("call_")[:29]


def utcnow() -> datetime:
    return datetime.now(UTC)


class ToolCall(BaseModel):
    """A tool call the model asked for. Ids are ours when the backend gives none (Ollama).

    `arguments` is always a dict. When the model emitted arguments that are not a JSON object,
    `raw_arguments` keeps its text and `arguments_error` says what was wrong, so the agent can hand
    the failure back to the model instead of running the tool with `{}`.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_call_id)
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    arguments_error: str | None = None

    @classmethod
    def from_raw(cls, name: str, raw: str | dict[str, Any] | None, call_id: str | None = None) -> ToolCall:
        """Parse arguments as a model emitted them (JSON text or an object)."""
        kwargs: dict[str, Any] = {"name": name}
        if call_id:
            kwargs["id"] = call_id
        if raw is None or raw == "":
            return cls(**kwargs)
        if isinstance(raw, dict):
            return cls(arguments=raw, **kwargs)
        try:
            value = json.loads(raw)
        except (TypeError, ValueError) as exc:
            return cls(
                raw_arguments=str(raw), arguments_error=f"arguments are not valid JSON ({exc})", **kwargs
            )
        if not isinstance(value, dict):
            return cls(
                raw_arguments=str(raw),
                arguments_error=f"arguments must be a JSON object, got {type(value).__name__}",
                **kwargs,
            )
        return cls(arguments=value, **kwargs)

    def arguments_json(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class Message(BaseModel):
    # Weak-referenceable, so per-message wire encodings can be cached by identity (see the Ollama
    # backend) and forgotten when the message is.
    __slots__ = ("__weakref__",)
    model_config = ConfigDict(extra="ignore")

    id: str = Field(default_factory=new_id)
    role: Role
    content: str | None = None
    images: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_summary: bool = False
    is_plan: bool = False
    is_compression: bool = False
    thinking: str | None = None
    thinking_signature: str | None = None
    stopped: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.content or ""

    @classmethod
    def user(cls, content: str, images: list[str] | None = None, **kw: Any) -> Message:
        return cls(role="user", content=content, images=images or [], **kw)

    @classmethod
    def assistant(cls, content: str | None = None, **kw: Any) -> Message:
        return cls(role="assistant", content=content, **kw)

    @classmethod
    def system(cls, content: str, **kw: Any) -> Message:
        return cls(role="system", content=content, **kw)

    @classmethod
    def tool(cls, content: str, *, tool_call_id: str, name: str, **kw: Any) -> Message:
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name, **kw)


class ToolSpec(BaseModel):
    """What a model is told about one tool: its name, purpose and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def strip_data_uri(image: str) -> str:
    """Accept `data:image/png;base64,...` or bare base64 and return the bare base64."""
    if image.startswith("data:") and "," in image:
        return image.split(",", 1)[1]
    return image


def image_media_type(b64: str) -> str:
    """Guess an image's media type from its first bytes (APIs other than Ollama need it)."""
    try:
        head = base64.b64decode(strip_data_uri(b64)[:64] + "==", validate=False)
    except (ValueError, TypeError):
        return "image/png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    for magic, media in _IMAGE_MAGIC:
        if head.startswith(magic):
            return media
    return "image/png"
