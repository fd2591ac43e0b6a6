"""The message model shared by sessions, the agent and every model backend.

One `Message` type serves both session buffers (display history and model context) and the wire
adapters; each backend translates it to its own API format. Flags such as `is_summary` are Navi's
own and never reach a model.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from navi.llm.attached import AttachedFile
from navi.llm.meta import MessageMeta

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
    def from_raw(cls, name: str, raw: Any, call_id: str | None = None) -> ToolCall:
        """Arguments as a model emitted them: an object, JSON text, or something close to it.

        Small models and some servers send arguments double-encoded, fenced in ```json, with
        trailing commas or Python's True/False/None; those are repaired. What cannot be repaired
        is kept in `raw_arguments` with the reason in `arguments_error`, never replaced by `{}`.
        """
        kwargs: dict[str, Any] = {"name": name}
        if call_id:
            kwargs["id"] = call_id
        if raw is None or raw == "":
            return cls(**kwargs)
        if isinstance(raw, Mapping):
            return cls(arguments=dict(raw), **kwargs)
        if not isinstance(raw, str):  # a list, a number: JSON, but not arguments
            raw = json.dumps(raw, ensure_ascii=False, default=str)
        value, error = parse_arguments(raw)
        if value is None:
            return cls(raw_arguments=str(raw), arguments_error=error, **kwargs)
        return cls(arguments=value, **kwargs)

    def arguments_json(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments, ensure_ascii=False)


_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)
_MAX_REPAIR_CHARS = 200_000


def unfence(text: str) -> str:
    """`text` without a Markdown code fence around it (models like to fence JSON)."""
    match = _FENCE.match(text.strip())
    return match.group(1).strip() if match else text.strip()


def _json_relaxed(text: str) -> str:
    """Trailing commas dropped and Python literals made JSON, outside strings only."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if ch == ",":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
        if ch.isalpha() and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            out.append({"True": "true", "False": "false", "None": "null"}.get(word, word))
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _jsonable(value: Any) -> Any:
    """A Python literal as JSON data (tuples become lists); anything else is refused."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("object keys must be strings")
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise ValueError(f"{type(value).__name__} is not JSON")


def decode_lenient(text: str) -> Any:
    """JSON, or JSON with the usual small-model slips, or a Python literal; raises ValueError."""
    try:
        return json.loads(text)
    except ValueError as exc:
        first = exc
    if len(text) > _MAX_REPAIR_CHARS:
        raise first
    try:
        return json.loads(_json_relaxed(text))
    except ValueError:
        pass
    try:
        return _jsonable(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise first from None


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str]:
    """A tool call's arguments as an object, repaired where the intent is unambiguous.

    Returns (object, "") or (None, why it is not one). A JSON string that itself holds an object
    (double encoding) is unwrapped; `null` means no arguments.
    """
    text = raw
    for _ in range(3):
        text = unfence(text)
        try:
            value = decode_lenient(text)
        except ValueError as exc:
            return None, f"arguments are not valid JSON ({exc})"
        if value is None:
            return {}, ""
        if isinstance(value, dict):
            return value, ""
        if isinstance(value, str) and value.strip()[:1] in ("{", "`"):
            text = value
            continue
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return None, "arguments are encoded too many times"


class Message(BaseModel):
    # Weak-referenceable, so per-message wire encodings can be cached by identity (see the Ollama
    # backend) and forgotten when the message is.
    __slots__ = ("__weakref__",)
    model_config = ConfigDict(extra="ignore", validate_assignment=True)

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
    metadata: MessageMeta = Field(default_factory=MessageMeta)

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


# --- Uploaded files in a user message ------------------------------------------------------------
FILES_NOTE = "\n\n[Uploaded files on disk:\n"


def with_files(message: str, files: Sequence[AttachedFile] | None) -> str:
    """Append uploaded files' paths to the user's text, as the reference shows."""
    if not files:
        return message
    lines = "\n".join(f"- {f.name} → {f.path}" for f in files)
    return f"{message}{FILES_NOTE}{lines}]"


def without_files(message: Message) -> str:
    """What the person typed: a user message's text without the uploaded files' note `with_files`
    added (file names and server paths, which the person did not write)."""
    text = message.content or ""
    if message.metadata.get("files") and FILES_NOTE in text:
        return text[: text.rindex(FILES_NOTE)]
    return text
