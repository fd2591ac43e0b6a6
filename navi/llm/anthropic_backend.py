"""Anthropic backend on the official `anthropic` SDK (SSE `/v1/messages`).

Thinking is kept with its signature so the next turn can hand it back, as the Messages API requires
while tools are in use. Navi's flat message list is folded into Anthropic's alternating turns:
system text goes to `system`, consecutive tool results become one user turn of `tool_result` blocks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic
import httpx2

from navi import redact
from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import Chunk, FinishReason, StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk, Usage
from navi.llm.errors import StreamInterrupted
from navi.llm.failures import Failure, Translator, Wording
from navi.llm.messages import Message, ToolCall, ToolSpec, image_media_type, strip_data_uri
from navi.llm.netstream import fast_transport_v2

DEFAULT_BASE_URL = "https://api.anthropic.com"
THINKING_BUDGET = 4096
CONTEXT_WINDOW = 200_000

WORDING = Wording(
    unreachable="cannot reach Anthropic at {where} — check the network or ANTHROPIC_BASE_URL",
    no_answer="Anthropic did not answer within {timeout:.0f}s",
    stalled="Anthropic stopped answering for {timeout:.0f}s",
    dropped="the connection to Anthropic dropped mid-stream: {text}",
    connection_lost="the connection to Anthropic dropped mid-stream",
    auth="Anthropic refused the API key — set ANTHROPIC_API_KEY",
    not_found="Anthropic has no model '{model}': {text}",
    http="Anthropic answered HTTP {status}: {text}",
    stream_error="Anthropic reported an error mid-stream: {text}",
    stream_failed="Anthropic stream failed: {text}",
    failed="Anthropic call failed: {text}",
)


def failure(exc: BaseException, streaming: bool) -> Failure:
    """What an exception of the `anthropic` SDK (or of httpx under it) means."""
    if isinstance(exc, anthropic.APITimeoutError):
        return Failure("no_answer")
    if isinstance(exc, anthropic.APIConnectionError):
        return Failure("connection")
    if isinstance(exc, anthropic.AuthenticationError):
        return Failure("auth")
    if isinstance(exc, anthropic.APIStatusError):
        text = _error_text(exc)
        if streaming and exc.status_code == 200:  # an `error` event inside the stream
            return Failure("stream_error", text)
        return Failure("status", text, status=exc.status_code, not_found=exc.status_code == 404)
    if isinstance(exc, httpx2.TimeoutException):
        return Failure("stalled")
    if isinstance(exc, httpx2.TransportError):
        return Failure("dropped", str(exc))
    if isinstance(exc, anthropic.APIError | json.JSONDecodeError):
        return Failure("stream_failed", str(exc))
    return Failure("other", str(exc))


def _user_blocks(msg: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for img in msg.images:
        b64 = strip_data_uri(img)
        blocks.append(
            {"type": "image", "source": {"type": "base64", "media_type": image_media_type(b64), "data": b64}}
        )
    if msg.content or not blocks:
        blocks.append({"type": "text", "text": msg.content or "(empty)"})
    return blocks


def _assistant_blocks(msg: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if msg.thinking and msg.thinking_signature:
        blocks.append({"type": "thinking", "thinking": msg.thinking, "signature": msg.thinking_signature})
    if msg.content:
        blocks.append({"type": "text", "text": msg.content})
    for call in msg.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    if not blocks:
        blocks.append({"type": "text", "text": "(no reply)"})
    return blocks


def to_anthropic(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Return (system text, alternating turns)."""
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})

    for msg in messages:
        if msg.role == "system":
            system_parts.append(msg.content or "")
        elif msg.role == "user":
            push("user", _user_blocks(msg))
        elif msg.role == "assistant":
            push("assistant", _assistant_blocks(msg))
        else:
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": msg.tool_call_id or "",
                "content": msg.content or "",
            }
            if msg.metadata.get("status") == "error":
                result["is_error"] = True
            push("user", [result])
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]})
    if turns[-1]["role"] == "assistant":
        # A trailing assistant turn would be taken as a prefill; ask the model to carry on instead.
        turns.append({"role": "user", "content": [{"type": "text", "text": "Continue."}]})
    return "\n\n".join(p for p in system_parts if p), turns


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


