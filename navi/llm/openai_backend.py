"""OpenAI-compatible backend on the official `openai` SDK (SSE `/v1/chat/completions`).

Works against any server speaking that format: vLLM, llama.cpp, LM Studio, Ollama's `/v1`, OpenAI.
Tool-call deltas are assembled by index; usage comes from the last chunk (`include_usage`);
`reasoning_content` / `reasoning` deltas, which several servers send, surface as thinking.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import Chunk, FinishReason, StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk, Usage
from navi.llm.errors import (
    AuthenticationFailed,
    BackendHTTPError,
    BackendTimeout,
    BackendUnreachable,
    ContextOverflow,
    LLMError,
    ModelNotFound,
    StreamInterrupted,
    looks_like_overflow,
)
from navi.llm.messages import Message, ToolCall, ToolSpec, image_media_type, strip_data_uri
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


def _user_content(msg: Message) -> str | list[dict[str, Any]]:
    if not msg.images:
        return msg.content or ""
    parts: list[dict[str, Any]] = [{"type": "text", "text": msg.content or ""}]
    for img in msg.images:
        b64 = strip_data_uri(img)
        parts.append(
            {"type": "image_url", "image_url": {"url": f"data:{image_media_type(b64)};base64,{b64}"}}
        )
    return parts


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "tool":
            out.append({"role": "tool", "tool_call_id": msg.tool_call_id or "", "content": msg.content or ""})
        elif msg.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": msg.content or None}
            if msg.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_json()},
                    }
                    for call in msg.tool_calls
                ]
            elif item["content"] is None:
                item["content"] = ""
            out.append(item)
        elif msg.role == "user":
            out.append({"role": "user", "content": _user_content(msg)})
        else:
            out.append({"role": "system", "content": msg.content or ""})
    return out


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def _extra(obj: Any, *names: str) -> Any:
    extra = getattr(obj, "model_extra", None) or {}
    for name in names:
        value = (
            getattr(obj, name, None) if name in getattr(type(obj), "model_fields", {}) else extra.get(name)
        )
        if value:
            return value
    return None


class OpenAIBackend(LLMBackend):
    name = "openai"

    def __init__(
        self,
        base_url: str = "",
        api_key: str = "",
        *,
        timeout: float = 300.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._timeout = timeout
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "not-needed",
            timeout=openai.Timeout(timeout, connect=connect_timeout),
            max_retries=0,
        )

    def _unreachable(self) -> BackendUnreachable:
        return BackendUnreachable(
            f"cannot reach the OpenAI-compatible server at {self.base_url} — is it running? "
            "(check OPENAI_BASE_URL)",
            backend=self.name,
        )

    def _translate(self, exc: BaseException, model: str, *, streaming: bool = False) -> LLMError:
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return BackendTimeout(
                f"the model server at {self.base_url} did not answer within {self._timeout:.0f}s",
                backend=self.name,
                model=model,
            )
        if isinstance(exc, openai.APIConnectionError):
            if streaming:
                return StreamInterrupted(
                    f"the connection to {self.base_url} dropped mid-stream", backend=self.name, model=model
                )
            return self._unreachable()
        if isinstance(exc, openai.AuthenticationError):
            return AuthenticationFailed(
                f"{self.base_url} refused the API key — set OPENAI_API_KEY", backend=self.name, model=model
            )
        if isinstance(exc, openai.APIStatusError):
            text = _error_text(exc)
            if isinstance(exc, openai.NotFoundError) or exc.status_code == 404:
                return ModelNotFound(
                    f"model '{model}' was not found at {self.base_url}: {text}",
                    backend=self.name,
                    model=model,
                )
            if looks_like_overflow(text):
                return ContextOverflow(
                    f"the conversation no longer fits {model}'s context: {text}", backend=self.name
                )
            return BackendHTTPError(
                f"{self.base_url} answered HTTP {exc.status_code}: {text}",
                status=exc.status_code,
                backend=self.name,
                model=model,
            )
        if isinstance(exc, httpx2.TimeoutException):
            return BackendTimeout(
                f"the model server at {self.base_url} stopped answering for {self._timeout:.0f}s",
                backend=self.name,
                model=model,
            )
        if isinstance(exc, httpx2.TransportError):
            return StreamInterrupted(
                f"the connection to {self.base_url} dropped mid-stream: {exc}", backend=self.name, model=model
            )
        if isinstance(exc, openai.APIError):
            return StreamInterrupted(
                f"the model server reported an error mid-stream: {exc.message}",
                backend=self.name,
                model=model,
            )
        return LLMError(f"model call failed: {exc}", backend=self.name, model=model)

    async def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        model = options.model
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if options.temperature is not None:
            kwargs["temperature"] = options.temperature
        if options.max_tokens:
            kwargs["max_tokens"] = options.max_tokens
        if tools:
            kwargs["tools"] = to_openai_tools(tools)
        stream: Any = None
        partial: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Any = None
        served_model = model
        text_chars = 0
        try:
            stream = await self._client.chat.completions.create(**kwargs)
            async for chunk in stream:
                served_model = chunk.model or served_model
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    delta = choice.delta
                    reasoning = _extra(delta, "reasoning_content", "reasoning")
                    if reasoning:
                        yield ThinkingDelta(text=str(reasoning))
                    if delta.content:
                        text_chars += len(delta.content)
                        yield TextDelta(text=delta.content)
                    for tc in delta.tool_calls or ():
                        slot = partial.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function is not None:
                            slot["name"] += tc.function.name or ""
                            slot["arguments"] += tc.function.arguments or ""
                    if choice.finish_reason:
                        finish = choice.finish_reason
            if finish is None:
                raise StreamInterrupted(
                    f"the stream from {self.base_url} ended before the reply was finished",
                    backend=self.name,
                    model=model,
                )
        except Exception as exc:
            raise self._translate(exc, model, streaming=stream is not None) from None
        finally:
            if stream is not None:
                await stream.close()
        calls = [
            ToolCall.from_raw(slot["name"], slot["arguments"], call_id=slot["id"] or None)
            for _, slot in sorted(partial.items())
        ]
        if calls:
            yield ToolCallsChunk(tool_calls=calls)
        if usage is not None:
            counted = Usage(
                prompt_tokens=usage.prompt_tokens or 0, completion_tokens=usage.completion_tokens or 0
            )
        else:
            counted = Usage(
                prompt_tokens=estimate_messages_tokens(messages),
                completion_tokens=estimate_tokens("x" * text_chars),
                estimated=True,
            )
        reason: FinishReason = "tool_calls" if calls else ("length" if finish == "length" else "stop")
        yield StreamFinal(finish_reason=reason, usage=counted, model=served_model)

    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        try:
            result = await self._client.embeddings.create(model=model, input=list(texts))
        except Exception as exc:
            raise self._translate(exc, model) from None
        return [list(item.embedding) for item in result.data]

    async def list_models(self) -> list[str]:
        try:
            page = await self._client.models.list()
        except Exception as exc:
            raise self._translate(exc, "") from None
        return [m.id for m in page.data]

    async def model_info(self, model: str) -> ModelInfo:
        try:
            page = await self._client.models.list()
        except Exception:
            return ModelInfo(name=model)
        for entry in page.data:
            if entry.id == model:
                extra = entry.model_extra or {}
                length = next((int(extra[k]) for k in _CONTEXT_KEYS if isinstance(extra.get(k), int)), None)
                return ModelInfo(name=model, context_length=length, capabilities=("completion", "tools"))
        return ModelInfo(name=model)

    async def status(self) -> ServerStatus:
        try:
            await self._client.models.list()
        except openai.APIStatusError as exc:
            # Answering at all (even 401/404 on /models) proves the server is up.
            return ServerStatus(
                ok=True, detail=f"{self.base_url} answers (HTTP {exc.status_code} on /models)"
            )
        except openai.APIError:
            return ServerStatus(ok=False, detail=str(self._unreachable()))
        return ServerStatus(ok=True, detail=f"OpenAI-compatible server at {self.base_url}")

    async def aclose(self) -> None:
        await self._client.close()


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner)
        return str(inner)
    return exc.message
