"""Ollama backend on the official `ollama` client (NDJSON `/api/chat`).

Chat requests go through the client's own HTTP client (its host, headers, pool) with a request body
Navi encodes itself, message by message, caching each message's JSON; a test checks the body equals
what the client's `chat()` sends. The streamed lines are read as plain JSON, not the client's
`ChatResponse` models, and errors are raised as the client's own `ResponseError`.

`num_ctx` and temperature are always sent (Ollama's own defaults are far smaller than Navi's window);
`think` is sent only to models whose `/api/show` capabilities include thinking, because Ollama
rejects it for the others. Ollama gives tool calls no ids, so each gets one of ours. Some models
(through Ollama's own parsers) produce tool calls whose `arguments` is a JSON string instead of an
object (the official response type refuses those); they are repaired like any other model's
(`ToolCall.from_raw`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import ollama

from navi import redact
from navi.llm.base import CallOptions, LLMBackend, ModelInfo, ModelInfoCache, ServerStatus
from navi.llm.chunks import Chunk, FinishReason, StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk, Usage
from navi.llm.errors import StreamInterrupted
from navi.llm.failures import Failure, Translator, Wording
from navi.llm.messages import Message, ToolCall, ToolSpec, strip_data_uri
from navi.llm.netstream import fast_transport, ndjson_lines
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.net.tls import ca_context

POOL_SHARDS = 8

WORDING = Wording(
    unreachable="cannot reach Ollama at {where} — is `ollama serve` running?",
    no_answer="Ollama at {where} did not answer within {timeout:.0f}s",
    stalled="Ollama at {where} did not answer within {timeout:.0f}s",
    dropped="the connection to Ollama dropped{mid}: {text}",
    not_found="model '{model}' is not available on Ollama at {where} — run `ollama pull {model}`",
    http="Ollama answered HTTP {status}: {text}",
    stream_error="Ollama reported an error mid-stream: {text}",
    failed="Ollama call failed: {text}",
)


def failure(exc: BaseException, streaming: bool) -> Failure:
    """What an exception of the `ollama` client (or of httpx under it) means."""
    if isinstance(exc, ollama.ResponseError):
        text, status = str(exc.error), exc.status_code
        lowered = text.lower()
        missing = status == 404 or ("not found" in lowered and "model" in lowered)
        # The client reports an error line inside a stream with status -1.
        return Failure("status", text, status=status, not_found=missing, mid_stream=status == -1)
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        return Failure("connection")
    if isinstance(exc, httpx.TimeoutException):
        return Failure("no_answer")
    if isinstance(exc, httpx.TransportError | json.JSONDecodeError):
        return Failure("dropped", str(exc))
    return Failure("other", str(exc))


def wire_message(msg: Message) -> dict[str, Any]:
    """One message as Ollama's `/api/chat` takes it (empty fields left out, as the official client does)."""
    item: dict[str, Any] = {"role": msg.role}
    if msg.content:
        item["content"] = msg.content
    if msg.images:
        item["images"] = [strip_data_uri(img) for img in msg.images]
    if msg.role == "assistant" and msg.tool_calls:
        item["tool_calls"] = [
            {"function": {"name": c.name, "arguments": c.arguments}} for c in msg.tool_calls
        ]
    if msg.role == "tool" and msg.name:
        item["tool_name"] = msg.name
    return item


def to_ollama_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [wire_message(m) for m in messages]


