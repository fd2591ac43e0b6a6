"""OpenAI-compatible backend on the official `openai` SDK (SSE `/v1/chat/completions`).

Works against any server speaking that format: vLLM, llama.cpp, LM Studio, Ollama's `/v1`, OpenAI.
Tool-call deltas are assembled by index; usage comes from the last chunk (`include_usage`);
`reasoning_content` / `reasoning` deltas, which several servers send, surface as thinking.

The SDK sends each request (base URL, key, headers, its errors for a refused call), over its own
HTTP client (httpx2) with connections on asyncio streams (`fast_transport_v2`). A streamed reply's
server-sent events are read here (`sse_events`) as plain JSON: the SDK's pydantic chunk object per
token cost 170 µs of CPU per streamed chunk against 35 (docs/benchmarks.md). An error inside the
stream, in the data or in an `error:` line, is the SDK's `APIError` with the server's words.

Capabilities are probed, not assumed (`model_info`, once per model): llama.cpp's `/props` gives
the window it runs with, its chat template's tool support and the modalities, and `/v1/models`
its `meta` (trained window); vLLM's `max_model_len` and LM Studio's `/api/v0/models/<id>` give
their windows. A server that says nothing keeps the defaults (native tools, Navi's window).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai

from navi import redact
from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ModelInfoCache, ServerStatus
from navi.llm.chunks import Chunk, FinishReason, StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk, Usage
from navi.llm.errors import StreamInterrupted
from navi.llm.failures import Failure, Translator, Wording
from navi.llm.messages import Message, ToolCall, ToolSpec, image_media_type, strip_data_uri
from navi.llm.netstream import fast_transport_v2, sse_events
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.logging import get_logger

log = get_logger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")
PROBE_TIMEOUT = 10.0
_THINKING_MARKS = ("enable_thinking", "<think>", "reasoning_content")

WORDING = Wording(
    unreachable="cannot reach the OpenAI-compatible server at {where} — is it running? "
    "(check OPENAI_BASE_URL)",
    no_answer="the model server at {where} did not answer within {timeout:.0f}s",
    stalled="the model server at {where} stopped answering for {timeout:.0f}s",
    dropped="the connection to {where} dropped mid-stream: {text}",
    connection_lost="the connection to {where} dropped mid-stream",
    auth="{where} refused the API key — set OPENAI_API_KEY",
    not_found="model '{model}' was not found at {where}: {text}",
    http="{where} answered HTTP {status}: {text}",
    stream_error="the model server reported an error mid-stream: {text}",
    failed="model call failed: {text}",
)


def failure(exc: BaseException, streaming: bool) -> Failure:
    """What an exception of the `openai` SDK (or of httpx under it) means."""
    if isinstance(exc, openai.APITimeoutError):
        return Failure("no_answer")
    if isinstance(exc, openai.APIConnectionError):
        return Failure("connection")
    if isinstance(exc, openai.AuthenticationError):
        return Failure("auth")
    if isinstance(exc, openai.APIStatusError):
        missing = isinstance(exc, openai.NotFoundError) or exc.status_code == 404
        return Failure("status", _error_text(exc), status=exc.status_code, not_found=missing)
    if isinstance(exc, httpx2.TimeoutException):
        return Failure("stalled")
    if isinstance(exc, httpx2.TransportError):
        return Failure("dropped", str(exc))
    if isinstance(exc, openai.APIError):
        return Failure("stream_error", exc.message)
    return Failure("other", str(exc))


def stream_error(part: Any, request: httpx2.Request) -> openai.APIError:
    """An error reported inside the stream (`{"error": …}`, or llama-server's `error:` line), as the
    SDK raises it."""
    error = part.get("error", part) if isinstance(part, dict) else part
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    return openai.APIError(message, request, body=error)


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
        self.where = redact.url(self.base_url)  # for messages: a password in the URL stays hidden
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "not-needed",
            timeout=openai.Timeout(timeout, connect=connect_timeout),
            max_retries=0,
            # The SDK's own client, its connections on asyncio streams (navi/llm/netstream.py).
            http_client=openai.DefaultAsyncHttpxClient(transport=fast_transport_v2()),
        )
        self._probe_client = self._client.with_options(
            timeout=openai.Timeout(PROBE_TIMEOUT, connect=connect_timeout)
        )
        self._info = ModelInfoCache(self._probe)
        self._errors = Translator(WORDING, failure, self.name, self.where, timeout)

    @property
    def server_root(self) -> str:
        """The server's own root, where llama.cpp and LM Studio keep their native endpoints."""
        return self.base_url.removesuffix("/v1")

    def _slot(self, model: str, options: CallOptions) -> int | None:
        """On llama-server with several slots: the answer in the first, side calls in the last, so a
        side call never evicts the conversation's cached prompt. None elsewhere (the server picks)."""
        info = self._info.peek(model)
        slots = info.details.get("slots") if info is not None and info.server == "llama.cpp" else None
        if not isinstance(slots, int) or slots < 2:
            return None
        return slots - 1 if options.side else 0

    async def _stream(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None,
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
        if (id_slot := self._slot(model, options)) is not None:
            kwargs["extra_body"] = {"id_slot": id_slot}
        partial: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: dict[str, Any] | None = None
        served_model = model
        text_chars = 0
        streaming = False
        try:
            # The SDK sends the request (its base URL, headers, errors); the SSE body is read here as
            # plain JSON: a pydantic chunk object per token was most of Navi's CPU per streamed token
            # on this backend (docs/benchmarks.md).
            async with self._client.chat.completions.with_streaming_response.create(**kwargs) as response:
                streaming = True
                async for event, data in sse_events(response.http_response):
                    if data.startswith(b"[DONE]") or not data.strip():  # the end, or an empty keep-alive
                        continue  # read on to the body's end, so the connection is kept
                    part = json.loads(data)
                    if event != "message" or (isinstance(part, dict) and part.get("error")):
                        raise stream_error(part, response.http_response.request)
                    served_model = part.get("model") or served_model
                    if part.get("usage"):
                        usage = part["usage"]
                    for choice in part.get("choices") or ():
                        delta = choice.get("delta") or {}
                        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                        if reasoning:
                            yield ThinkingDelta(text=str(reasoning))
                        if content := delta.get("content"):
                            text_chars += len(content)
                            yield TextDelta(text=content)
                        for tc in delta.get("tool_calls") or ():
                            empty = {"id": "", "name": "", "arguments": ""}
                            slot = partial.setdefault(tc.get("index", 0), empty)
                            if tc.get("id"):
                                slot["id"] = tc["id"]
                            if function := tc.get("function"):
                                slot["name"] += function.get("name") or ""
                                slot["arguments"] += function.get("arguments") or ""
                        if choice.get("finish_reason"):
                            finish = choice["finish_reason"]
            if finish is None:
                raise StreamInterrupted(
                    f"the stream from {self.where} ended before the reply was finished",
                    backend=self.name,
                    model=model,
                )
        except Exception as exc:
            raise self._errors.translate(exc, model, streaming=streaming) from None
        calls = [
            ToolCall.from_raw(slot["name"], slot["arguments"], call_id=slot["id"] or None)
            for _, slot in sorted(partial.items())
        ]
        if calls:
            yield ToolCallsChunk(tool_calls=calls)
        if usage is not None:
            counted = Usage(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
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
            raise self._errors.translate(exc, model) from None
        return [list(item.embedding) for item in result.data]

    async def list_models(self) -> list[str]:
        try:
            page = await self._client.models.list()
        except Exception as exc:
            raise self._errors.translate(exc, "") from None
        return [m.id for m in page.data]

    async def model_info(self, model: str) -> ModelInfo:
        """What the server says about `model` (see the module docstring); never raises."""
        return await self._info.get(model)

    async def _get_json(self, url: str) -> Any:
        """GET a JSON document beside the OpenAI API; None when the server has no such thing. A
        server that did not answer in time (or at all) raises: what it is stays unknown, and the
        defaults assumed meanwhile are not kept (a busy llama-server taken for a plain OpenAI
        server was sent native tools its template cannot parse, for the rest of the session)."""
        try:
            return await self._probe_client.get(url, cast_to=object)
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise
        except (openai.APIError, ValueError):
            return None

    async def _probe(self, model: str) -> tuple[ModelInfo, bool]:
        """Probing is best effort: whatever goes wrong, the defaults are assumed (and not kept)."""
        try:
            return await self._probe_server(model)
        except Exception as exc:
            log.debug("llm.probe_failed", backend=self.name, model=model, error=repr(exc))
            return ModelInfo(name=model, capabilities=("completion", "tools")), False

    async def _probe_server(self, model: str) -> tuple[ModelInfo, bool]:
        try:
            page = await self._probe_client.models.list()
        except (openai.APIConnectionError, openai.APITimeoutError):
            return ModelInfo(name=model, capabilities=("completion", "tools")), False
        except openai.APIError:
            entries: list[dict[str, Any]] = []
        else:
            entries = [m.model_dump() for m in page.data]
        entry = next((e for e in entries if e.get("id") == model), None)
        props = await self._get_json(f"{self.server_root}/props")
        if isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict):
            if entry is None and len(entries) == 1:
                entry = entries[0]  # llama-server serves one model whatever name a request gives
            return llama_cpp_info(model, props, entry), True
        if entry is not None and isinstance(entry.get("max_model_len"), int):
            return (
                ModelInfo(
                    name=model,
                    context_length=entry["max_model_len"],
                    capabilities=("completion", "tools"),
                    probed=True,
                    server="vllm" if entry.get("owned_by") == "vllm" else "openai-compatible",
                ),
                True,
            )
        studio = await self._get_json(f"{self.server_root}/api/v0/models/{model}")
        if isinstance(studio, dict) and ("max_context_length" in studio or "loaded_context_length" in studio):
            return lm_studio_info(model, studio), True
        found = entry or {}
        length = next((int(found[k]) for k in _CONTEXT_KEYS if isinstance(found.get(k), int)), None)
        return (
            ModelInfo(
                name=model,
                context_length=length,
                capabilities=("completion", "tools"),
                probed=length is not None,
            ),
            True,
        )

    async def status(self) -> ServerStatus:
        try:
            await self._client.models.list()
        except openai.APIStatusError as exc:
            # Answering at all (even 401/404 on /models) proves the server is up.
            return ServerStatus(ok=True, detail=f"{self.where} answers (HTTP {exc.status_code} on /models)")
        except openai.APIError:
            return ServerStatus(ok=False, detail=str(self._errors.unreachable()))
        return ServerStatus(ok=True, detail=f"OpenAI-compatible server at {self.where}")

    async def aclose(self) -> None:
        await self._client.close()


def _int(value: Any) -> int | None:
    return (
        int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
    )


def llama_cpp_info(model: str, props: dict[str, Any], entry: dict[str, Any] | None) -> ModelInfo:
    """llama-server's `/props` and `/v1/models` entry as a ModelInfo.

    Tools are native only when the chat template renders tool schemas and tool calls (its
    `chat_template_caps`); otherwise llama-server drops `tools` without a word.
    """
    meta = (entry or {}).get("meta") or {}
    settings = props.get("default_generation_settings") or {}
    caps = props.get("chat_template_caps") or {}
    template = str(props.get("chat_template") or "")
    capabilities = ["completion"]
    if caps.get("supports_tools") and caps.get("supports_tool_calls"):
        capabilities.append("tools")
    if any(mark in template for mark in _THINKING_MARKS):
        capabilities.append("thinking")
    if (props.get("modalities") or {}).get("vision"):
        capabilities.append("vision")
    return ModelInfo(
        name=model,
        context_length=_int(settings.get("n_ctx")) or _int(meta.get("n_ctx")),
        trained_context_length=_int(meta.get("n_ctx_train")),
        capabilities=tuple(capabilities),
        probed=True,
        server="llama.cpp",
        details={
            "system_role": bool(caps.get("supports_system_role", True)),
            "served_model": (entry or {}).get("id") or props.get("model_alias"),
            "build": props.get("build_info"),
            "slots": _int(props.get("total_slots")),
        },
    )


def lm_studio_info(model: str, data: dict[str, Any]) -> ModelInfo:
    """LM Studio's `/api/v0/models/<id>`: it calls tools for every model (natively or by prompt)."""
    trained = _int(data.get("max_context_length"))
    capabilities = ["completion", "tools"]
    if data.get("type") == "vlm":
        capabilities.append("vision")
    return ModelInfo(
        name=model,
        context_length=_int(data.get("loaded_context_length")) or trained,
        trained_context_length=trained,
        capabilities=tuple(capabilities),
        probed=True,
        server="lm-studio",
    )


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner)
        return str(inner)
    return exc.message
