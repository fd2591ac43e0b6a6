"""OpenAI's chat-completions wire format: the request read into Navi's messages, the answer written
as `chat.completion` objects and `chat.completion.chunk` events, errors as OpenAI's error object.

Only shapes live here; `routes/openai.py` runs the turn. Fields clients send that Navi does not use
(temperature, max_tokens, …) are accepted and ignored: the profile decides them. What Navi cannot do
honestly is refused with a clear 400: client-declared tools (Navi runs its own), several choices,
content other than text and data-URL images.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from navi.api.websocket import FrameError, check_images
from navi.llm.messages import Message, ToolCall
from navi.llm.meta import MessageMeta

MAX_MESSAGES = 10_000
# A system (or developer) message of the request becomes a user-side note, marked as such: a
# session holds no system messages (Navi composes the system prompt from the profile).
SYSTEM_NOTE = "[Instructions the client sent as a {role} message]\n"
_TYPES = {401: "invalid_request_error", 403: "permission_error", 429: "rate_limit_error"}


def is_openai_path(path: str) -> bool:
    return path == "/v1" or path.startswith("/v1/")


def error_type(status: int) -> str:
    """OpenAI's `type` for a status: server errors are `server_error`, the rest mostly
    `invalid_request_error`, as OpenAI's own API answers."""
    return "server_error" if status >= 500 else _TYPES.get(status, "invalid_request_error")


def error_body(message: str, code: str | None, status: int, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type(status), "param": param, "code": code}}


class OpenAIError(Exception):
    """An error of the OpenAI-compatible API, answered as OpenAI's error object."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.param = param
        self.headers = headers or {}


def bad_request(message: str, code: str = "invalid_request", param: str | None = None) -> OpenAIError:
    return OpenAIError(400, code, message, param=param)


DOCS_SUFFIX = "+docs="  # `secretary+docs=Work`: the profile, and a collection its turn reads


def split_model(model: str) -> tuple[str, str | None]:
    """A request's `model`: the profile id, and the collection its `+docs=NAME` suffix names (the
    rest of the string after the suffix, a collection's name or id), if any."""
    profile, found, collection = model.partition(DOCS_SUFFIX)
    return (profile, collection.strip() or None) if found else (model, None)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """`POST /v1/chat/completions`: what Navi reads; other fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(
        ...,
        min_length=1,
        max_length=400,
        description="A profile id (GET /v1/models), optionally with `+docs=COLLECTION`",
    )
    messages: list[dict[str, Any]] = Field(..., min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int | None = None
    tools: list[Any] | None = None
    functions: list[Any] | None = None

    def check(self) -> None:
        if self.tools or self.functions:
            raise bad_request(
                "client-declared tools are not supported: Navi runs its own tools (web, files, shell, "
                "SSH, …) and answers with text. Send the request without `tools`/`functions`.",
                "tools_not_supported",
                "tools" if self.tools else "functions",
            )
        if self.n not in (None, 1):
            raise bad_request("n must be 1: Navi answers once per turn", "invalid_value", "n")

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


# --- request messages → Navi messages ------------------------------------------------------------
def _text_and_images(content: Any, where: str, *, images_allowed: bool) -> tuple[str, list[str]]:
    """A message's `content`: a string, null, or a list of parts (text; image_url with a data URL)."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise bad_request(f"{where}.content must be a string or a list of content parts", param=where)
    texts: list[str] = []
    raw_images: list[str] = []
    for i, part in enumerate(content):
        here = f"{where}.content[{i}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("text", "refusal") and isinstance(part.get(kind), str):
            texts.append(part[kind])
        elif kind == "image_url" and images_allowed:
            raw_images.append(_data_url(part.get("image_url"), here))
        elif kind == "image_url":
            raise bad_request(f"{here}: images belong to user messages", param=here)
        else:
            raise bad_request(
                f"{here}: unsupported content part {kind!r}; Navi reads text and image_url parts "
                "(images as data: URLs)",
                param=here,
            )
    try:
        images = check_images(raw_images)
    except FrameError as exc:
        raise bad_request(f"{where}: {exc}", "invalid_image", where) from None
    return "\n".join(texts), images


def _data_url(value: Any, where: str) -> str:
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url:
        raise bad_request(
            f"{where}: images must be data URLs (data:image/png;base64,…); Navi does not fetch image URLs",
            "invalid_image",
            where,
        )
    return url


