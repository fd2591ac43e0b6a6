"""A fake model server on a real port, speaking Ollama's, OpenAI's and Anthropic's wire formats.

The real backends (and the official clients under them) talk to it over HTTP exactly as they would
to a model server, so tests exercise request building, stream parsing, errors and early closes for
real. It can also pose as llama.cpp's llama-server (`llama_cpp`: `/props` and llama.cpp's
`/v1/models`, from bodies recorded off a real one) or LM Studio (`lm_studio`: `/api/v0/models/<id>`),
so capability probing is tested against what those servers really say. Turns come from a `Script`.
Runs in a background thread (`start()`/`stop()` or `with`), or in the foreground through
`navi fake-model` for trying Navi by hand without a model.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import math
import struct
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from navi.llm.messages import Message
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.testing import wire
from navi.testing.script import Reply, Script, ScriptRequest
from navi.testing.threaded import ThreadedServer

ALL_CAPS = ("completion", "tools", "thinking", "vision")


@dataclass(frozen=True)
class FakeModel:
    name: str
    context_length: int = 131072
    capabilities: tuple[str, ...] = ALL_CAPS
    family: str = "gemma3"


DEFAULT_MODELS = (
    FakeModel("gemma4:e2b-it-q8_0"),
    FakeModel("gemma4:26b-a4b-it-q4_K_M"),
    FakeModel("plain:1b", context_length=8192, capabilities=("completion",), family="llama"),
)


@dataclass
class LlamaCppFace:
    """What a fake llama-server says about itself: its `/props` and `/v1/models` bodies.

    llama-server serves one model whatever name a request gives, so in this mode any model name
    is accepted for chat.
    """

    props: dict[str, Any]
    models: dict[str, Any]
    props_delay: float = 0.0  # seconds before `/props` answers (a server too busy to answer in time)

    def with_window(self, n_ctx: int) -> LlamaCppFace:
        """The same server started with another `-c`."""
        props = json.loads(json.dumps(self.props))
        props["default_generation_settings"]["n_ctx"] = n_ctx
        models = json.loads(json.dumps(self.models))
        for entry in models.get("data", []):
            entry.setdefault("meta", {})["n_ctx"] = n_ctx
        return LlamaCppFace(props=props, models=models)


class _DroppedStream(Exception):
    """Raised inside a streaming body to cut the connection mid-response."""


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, _DroppedStream):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


def fake_embedding(text: str, dims: int = 64) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words point the same way."""
    vec = [0.0] * dims
    for word in text.lower().split():
        digest = hashlib.sha256(word.strip(".,!?;:").encode()).digest()
        vec[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeModelServer:
    def __init__(
        self,
        script: Script | None = None,
        *,
        models: tuple[FakeModel, ...] | list[FakeModel] = DEFAULT_MODELS,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        version: str = "0.13.0",
        llama_cpp: LlamaCppFace | None = None,
        lm_studio: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.script = script or Script()
        self.models = {m.name: m for m in models}
        self.api_key = api_key
        self.host = host
        self.port = port
        self.version = version
        self.llama_cpp = llama_cpp
        self.lm_studio = lm_studio
        self.completed_streams = 0
        self.probe_requests = 0  # GET /props and /api/v0/models/<id>: how often capabilities were probed
        self.aborted_streams = 0
        self._runner: ThreadedServer | None = None
        self.app = self._build_app()

    # --- lifecycle -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[ScriptRequest]:
        return self.script.requests

    def reset(self) -> None:
        """Back to a plain server with a fresh script (shared servers between tests)."""
        self.script = Script()
        self.api_key = None
        self.llama_cpp = None
        self.lm_studio = None
        self.probe_requests = 0

    def enqueue(self, *replies: Reply | str) -> FakeModelServer:
        self.script.enqueue(*replies)
        return self

    def start(self) -> FakeModelServer:
        logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
        self._runner = ThreadedServer(self.app, host=self.host, port=self.port, name="fake-model-server")
        self.port = self._runner.start()
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.stop()
        self._runner = None

    def serve_forever(self) -> None:
        """Run in the foreground (for `navi fake-model`)."""
        logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
        ThreadedServer(self.app, host=self.host, port=self.port).serve_forever()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.01)
        return bool(predicate())

    # --- helpers ---------------------------------------------------------------------------------
    def _authorised(self, request: Request, api: str) -> bool:
        if self.api_key is None:
            return True
        if api == "anthropic":
            return request.headers.get("x-api-key") == self.api_key
        return request.headers.get("authorization") == f"Bearer {self.api_key}"

    def _counts(self, reply: Reply, messages: list[Message]) -> tuple[int, int]:
        prompt = (
            reply.prompt_tokens if reply.prompt_tokens is not None else estimate_messages_tokens(messages)
        )
        args = "".join(str(c.arguments) for c in reply.tool_calls)
        completion = (
            reply.completion_tokens
            if reply.completion_tokens is not None
            else estimate_tokens(reply.thinking + reply.text + args)
        )
        return prompt, completion

    async def _tracked(self, request: ScriptRequest, body: AsyncIterator[str]) -> AsyncIterator[str]:
        finished = False
        try:
            async for part in body:
                yield part
            finished = True
        finally:
            request.outcome = "completed" if finished else "aborted"
            if finished:
                self.completed_streams += 1
            else:
                self.aborted_streams += 1

    async def _paced(self, reply: Reply, items: Iterator[str], error_line: str) -> AsyncIterator[str]:
        i = 0
        while True:
            if reply.delay and i:
                await asyncio.sleep(reply.delay)  # before rendering: a stamped chunk carries its send time
            if reply.error_after is not None and i == reply.error_after:
                yield error_line
                return
            if reply.drop_after is not None and i == reply.drop_after:
                raise _DroppedStream()
            if reply.hold is not None and i == reply.wait_after and i:
                await asyncio.to_thread(reply.hold.wait, 60)
            item = next(items, None)
            if item is None:
                return
            yield item
            i += 1

    async def _prepare(self, request: Request, api: str) -> tuple[dict[str, Any], Response | None]:
        try:
            body = await request.json()
        except ValueError:
            return {}, self._error(api, 400, "request body is not JSON")
        if not self._authorised(request, api):
            return body, self._error(api, 401, "invalid API key")
        model = body.get("model", "")
        if model not in self.models and not (api == "openai" and self.llama_cpp is not None):
            text = {
                "ollama": f"model '{model}' not found",
                "openai": f"The model `{model}` does not exist or you do not have access to it.",
                "anthropic": f"model: {model}",
            }[api]
            return body, self._error(api, 404, text)
        return body, None

    def _error(self, api: str, status: int, message: str) -> JSONResponse:
        if api == "openai":
            return JSONResponse(wire.openai_error(message, status), status_code=status)
        if api == "anthropic":
            return JSONResponse(wire.anthropic_error(message, status), status_code=status)
        return JSONResponse({"error": message}, status_code=status)

    # --- routes ----------------------------------------------------------------------------------
    def _build_app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/api/version", self.ollama_version),
                Route("/api/tags", self.ollama_tags),
                Route("/api/show", self.ollama_show, methods=["POST"]),
                Route("/api/chat", self.ollama_chat, methods=["POST"]),
                Route("/api/embed", self.ollama_embed, methods=["POST"]),
                Route("/v1/models", self.v1_models),
                Route("/props", self.llama_props),
                Route("/api/v0/models/{model:path}", self.lm_studio_model),
                Route("/v1/chat/completions", self.openai_chat, methods=["POST"]),
                Route("/v1/embeddings", self.openai_embeddings, methods=["POST"]),
                Route("/v1/messages", self.anthropic_messages, methods=["POST"]),
            ]
        )

    async def ollama_version(self, request: Request) -> Response:
        return JSONResponse({"version": self.version})

    async def ollama_tags(self, request: Request) -> Response:
        models = [
            {
                "name": m.name,
                "model": m.name,
                "modified_at": "2026-11-01T00:00:00Z",
                "size": 1_000_000,
                "digest": hashlib.sha256(m.name.encode()).hexdigest(),
                "details": {
                    "format": "gguf",
                    "family": m.family,
                    "families": [m.family],
                    "parameter_size": "1B",
                    "quantization_level": "Q8_0",
                },
            }
            for m in self.models.values()
        ]
        return JSONResponse({"models": models})

    async def ollama_show(self, request: Request) -> Response:
        body = await request.json()
        name = body.get("model") or body.get("name") or ""
        model = self.models.get(name)
        if model is None:
            return JSONResponse({"error": f"model '{name}' not found"}, status_code=404)
        return JSONResponse(
            {
                "modelfile": "",
                "parameters": "",
                "template": "",
                "details": {"format": "gguf", "family": model.family, "families": [model.family]},
                "model_info": {
                    "general.architecture": model.family,
                    f"{model.family}.context_length": model.context_length,
                },
                "capabilities": list(model.capabilities),
                "modified_at": "2026-11-01T00:00:00Z",
            }
        )

    async def ollama_chat(self, request: Request) -> Response:
        body, error = await self._prepare(request, "ollama")
        if error is not None:
            return error
        model = self.models[body["model"]]
        if body.get("think") and "thinking" not in model.capabilities:
            return JSONResponse({"error": f'"{model.name}" does not support thinking'}, status_code=400)
        messages = wire.parse_ollama(body.get("messages") or [])
        stream = body.get("stream", True) is not False
        sreq = ScriptRequest(
            api="ollama",
            model=model.name,
            messages=messages,
            tools=[t["function"]["name"] for t in body.get("tools") or []],
            stream=stream,
            options={**(body.get("options") or {}), "think": body.get("think")},
            raw=body,
        )
        reply = self.script.next_reply(sreq)
        if reply.first_delay:
            await asyncio.sleep(reply.first_delay)
        if reply.status:
            return JSONResponse({"error": reply.error or "scripted failure"}, status_code=reply.status)
        prompt, completion = self._counts(reply, messages)
        if not stream:
            return JSONResponse(wire.ollama_whole(reply, model.name, prompt, completion))
        lines = (json.dumps(obj) + "\n" for obj in wire.ollama_lines(reply, model.name, prompt, completion))
        error_line = json.dumps({"error": reply.error or "scripted mid-stream error"}) + "\n"
        return StreamingResponse(
            self._tracked(sreq, self._paced(reply, lines, error_line)), media_type="application/x-ndjson"
        )

    async def ollama_embed(self, request: Request) -> Response:
        body = await request.json()
        if body.get("model") not in self.models:
            return JSONResponse({"error": f"model '{body.get('model')}' not found"}, status_code=404)
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        return JSONResponse({"model": body["model"], "embeddings": [fake_embedding(t) for t in texts]})

    async def openai_embeddings(self, request: Request) -> Response:
        """OpenAI-style `/v1/embeddings` (llama-server with --embeddings, vLLM, LM Studio): floats,
        or base64 of little-endian float32 when asked (the official client asks by default)."""
        body = await request.json()
        if body.get("model") not in self.models:
            message = f"model '{body.get('model')}' not found"
            return JSONResponse(wire.openai_error(message, 404), status_code=404)
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = []
        for index, text_ in enumerate(texts):
            vector = fake_embedding(text_)
            encoded: Any = vector
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return JSONResponse({"object": "list", "data": data, "model": body["model"], "usage": usage})

    async def llama_props(self, request: Request) -> Response:
        self.probe_requests += 1
        if self.llama_cpp is None:
            return Response("Not Found", status_code=404)
        if self.llama_cpp.props_delay:
            await asyncio.sleep(self.llama_cpp.props_delay)
        return JSONResponse(self.llama_cpp.props)

    async def lm_studio_model(self, request: Request) -> Response:
        self.probe_requests += 1
        found = (self.lm_studio or {}).get(request.path_params["model"])
        if found is None:
            return JSONResponse({"error": "Model not found"}, status_code=404)
        return JSONResponse(found)

    async def v1_models(self, request: Request) -> Response:
        if not self._authorised(request, "anthropic" if "x-api-key" in request.headers else "openai"):
            return self._error("openai", 401, "invalid API key")
        if self.llama_cpp is not None:
            return JSONResponse(self.llama_cpp.models)
        data = [
            {
                "id": m.name,
                "object": "model",
                "created": 0,
                "owned_by": "navi-fake",
                "max_model_len": m.context_length,
                "type": "model",
                "display_name": m.name,
                "created_at": "2026-11-01T00:00:00Z",
            }
            for m in self.models.values()
        ]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    async def openai_chat(self, request: Request) -> Response:
        body, error = await self._prepare(request, "openai")
        if error is not None:
            return error
        messages = wire.parse_openai(body.get("messages") or [])
        stream = bool(body.get("stream"))
        sreq = ScriptRequest(
            api="openai",
            model=body["model"],
            messages=messages,
            tools=[t["function"]["name"] for t in body.get("tools") or []],
            stream=stream,
            options={k: body[k] for k in ("temperature", "max_tokens", "stream_options") if k in body},
            raw=body,
        )
        reply = self.script.next_reply(sreq)
        if reply.first_delay:
            await asyncio.sleep(reply.first_delay)
        if reply.status:
            return self._error("openai", reply.status, reply.error or "scripted failure")
        prompt, completion = self._counts(reply, messages)
        if not stream:
            return JSONResponse(wire.openai_whole(reply, body["model"], prompt, completion))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = (
            f"data: {json.dumps(c)}\n\n"
            for c in wire.openai_chunks(reply, body["model"], prompt, completion, include_usage)
        )
        done = iter(["data: [DONE]\n\n"])
        error_line = (
            f"data: {json.dumps(wire.openai_error(reply.error or 'scripted mid-stream error', 500))}\n\n"
        )
        return StreamingResponse(
            self._tracked(sreq, self._paced(reply, _chain(events, done), error_line)),
            media_type="text/event-stream",
        )

    async def anthropic_messages(self, request: Request) -> Response:
        body, error = await self._prepare(request, "anthropic")
        if error is not None:
            return error
        messages = wire.parse_anthropic(body.get("system"), body.get("messages") or [])
        stream = bool(body.get("stream"))
        sreq = ScriptRequest(
            api="anthropic",
            model=body["model"],
            messages=messages,
            tools=[t["name"] for t in body.get("tools") or []],
            stream=stream,
            options={k: body[k] for k in ("max_tokens", "thinking", "temperature") if k in body},
            raw=body,
        )
        reply = self.script.next_reply(sreq)
        if reply.first_delay:
            await asyncio.sleep(reply.first_delay)
        if reply.status:
            return self._error("anthropic", reply.status, reply.error or "scripted failure")
        prompt, completion = self._counts(reply, messages)
        if not stream:
            return JSONResponse(wire.anthropic_whole(reply, body["model"], prompt, completion))
        events = (
            f"event: {name}\ndata: {json.dumps(data)}\n\n"
            for name, data in wire.anthropic_events(reply, body["model"], prompt, completion)
        )
        err = {"type": "error", "error": {"type": "overloaded_error", "message": reply.error or "Overloaded"}}
        error_line = f"event: error\ndata: {json.dumps(err)}\n\n"
        return StreamingResponse(
            self._tracked(sreq, self._paced(reply, events, error_line)), media_type="text/event-stream"
        )


def _chain(*parts: Iterator[str]) -> Iterator[str]:
    for part in parts:
        yield from part
