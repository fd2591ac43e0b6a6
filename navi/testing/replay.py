"""Record what a real model server answered, and answer the same again without it.

`RecordingProxy` sits between Navi and an OpenAI-compatible server (llama-server in the real-model
tests): it forwards every request untouched, streams the response back chunk by chunk as it
arrives, and keeps each exchange — the request body and the raw SSE events, with their arrival
times. Tests read `exchanges` to check what Navi sent (caps, roles, sizes); `save()` writes them to
a JSONL fixture.

`ReplayServer` serves such a fixture on a real port as an OpenAI-compatible server, so a fast test
runs Navi's real `openai` backend against a real model's real output — without building llama.cpp,
fetching weights or waiting on a CPU. Chat completions are answered in recorded order, or matched to
the recorded request they equal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Self

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from navi.testing.agent_script import HINT_MARK
from navi.testing.threaded import ThreadedServer

CHAT_PATH = "/v1/chat/completions"
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
_FORWARDED = ("content-type", "authorization", "accept")


@dataclass
class Exchange:
    """One request and what the server answered: `events` for a stream, else `body`."""

    method: str
    path: str
    request: Any = None
    status: int = 0
    content_type: str = ""
    events: list[str] | None = None
    body: Any = None
    offsets_ms: list[float] = field(default_factory=list)  # when each event arrived, from the request
    aborted: bool = False  # the client went away before the stream ended (a stop)

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path == CHAT_PATH

    def data(self) -> list[Any]:
        """The decoded `data:` payloads of a stream, without the final `[DONE]`."""
        out = []
        for event in self.events or []:
            for line in event.splitlines():
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    out.append(json.loads(line[5:]))
        return out

    def text(self) -> str:
        """The answer's text as streamed (content deltas only)."""
        parts = []
        for chunk in self.data():
            for choice in chunk.get("choices") or []:
                parts.append((choice.get("delta") or {}).get("content") or "")
        return "".join(parts)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Exchange:
        return cls(**json.loads(line))


def save_exchanges(path: Path, exchanges: Iterable[Exchange]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(x.to_json() + "\n" for x in exchanges), encoding="utf-8")
    tmp.replace(path)
    return path