def _calls(raw: Any, where: str) -> list[ToolCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad_request(f"{where}.tool_calls must be a list", param=where)
    calls = []
    for i, call in enumerate(raw):
        fn = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(fn, dict)
            or not isinstance(fn.get("name"), str)
            or not isinstance(call.get("id"), str)
        ):
            raise bad_request(
                f"{where}.tool_calls[{i}] must be {{id, type: function, function: {{name, arguments}}}}",
                param=where,
            )
        calls.append(ToolCall.from_raw(fn["name"], fn.get("arguments"), call["id"]))
    return calls


def to_message(raw: dict[str, Any], index: int) -> Message:
    """One request message as a Navi message (raises a 400 `OpenAIError` saying what is wrong)."""
    where = f"messages[{index}]"
    if not isinstance(raw, dict):
        raise bad_request(f"{where} must be an object", param=where)
    try:  # JSON may escape lone surrogates (\ud800): no text, and nothing a database can store
        json.dumps(raw, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise bad_request(f"{where} is not valid Unicode (a lone surrogate)", param=where) from None
    role = raw.get("role")
    if role in ("system", "developer"):
        text, _ = _text_and_images(raw.get("content"), where, images_allowed=False)
        return Message.user(SYSTEM_NOTE.format(role=role) + text, metadata=MessageMeta(openai_role=role))
    if role == "user":
        text, images = _text_and_images(raw.get("content"), where, images_allowed=True)
        if not text.strip() and not images:
            raise bad_request(f"{where}: a user message needs text or an image", param=where)
        return Message.user(text, images=images)
    if role == "assistant":
        text, _ = _text_and_images(raw.get("content"), where, images_allowed=False)
        return Message.assistant(text or None, tool_calls=_calls(raw.get("tool_calls"), where))
    if role == "tool":
        call_id = raw.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"{where}: a tool message needs tool_call_id", param=where)
        name = raw.get("name")
        if name is not None and not isinstance(name, str):
            raise bad_request(f"{where}.name must be the tool's name", param=where)
        text, _ = _text_and_images(raw.get("content"), where, images_allowed=False)
        return Message(role="tool", content=text, tool_call_id=call_id, name=name)
    raise bad_request(
        f"{where}.role must be system, developer, user, assistant or tool (got {role!r})", param=where
    )


def last_message(raw: list[dict[str, Any]]) -> Message:
    """The request's last message: the user's, which Navi answers."""
    last = to_message(raw[-1], len(raw) - 1)
    if last.role != "user" or last.metadata.openai_role:
        raise bad_request("the last message must be the user's: it is the one Navi answers", param="messages")
    return last


def history(raw: list[dict[str, Any]]) -> list[Message]:
    """The messages before the last one, for a new session."""
    return [to_message(m, i) for i, m in enumerate(raw[:-1])]


# --- the answer ------------------------------------------------------------------------------------
class Shape:
    """The fields every object of one answer shares: its id, creation time and model."""

    def __init__(self, run_id: str, model: str) -> None:
        self.id = f"chatcmpl-{run_id}"
        self.created = int(time.time())
        self.model = model

    def chunk(
        self,
        delta: dict[str, Any],
        finish_reason: str | None = None,
        *,
        usage: bool = False,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if usage:  # with include_usage every chunk says `usage: null` but the last
            out["usage"] = None
        return out

    def usage_chunk(self, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": [],
            "usage": usage,
        }

    def completion(
        self, content: str, reasoning: str, finish_reason: str, usage: dict[str, int]
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if reasoning:
            message["reasoning_content"] = reasoning
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": usage,
        }


def usage_of(frame: dict[str, Any] | None) -> dict[str, int]:
    """OpenAI's usage from `stream_end`'s (the turn's model calls, added up); zeros without one."""
    spent = (frame or {}).get("usage") or {}
    prompt, completion = int(spent.get("prompt_tokens", 0)), int(spent.get("completion_tokens", 0))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def model_card(profile_id: str, name: str, created: int) -> dict[str, Any]:
    """A profile as an entry of `GET /v1/models` (`name` is additive)."""
    return {"id": profile_id, "object": "model", "created": created, "owned_by": "navi", "name": name}
