"""Ollama backend on the official `ollama` client (NDJSON `/api/chat`).

`num_ctx` and temperature are always sent (Ollama's own defaults are far smaller than Navi's window);
`think` is sent only to models whose `/api/show` capabilities include thinking, because Ollama
rejects it for the others. Ollama gives tool calls no ids, so each gets one of ours.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import ollama

from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ServerStatus
from navi.llm.chunks import Chunk, FinishReason, StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk, Usage
from navi.llm.errors import (
    BackendHTTPError,
    BackendTimeout,
    BackendUnreachable,
    ContextOverflow,
    LLMError,
    ModelNotFound,
    StreamInterrupted,
    looks_like_overflow,
)
from navi.llm.messages import Message, ToolCall, ToolSpec, strip_data_uri
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens


def to_ollama_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in messages:
        item: dict[str, Any] = {"role": msg.role, "content": msg.content or ""}
        if msg.images:
            item["images"] = [strip_data_uri(img) for img in msg.images]
        if msg.role == "assistant" and msg.tool_calls:
            item["tool_calls"] = [
                {"function": {"name": call.name, "arguments": call.arguments}} for call in msg.tool_calls
            ]
        if msg.role == "tool":
            item["tool_name"] = msg.name or ""
        out.append(item)
    return out


def to_ollama_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


class OllamaBackend(LLMBackend):
    name = "ollama"

    def __init__(self, host: str, *, timeout: float = 300.0, connect_timeout: float = 5.0) -> None:
        self.host = host.rstrip("/")
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self._client = ollama.AsyncClient(host=self.host, timeout=self._timeout)
        self._info_cache: dict[str, ModelInfo] = {}

    # --- errors ----------------------------------------------------------------------------------
    def _unreachable(self) -> BackendUnreachable:
        return BackendUnreachable(
            f"cannot reach Ollama at {self.host} — is `ollama serve` running?", backend=self.name
        )

    def _translate(self, exc: BaseException, model: str, *, streaming: bool = False) -> LLMError:
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, ollama.ResponseError):
            text = str(exc.error)
            status = exc.status_code
            if status == 404 or ("not found" in text.lower() and "model" in text.lower()):
                return ModelNotFound(
                    f"model '{model}' is not available on Ollama at {self.host} — run `ollama pull {model}`",
                    backend=self.name,
                    model=model,
                )
            if looks_like_overflow(text):
                return ContextOverflow(
                    f"the conversation no longer fits {model}'s context: {text}", backend=self.name
                )
            if status == -1:
                return StreamInterrupted(
                    f"Ollama reported an error mid-stream: {text}", backend=self.name, model=model
                )
            return BackendHTTPError(
                f"Ollama answered HTTP {status}: {text}", status=status, backend=self.name
            )
        if isinstance(exc, ConnectionError | httpx.ConnectError):
            return self._unreachable()
        if isinstance(exc, httpx.TimeoutException):
            return BackendTimeout(
                f"Ollama at {self.host} did not answer within {self._timeout.read:.0f}s",
                backend=self.name,
                model=model,
            )
        if isinstance(exc, httpx.TransportError | json.JSONDecodeError):
            return StreamInterrupted(
                f"the connection to Ollama dropped{' mid-stream' if streaming else ''}: "
                f"{exc or type(exc).__name__}",
                backend=self.name,
                model=model,
            )
        return LLMError(f"Ollama call failed: {exc}", backend=self.name, model=model)

    # --- calls -----------------------------------------------------------------------------------
    async def _think_param(self, options: CallOptions) -> bool | None:
        if not options.think:
            return None
        info = await self.model_info(options.model)
        return True if info.supports("thinking") else None

    async def stream_complete(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> AsyncIterator[Chunk]:
        model = options.model
        model_options: dict[str, Any] = {}
        if options.num_ctx:
            model_options["num_ctx"] = options.num_ctx
        if options.temperature is not None:
            model_options["temperature"] = options.temperature
        if options.max_tokens:
            model_options["num_predict"] = options.max_tokens
        stream: Any = None
        try:
            think = await self._think_param(options)
            stream = await self._client.chat(
                model=model,
                messages=to_ollama_messages(messages),
                tools=to_ollama_tools(tools) if tools else None,
                stream=True,
                think=think,
                options=model_options,
            )
            calls: list[ToolCall] = []
            text_chars = 0
            final: Any = None
            async for part in stream:
                msg = part.message
                if msg.thinking:
                    yield ThinkingDelta(text=msg.thinking)
                if msg.content:
                    text_chars += len(msg.content)
                    yield TextDelta(text=msg.content)
                for call in msg.tool_calls or ():
                    calls.append(ToolCall.from_raw(call.function.name, dict(call.function.arguments or {})))
                if part.done:
                    final = part
                    break
            if final is None:
                raise StreamInterrupted(
                    "the connection to Ollama dropped mid-stream: the reply ended before it was done",
                    backend=self.name,
                    model=model,
                )
        except Exception as exc:
            raise self._translate(exc, model, streaming=stream is not None) from None
        finally:
            if stream is not None:
                await stream.aclose()
        if calls:
            yield ToolCallsChunk(tool_calls=calls)
        prompt, completion = final.prompt_eval_count, final.eval_count
        usage = Usage(
            prompt_tokens=prompt if prompt is not None else estimate_messages_tokens(messages),
            completion_tokens=completion if completion is not None else estimate_tokens("x" * text_chars),
            estimated=prompt is None or completion is None,
        )
        reason: FinishReason = (
            "tool_calls" if calls else ("length" if final.done_reason == "length" else "stop")
        )
        yield StreamFinal(finish_reason=reason, usage=usage, model=final.model or model)

    # --- model information ------------------------------------------------------------------------
    async def model_info(self, model: str) -> ModelInfo:
        if model in self._info_cache:
            return self._info_cache[model]
        try:
            shown = await self._client.show(model)
        except Exception as exc:
            raise self._translate(exc, model) from None
        details = dict(shown.modelinfo or {})
        context_length = next(
            (
                int(v)
                for k, v in details.items()
                if k.endswith(".context_length") and isinstance(v, int | float)
            ),
            None,
        )
        info = ModelInfo(
            name=model,
            context_length=context_length,
            capabilities=tuple(shown.capabilities or ()),
            details={"family": shown.details.family if shown.details else None},
        )
        self._info_cache[model] = info
        return info

    async def list_models(self) -> list[str]:
        try:
            listed = await self._client.list()
        except Exception as exc:
            raise self._translate(exc, "") from None
        return [m.model for m in listed.models if m.model]

    async def status(self) -> ServerStatus:
        try:
            async with httpx.AsyncClient(base_url=self.host, timeout=self._timeout) as http:
                resp = await http.get("/api/version")
                resp.raise_for_status()
                version = str(resp.json().get("version", ""))
        except (httpx.HTTPError, ValueError):
            return ServerStatus(ok=False, detail=str(self._unreachable()))
        return ServerStatus(ok=True, detail=f"Ollama {version} at {self.host}", version=version)

    async def aclose(self) -> None:
        await self._client.close()