def load_exchanges(path: Path) -> list[Exchange]:
    return [
        Exchange.from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")


class _SseSplitter:
    """Cuts a byte stream into SSE events (blank-line separated), whatever the chunking."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, chunk: bytes) -> list[str]:
        self._buffer += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
        *events, self._buffer = self._buffer.split("\n\n")
        return [e for e in events if e.strip()]

    def rest(self) -> list[str]:
        rest, self._buffer = self._buffer, ""
        return [rest] if rest.strip() else []


class _Served:
    """A server on a thread of its own: `start()`/`stop()`, or `with`."""

    _server: ThreadedServer

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def base_url(self) -> str:
        """Where an OpenAI client points (`…/v1`)."""
        return f"{self.url}/v1"

    def start(self) -> Self:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RecordingProxy(_Served):
    """A pass-through proxy in front of `upstream` that remembers every exchange."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.exchanges: list[Exchange] = []
        self._inflight = 0
        self._lock = threading.Lock()
        self._client: httpx.AsyncClient | None = None
        app = Starlette(
            routes=[Route("/{path:path}", self._forward, methods=_METHODS)], lifespan=self._lifespan
        )
        self._server = ThreadedServer(app, name="recording-proxy", lifespan=True)

    @property
    def inflight(self) -> int:
        """Requests whose response has not finished yet."""
        return self._inflight

    @property
    def chat(self) -> list[Exchange]:
        """The chat-completion exchanges, in the order they were sent."""
        with self._lock:
            return [x for x in self.exchanges if x.is_chat]

    def wait_idle(self, timeout: float = 60.0, settle: float = 0.2) -> bool:
        """True once no request has been in flight for `settle` seconds (background calls included)."""
        deadline = time.monotonic() + timeout
        quiet_since: float | None = None
        while time.monotonic() < deadline:
            if self._inflight == 0:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= settle:
                    return True
            else:
                quiet_since = None
            time.sleep(0.02)
        return False

    def save(self, path: Path) -> Path:
        with self._lock:
            return save_exchanges(path, list(self.exchanges))

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            client, self._client = self._client, None
            if client is not None:
                await client.aclose()

    def _http(self) -> httpx.AsyncClient:
        # Created on the proxy's own event loop (the server thread), reused for every request.
        if self._client is None:
            # llama-server (cpp-httplib) closes a connection idle for 5 s; httpx keeps one for 5 s
            # too, so a request sent on one the server was just closing got "Server disconnected
            # without sending a response". Idle connections are dropped well before the server's.
            self._client = httpx.AsyncClient(
                base_url=self.upstream,
                timeout=httpx.Timeout(None, connect=10),
                limits=httpx.Limits(keepalive_expiry=1.0),
            )
        return self._client

    async def _forward(self, request: Request) -> Response:
        raw = await request.body()
        path = request.url.path
        exchange = Exchange(method=request.method, path=path, request=_decode(raw))
        headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}
        upstream_request = self._http().build_request(
            request.method, path, params=request.query_params, content=raw, headers=headers
        )
        started = time.perf_counter()
        with self._lock:
            self._inflight += 1
            self.exchanges.append(exchange)
        try:
            try:
                upstream = await self._http().send(upstream_request, stream=True)
            except httpx.RemoteProtocolError:
                # A kept-alive connection the server closed as the request went out (a busy
                # machine can hold this loop past the expiry above): sent once more, on a new one.
                upstream_request = self._http().build_request(
                    request.method, path, params=request.query_params, content=raw, headers=headers
                )
                upstream = await self._http().send(upstream_request, stream=True)
        except BaseException as exc:
            # Cancelled: the client went away before the server answered (a stop while a loaded
            # llama-server had not sent its headers yet) — an aborted call, not a refused one.
            exchange.aborted = isinstance(exc, (asyncio.CancelledError, anyio.get_cancelled_exc_class()))
            with self._lock:
                self._inflight -= 1
            raise
        exchange.status = upstream.status_code
        exchange.content_type = upstream.headers.get("content-type", "")
        if "text/event-stream" not in exchange.content_type:
            try:
                content = await upstream.aread()
            finally:
                await upstream.aclose()
                with self._lock:
                    self._inflight -= 1
            exchange.body = _decode(content)
            return Response(
                content, status_code=upstream.status_code, media_type=exchange.content_type or None
            )
        exchange.events = []
        return StreamingResponse(
            self._relay(upstream, exchange, started),
            status_code=upstream.status_code,
            media_type=exchange.content_type,
        )

    async def _relay(
        self, upstream: httpx.Response, exchange: Exchange, started: float
    ) -> AsyncIterator[bytes]:
        splitter = _SseSplitter()
        events = exchange.events if exchange.events is not None else []
        finished = False
        try:
            async for chunk in upstream.aiter_raw():
                now = (time.perf_counter() - started) * 1000
                for event in splitter.feed(chunk):
                    events.append(event)
                    exchange.offsets_ms.append(round(now, 2))
                yield chunk
            events.extend(splitter.rest())
            finished = True
        finally:
            exchange.aborted = not finished
            # Closing the upstream response is what tells llama-server to stop generating; shielded,
            # because a client that went away cancels this generator's task.
            with anyio.CancelScope(shield=True):
                await upstream.aclose()
            with self._lock:
                self._inflight -= 1


class ReplayError(LookupError):
    """The replay has no recorded answer for a request."""