class AnthropicBackend(LLMBackend):
    name = "anthropic"

    def __init__(
        self,
        api_key: str = "",
        base_url: str = "",
        *,
        max_tokens: int = 8192,
        timeout: float = 300.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.where = redact.url(self.base_url)  # for messages: a password in the URL stays hidden
        self.max_tokens = max_tokens
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key or "missing",
            base_url=self.base_url,
            timeout=anthropic.Timeout(timeout, connect=connect_timeout),
            max_retries=0,
            # The SDK's own client, its connections on asyncio streams (navi/llm/netstream.py).
            http_client=anthropic.DefaultAsyncHttpxClient(transport=fast_transport_v2()),
        )
        self._has_key = bool(api_key)
        self._errors = Translator(WORDING, failure, self.name, self.where, timeout)

    def normalize(self, messages: Sequence[Message]) -> list[Message]:
        """Unchanged: `to_anthropic` folds turns itself, block by block.

        It puts every system text in `system`, joins same-role neighbours into one turn (keeping
        each thinking block with its signature, which merging messages would lose), puts tool
        results in a user turn and opens with a user turn.
        """
        return list(messages)

    async def _stream(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None,
    ) -> AsyncIterator[Chunk]:
        model = options.model
        system, turns = to_anthropic(messages)
        max_tokens = options.max_tokens or self.max_tokens
        kwargs: dict[str, Any] = {"model": model, "messages": turns, "max_tokens": max_tokens, "stream": True}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = to_anthropic_tools(tools)
        if options.think and max_tokens > THINKING_BUDGET + 1024:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": THINKING_BUDGET}
        stream: Any = None
        blocks: dict[int, dict[str, Any]] = {}
        input_tokens = output_tokens = 0
        stop_reason: str | None = None
        served_model = model
        finished = False
        try:
            stream = await self._client.messages.create(**kwargs)
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    served_model = event.message.model or model
                    usage = event.message.usage
                    input_tokens = (usage.input_tokens or 0) + (
                        getattr(usage, "cache_read_input_tokens", 0) or 0
                    )
                    input_tokens += getattr(usage, "cache_creation_input_tokens", 0) or 0
                    output_tokens = usage.output_tokens or 0
                elif kind == "content_block_start":
                    block = event.content_block
                    state: dict[str, Any] = {"type": block.type, "text": "", "json": "", "signature": ""}
                    if block.type == "tool_use":
                        state.update(id=block.id, name=block.name)
                    blocks[event.index] = state
                elif kind == "content_block_delta":
                    state = blocks.setdefault(
                        event.index, {"type": "text", "text": "", "json": "", "signature": ""}
                    )
                    delta = event.delta
                    if delta.type == "text_delta":
                        state["text"] += delta.text
                        yield TextDelta(text=delta.text)
                    elif delta.type == "thinking_delta":
                        state["text"] += delta.thinking
                        yield ThinkingDelta(text=delta.thinking)
                    elif delta.type == "signature_delta":
                        state["signature"] += delta.signature
                    elif delta.type == "input_json_delta":
                        state["json"] += delta.partial_json
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    if event.usage is not None and event.usage.output_tokens is not None:
                        output_tokens = event.usage.output_tokens
                elif kind == "message_stop":
                    finished = True
            if not finished:
                raise StreamInterrupted(
                    "the stream from Anthropic ended before the reply was finished",
                    backend=self.name,
                    model=model,
                )
        except Exception as exc:
            raise self._errors.translate(exc, model, streaming=stream is not None) from None
        finally:
            if stream is not None:
                await stream.close()
        ordered = [blocks[i] for i in sorted(blocks)]
        calls = [
            ToolCall.from_raw(b["name"], b["json"] or "{}", call_id=b["id"])
            for b in ordered
            if b["type"] == "tool_use"
        ]
        thinking_blocks = [b for b in ordered if b["type"] == "thinking"]
        signature = thinking_blocks[0]["signature"] if len(thinking_blocks) == 1 else None
        if calls:
            yield ToolCallsChunk(tool_calls=calls)
        reason: FinishReason = (
            "tool_calls" if calls else ("length" if stop_reason == "max_tokens" else "stop")
        )
        yield StreamFinal(
            finish_reason=reason,
            usage=Usage(prompt_tokens=input_tokens, completion_tokens=output_tokens),
            model=served_model,
            thinking_signature=signature or None,
        )

    async def model_info(self, model: str) -> ModelInfo:
        # Known for the API rather than asked: every current Claude model has all of these.
        return ModelInfo(
            name=model,
            context_length=CONTEXT_WINDOW,
            trained_context_length=CONTEXT_WINDOW,
            capabilities=("completion", "tools", "vision", "thinking"),
            probed=True,
            server="anthropic",
        )

    async def list_models(self) -> list[str]:
        try:
            page = await self._client.models.list()
        except Exception as exc:
            raise self._errors.translate(exc, "") from None
        return [m.id for m in page.data]

    async def status(self) -> ServerStatus:
        if not self._has_key:
            return ServerStatus(ok=False, detail="ANTHROPIC_API_KEY is not set")
        try:
            await self._client.models.list()
        except anthropic.AuthenticationError:
            return ServerStatus(ok=False, detail="Anthropic refused the API key — set ANTHROPIC_API_KEY")
        except anthropic.APIStatusError as exc:
            return ServerStatus(ok=True, detail=f"Anthropic answers (HTTP {exc.status_code} on /v1/models)")
        except anthropic.APIError:
            return ServerStatus(ok=False, detail=str(self._errors.unreachable()))
        return ServerStatus(ok=True, detail=f"Anthropic at {self.where}")

    async def aclose(self) -> None:
        await self._client.close()


def _error_text(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner)
    return exc.message