class _EncodedMessages:
    """Each message's JSON, encoded once and reused while the message lives.

    A long conversation resends the same messages on every call; with 5,000 of them, encoding (or
    letting the client re-validate) them all again took ~50 ms of event-loop time per call.
    Messages are not changed after they are created, so identity is a safe key; the entry goes when
    the message is garbage-collected.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Message], bytes]] = {}

    def _forget(self, key: int) -> Callable[[weakref.ref[Message]], None]:
        def forget(_ref: weakref.ref[Message]) -> None:
            self._items.pop(key, None)

        return forget

    def get(self, msg: Message) -> bytes:
        key = id(msg)
        hit = self._items.get(key)
        if hit is not None and hit[0]() is msg:
            return hit[1]
        data = json.dumps(wire_message(msg)).encode()
        self._items[key] = (weakref.ref(msg, self._forget(key)), data)
        return data


_ENCODED = _EncodedMessages()


_TOOLS_JSON: dict[tuple[int, ...], tuple[Sequence[ToolSpec], bytes]] = {}


def _tools_json(tools: Sequence[ToolSpec]) -> bytes:
    """Tool schemas change only when a profile's tools do; encode each set once."""
    key = tuple(id(t) for t in tools)
    hit = _TOOLS_JSON.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], tools, strict=True)):
        return hit[1]
    data = json.dumps(to_ollama_tools(tools)).encode()
    if len(_TOOLS_JSON) > 64:
        _TOOLS_JSON.clear()
    _TOOLS_JSON[key] = (list(tools), data)
    return data