class ReplayServer(_Served):
    """An OpenAI-compatible server that answers from recorded exchanges.

    `mode="order"`: the n-th chat request gets the n-th recorded chat response, whatever it asks.
    `mode="match"`: a chat request gets the unused recorded response whose request body is equal,
    else the one whose last user message is equal; anything else is answered with HTTP 500 naming
    the request, so a test sees exactly what Navi sent that the model never saw. Other requests
    (`GET /v1/models`, `/props`, ...) get the last recorded answer for that method and path.
    `speed` > 0 replays the recorded timing (1.0 = as recorded); 0 sends everything at once.
    """

    def __init__(
        self,
        exchanges: Iterable[Exchange] | Path,
        *,
        mode: Literal["order", "match"] = "order",
        speed: float = 0.0,
    ) -> None:
        recorded = load_exchanges(exchanges) if isinstance(exchanges, Path) else list(exchanges)
        self.mode = mode
        self.speed = speed
        self.chat = [x for x in recorded if x.is_chat]
        self.other = {(x.method, x.path): x for x in recorded if not x.is_chat}
        self.used: list[int] = []  # indexes into `chat`, in the order they were served
        self.requests: list[Any] = []  # every chat request body received
        self.unmatched: list[Any] = []
        app = Starlette(routes=[Route("/{path:path}", self._answer, methods=_METHODS)])
        self._server = ThreadedServer(app, name="replay-server")

    @property
    def remaining(self) -> int:
        return len(self.chat) - len(self.used)

    def wait_done(self, timeout: float = 10.0) -> bool:
        """True once every recorded chat response was served (background calls come after a turn)."""
        deadline = time.monotonic() + timeout
        while self.remaining and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.remaining == 0

    def pick(self, body: Any) -> int:
        """Which recorded chat exchange answers `body`; raises `ReplayError` if none does."""
        free = [i for i in range(len(self.chat)) if i not in self.used]
        if not free:
            raise ReplayError(f"all {len(self.chat)} recorded chat responses are used")
        if self.mode == "order":
            return free[0]
        wanted = _canonical(body)
        for i in free:
            if _canonical(self.chat[i].request) == wanted:
                return i
        last = _last_user_text(body)
        for i in free:
            if last is not None and _last_user_text(self.chat[i].request) == last:
                return i
        raise ReplayError(f"no recorded response for a request whose last user message is {last!r}")

    async def _answer(self, request: Request) -> Response:
        raw = await request.body()
        path = request.url.path
        if request.method != "POST" or path != CHAT_PATH:
            recorded = self.other.get((request.method, path))
            if recorded is None:
                return JSONResponse({"error": {"message": f"replay: nothing recorded for {path}"}}, 404)
            return _plain(recorded)
        body = _decode(raw)
        self.requests.append(body)
        try:
            index = self.pick(body)
        except ReplayError as exc:
            self.unmatched.append(body)
            return JSONResponse({"error": {"message": f"replay: {exc}", "type": "replay_error"}}, 500)
        self.used.append(index)
        recorded = self.chat[index]
        if recorded.events is None:
            return _plain(recorded)
        return StreamingResponse(
            self._stream(recorded), status_code=recorded.status, media_type="text/event-stream"
        )

    async def _stream(self, recorded: Exchange) -> AsyncIterator[bytes]:
        previous = 0.0
        offsets = recorded.offsets_ms or [0.0] * len(recorded.events or [])
        for event, offset in zip(recorded.events or [], offsets, strict=False):
            if self.speed > 0 and offset > previous:
                await asyncio.sleep((offset - previous) / 1000 / self.speed)
            previous = offset
            yield (event + "\n\n").encode()


def _plain(recorded: Exchange) -> Response:
    body = recorded.body
    if isinstance(body, str):
        return Response(body, status_code=recorded.status, media_type=recorded.content_type or None)
    return JSONResponse(body, status_code=recorded.status)


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _last_user_text(body: Any) -> str | None:
    """The last user message as the person wrote it: without the note of listed tools Navi may
    append to it (navi/agent/disclosure.py), which recordings older than the note lack."""
    if not isinstance(body, dict):
        return None
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return (
                content.split(HINT_MARK)[0]
                if isinstance(content, str)
                else json.dumps(content, sort_keys=True)
            )
    return None
