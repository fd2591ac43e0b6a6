"""The three wire formats the fake model server speaks, both ways.

Requests are parsed back into Navi messages (so a responder can look at the conversation whatever
the API), and a `Reply` is rendered as Ollama NDJSON lines, OpenAI SSE chunks or Anthropic SSE
events. Kept apart from the server so each format reads on its own.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from navi.llm.messages import Message, ToolCall
from navi.testing.script import Reply


def _now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _piece_text(reply: Reply, text: str) -> str:
    return f"{time.time():.6f}|" if reply.stamp else text


def string_arguments(arguments: dict[str, Any]) -> str:
    """Scripted arguments that reach the client as a JSON *string* holding the object.

    Some models (through Ollama's own parsers, or OpenAI-style servers that encode twice) send
    `"arguments": "{\"path\": \"x\"}"`: Ollama's official client refuses that with a validation
    error, and an OpenAI-style client sees double-encoded JSON.
    """
    return json.dumps(json.dumps(arguments))


def _args_obj(arguments: dict[str, Any] | str) -> Any:
    """Arguments as an Ollama object: a str is parsed when it is JSON (see `string_arguments`)."""
    if isinstance(arguments, dict):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _args_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


# --- requests → Navi messages ---------------------------------------------------------------------
def parse_ollama(messages: list[dict[str, Any]]) -> list[Message]:
    out = []
    for m in messages:
        calls = [
            ToolCall.from_raw(c["function"]["name"], c["function"].get("arguments") or {})
            for c in m.get("tool_calls") or []
        ]
        out.append(
            Message(
                role=m.get("role", "user"),
                content=m.get("content"),
                images=list(m.get("images") or []),
                tool_calls=calls,
                name=m.get("tool_name"),
            )
        )
    return out


def parse_openai(messages: list[dict[str, Any]]) -> list[Message]:
    out = []
    for m in messages:
        content = m.get("content")
        images: list[str] = []
        if isinstance(content, list):
            texts = []
            for part in content:
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                elif part.get("type") == "image_url":
                    images.append(part["image_url"]["url"].split(",", 1)[-1])
            content = "".join(texts)
        calls = [
            ToolCall.from_raw(
                c["function"]["name"], c["function"].get("arguments") or "", call_id=c.get("id")
            )
            for c in m.get("tool_calls") or []
        ]
        out.append(
            Message(
                role=m.get("role", "user"),
                content=content,
                images=images,
                tool_calls=calls,
                tool_call_id=m.get("tool_call_id"),
            )
        )
    return out


def parse_anthropic(system: Any, messages: list[dict[str, Any]]) -> list[Message]:
    out: list[Message] = []
    if system:
        text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
        out.append(Message.system(text))
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append(Message(role=m["role"], content=content))
            continue
        texts: list[str] = []
        images: list[str] = []
        calls: list[ToolCall] = []
        thinking = signature = None
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "image":
                images.append(block["source"]["data"])
            elif kind == "thinking":
                thinking, signature = block.get("thinking"), block.get("signature")
            elif kind == "tool_use":
                calls.append(
                    ToolCall.from_raw(block["name"], block.get("input") or {}, call_id=block.get("id"))
                )
            elif kind == "tool_result":
                result = block.get("content")
                if isinstance(result, list):
                    result = "".join(b.get("text", "") for b in result)
                out.append(
                    Message.tool(str(result or ""), tool_call_id=block.get("tool_use_id", ""), name="")
                )
        if texts or images or calls or thinking:
            out.append(
                Message(
                    role=m["role"],
                    content="".join(texts) or None,
                    images=images,
                    tool_calls=calls,
                    thinking=thinking,
                    thinking_signature=signature,
                )
            )
    return out


# --- Reply → Ollama NDJSON ------------------------------------------------------------------------
def ollama_lines(
    reply: Reply, model: str, prompt_tokens: int, completion_tokens: int
) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of an Ollama `/api/chat` stream, final `done` object included."""
    for kind, text in reply.pieces():
        msg: dict[str, Any] = {"role": "assistant", "content": ""}
        msg["thinking" if kind == "thinking" else "content"] = (
            _piece_text(reply, text) if kind == "text" else text
        )
        yield {"model": model, "created_at": _now_iso(), "message": msg, "done": False}
    if reply.tool_calls:
        calls = [
            {
                "id": c.id or f"call_{uuid.uuid4().hex[:8]}",
                "function": {"index": i, "name": c.name, "arguments": _args_obj(c.arguments)},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
        yield {
            "model": model,
            "created_at": _now_iso(),
            "message": {"role": "assistant", "content": "", "tool_calls": calls},
            "done": False,
        }
    yield {
        "model": reply.served_model or model,
        "created_at": _now_iso(),
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": reply.finish_reason or "stop",
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": prompt_tokens,
        "prompt_eval_duration": 200_000,
        "eval_count": completion_tokens,
        "eval_duration": 700_000,
    }


def ollama_whole(reply: Reply, model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.thinking:
        msg["thinking"] = reply.thinking
    if reply.tool_calls:
        msg["tool_calls"] = [
            {"function": {"name": c.name, "arguments": _args_obj(c.arguments)}} for c in reply.tool_calls
        ]
    final = list(
        ollama_lines(Reply(finish_reason=reply.finish_reason), model, prompt_tokens, completion_tokens)
    )[-1]
    return {**final, "message": msg}


# --- Reply → OpenAI SSE ---------------------------------------------------------------------------
def openai_chunks(
    reply: Reply, model: str, prompt_tokens: int, completion_tokens: int, include_usage: bool
) -> Iterator[dict[str, Any]]:
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    yield chunk({"role": "assistant", "content": ""})
    for kind, text in reply.pieces():
        yield chunk(
            {"reasoning_content": text} if kind == "thinking" else {"content": _piece_text(reply, text)}
        )
    for i, call in enumerate(reply.tool_calls):
        call_id = call.id or f"call_{uuid.uuid4().hex[:12]}"
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }
                ]
            }
        )
        text = _args_text(call.arguments)
        half = len(text) // 2
        for part in (text[:half], text[half:]):
            if part:
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
    finish = "tool_calls" if reply.tool_calls else (reply.finish_reason or "stop")
    yield chunk({}, finish)
    if include_usage:
        yield {
            **base,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def openai_whole(reply: Reply, model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.thinking:
        message["reasoning_content"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id or f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": c.name, "arguments": _args_text(c.arguments)},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else (reply.finish_reason or "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def openai_error(message: str, status: int) -> dict[str, Any]:
    code = "model_not_found" if status == 404 else None
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# --- Reply → Anthropic SSE ------------------------------------------------------------------------
def anthropic_events(
    reply: Reply, model: str, prompt_tokens: int, completion_tokens: int
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (event name, data) pairs of an Anthropic Messages stream."""
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_{uuid.uuid4().hex[:20]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": prompt_tokens, "output_tokens": 1},
            },
        },
    )
    index = 0
    pieces = reply.pieces()
    for kind in ("thinking", "text"):
        parts = [text for k, text in pieces if k == kind]
        if not parts:
            continue
        start = (
            {"type": "thinking", "thinking": "", "signature": ""}
            if kind == "thinking"
            else {"type": "text", "text": ""}
        )
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        for text in parts:
            delta = (
                {"type": "thinking_delta", "thinking": text}
                if kind == "thinking"
                else {"type": "text_delta", "text": text}
            )
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        if kind == "thinking":
            signature = f"sig-{uuid.uuid5(uuid.NAMESPACE_OID, reply.thinking).hex}"
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": signature},
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    for call in reply.tool_calls:
        block = {
            "type": "tool_use",
            "id": call.id or f"toolu_{uuid.uuid4().hex[:20]}",
            "name": call.name,
            "input": {},
        }
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
        text = _args_text(call.arguments)
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": text},
            },
        )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    stop = (
        "tool_use" if reply.tool_calls else ("max_tokens" if reply.finish_reason == "length" else "end_turn")
    )
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": completion_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def anthropic_whole(reply: Reply, model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.thinking:
        signature = f"sig-{uuid.uuid5(uuid.NAMESPACE_OID, reply.thinking).hex}"
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": signature})
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        content.append(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_{uuid.uuid4().hex[:20]}",
                "name": call.name,
                "input": _args_obj(call.arguments),
            }
        )
    return {
        "id": f"msg_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
    }


def anthropic_error(message: str, status: int) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }
    return {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}