def chat_body(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    think: bool | None,
    options: dict[str, Any],
) -> bytes:
    """The `/api/chat` request body, equal to what `ollama.AsyncClient.chat(stream=True)` sends."""
    parts = [b'{"model":', json.dumps(model).encode(), b',"messages":[']
    parts.append(b",".join(_ENCODED.get(m) for m in messages))
    parts += [b'],"tools":', _tools_json(tools or ()), b',"stream":true']
    if think is not None:
        parts.append(b',"think":' + json.dumps(think).encode())
    parts += [b',"options":', json.dumps(options).encode(), b"}"]
    return b"".join(parts)


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

    def __init__(
        self, host: str, *, timeout: float = 300.0, connect_timeout: float = 5.0, num_ctx: int | None = None
    ) -> None:
        self.host = host.rstrip("/")
        self.where = redact.url(self.host)  # for messages: a password in OLLAMA_HOST stays hidden
        # Sent with every call that names no window of its own (summaries, naming, memory): Ollama
        # reloads a model whenever num_ctx changes between calls, which costs seconds to minutes.
        self.num_ctx = num_ctx
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        # Hundreds of sessions may stream at once, one HTTP/1.1 connection each. httpcore scans every
        # connection of its pool on each request and release, so streams are spread over several
        # clients with small pools instead of one client with hundreds of connections.
        limits = httpx.Limits(max_connections=1000 // POOL_SHARDS, max_keepalive_connections=16)
        self._streams = [
            ollama.AsyncClient(host=self.host, timeout=self._timeout, transport=fast_transport(limits=limits))
            for _ in range(POOL_SHARDS)
        ]
        self._next_shard = 0
        self._client = self._streams[0]
        self._info = ModelInfoCache(self._show)
        self._errors = Translator(WORDING, failure, self.name, self.where, timeout)

    # --- calls -----------------------------------------------------------------------------------
    async def _think_param(self, options: CallOptions) -> bool | None:
        if not options.think:
            return None
        info = await self.model_info(options.model)
        return True if info.supports("thinking") else None

    async def _stream(
        self,
        messages: Sequence[Message],
        options: CallOptions,
        tools: Sequence[ToolSpec] | None,
    ) -> AsyncIterator[Chunk]:
        model = options.model
        model_options: dict[str, Any] = {}
        if options.num_ctx or self.num_ctx:
            model_options["num_ctx"] = options.num_ctx or self.num_ctx
        if options.temperature is not None:
            model_options["temperature"] = options.temperature
        if options.max_tokens:
            model_options["num_predict"] = options.max_tokens
        requested = False
        try:
            think = await self._think_param(options)
            # The official client's HTTP client (its host, headers and pool) and its error types, with
            # a body we encode ourselves (`chat()` would re-validate every message on every call, see
            # _EncodedMessages) and the NDJSON lines read as plain JSON: a pydantic response per
            # chunk was a third of Navi's CPU per streamed token (docs/benchmarks.md).
            body = chat_body(model, messages, tools, think, model_options)
            self._next_shard = (self._next_shard + 1) % POOL_SHARDS
            http = self._streams[self._next_shard]._client
            requested = True
            calls: list[ToolCall] = []
            text_chars = 0
            final: dict[str, Any] | None = None
            async with http.stream("POST", "/api/chat", content=body) as response:
                if response.is_error:  # as the client reports it: the body's error, the status
                    await response.aread()
                    raise ollama.ResponseError(response.text, response.status_code)
                async for line in ndjson_lines(response):
                    part = json.loads(line)
                    if err := part.get("error"):
                        raise ollama.ResponseError(err)  # an error line inside the stream: status -1
                    msg = part.get("message") or {}
                    if thinking := msg.get("thinking"):
                        yield ThinkingDelta(text=thinking)
                    if content := msg.get("content"):
                        text_chars += len(content)
                        yield TextDelta(text=content)
                    for call in msg.get("tool_calls") or ():
                        function = call.get("function") or {}
                        calls.append(ToolCall.from_raw(function.get("name", ""), function.get("arguments")))
                    if part.get("done"):
                        final = part
                        break
            if final is None:
                raise StreamInterrupted(
                    "the connection to Ollama dropped mid-stream: the reply ended before it was done",
                    backend=self.name,
                    model=model,
                )
        except Exception as exc:
            raise self._errors.translate(exc, model, streaming=requested) from None
        if calls:
            yield ToolCallsChunk(tool_calls=calls)
        prompt, completion = final.get("prompt_eval_count"), final.get("eval_count")
        usage = Usage(
            prompt_tokens=prompt if prompt is not None else estimate_messages_tokens(messages),
            completion_tokens=completion if completion is not None else estimate_tokens("x" * text_chars),
            estimated=prompt is None or completion is None,
        )
        reason: FinishReason = (
            "tool_calls" if calls else ("length" if final.get("done_reason") == "length" else "stop")
        )
        yield StreamFinal(finish_reason=reason, usage=usage, model=final.get("model") or model)

    # --- model information ------------------------------------------------------------------------
    async def model_info(self, model: str) -> ModelInfo:
        """From `/api/show`, cached; concurrent first lookups of one model share a single request."""
        return await self._info.get(model)

    async def _show(self, model: str) -> tuple[ModelInfo, bool]:
        try:
            shown = await self._client.show(model)
        except Exception as exc:
            raise self._errors.translate(exc, model) from None
        details = dict(shown.modelinfo or {})
        trained = next(
            (
                int(v)
                for k, v in details.items()
                if k.endswith(".context_length") and isinstance(v, int | float)
            ),
            None,
        )
        info = ModelInfo(
            name=model,
            # Ollama runs a model with the num_ctx Navi sends, up to what it was trained for.
            context_length=trained,
            trained_context_length=trained,
            capabilities=tuple(shown.capabilities or ()),
            probed=True,
            server="ollama",
            details={"family": shown.details.family if shown.details else None},
        )
        return info, True

    async def embed(self, texts: Sequence[str], model: str) -> list[list[float]]:
        try:
            result = await self._client.embed(model=model, input=list(texts))
        except Exception as exc:
            raise self._errors.translate(exc, model) from None
        return [list(vector) for vector in result.embeddings]

    async def list_models(self) -> list[str]:
        try:
            listed = await self._client.list()
        except Exception as exc:
            raise self._errors.translate(exc, "") from None
        return [m.model for m in listed.models if m.model]

    async def status(self) -> ServerStatus:
        try:
            async with httpx.AsyncClient(
                base_url=self.host, timeout=self._timeout, verify=ca_context()
            ) as http:
                resp = await http.get("/api/version")
                resp.raise_for_status()
                version = str(resp.json().get("version", ""))
        except (httpx.HTTPError, ValueError):
            return ServerStatus(ok=False, detail=str(self._errors.unreachable()))
        return ServerStatus(ok=True, detail=f"Ollama {version} at {self.where}", version=version)

    async def aclose(self) -> None:
        for client in self._streams:
            await client.close()
