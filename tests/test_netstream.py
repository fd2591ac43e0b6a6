"""httpx on asyncio streams (navi/llm/netstream.py): what the model clients rely on from httpx still
holds — streamed lines, kept-alive connections, a connection the server closed while idle, TLS, and
httpx's own errors for a refused connection, a silent server and a reply cut short.

Real servers on 127.0.0.1 (asyncio's, written for each case), no mocks.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpcore2
import httpx
import httpx2
import pytest

from navi.llm.anthropic_backend import AnthropicBackend
from navi.llm.base import CallOptions
from navi.llm.chunks import TextDelta
from navi.llm.errors import StreamInterrupted
from navi.llm.messages import Message
from navi.llm.netstream import (
    AsyncioBackend,
    AsyncioStream,
    fast_transport,
    fast_transport_v2,
    ndjson_lines,
    sse_events,
)
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.openai_backend import OpenAIBackend
from navi.testing.fake_server import FakeModelServer
from tests.helpers.tls import certificates

MODEL = "gemma4:e2b-it-q8_0"  # the fake server's model
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(handler: Handler, **kwargs: object) -> AsyncIterator[int]:
    tasks: set[asyncio.Task[None]] = set()

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tasks.add(asyncio.current_task())  # type: ignore[arg-type]
        try:
            await handler(reader, writer)
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(tracked, "127.0.0.1", 0, **kwargs)  # type: ignore[arg-type]
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length")), 0)
    return head + (await reader.readexactly(length) if length else b"")


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n"
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def cut_or_gzipped(head: bytes, body: list[bytes]) -> Handler:
    """A server of `body`: on a path holding "gzip" whole and gzipped, else each part as a chunk of
    its own, 10 ms apart, after `head`."""
    packed = gzip.compress(b"".join(body))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_request(reader)
        if b"gzip" in request.split(b"\r\n", 1)[0]:
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n%s"
                % (len(packed), packed)
            )
        else:
            writer.write(head)
            for part in body:
                writer.write(chunked(part)[: -len(b"0\r\n\r\n")])
                await writer.drain()
                await asyncio.sleep(0.01)
            writer.write(b"0\r\n\r\n")
        await writer.drain()

    return handler


async def test_lines_stream_as_they_are_written_and_the_connection_is_kept() -> None:
    connections = 0
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for _ in range(2):  # two requests on one kept-alive connection
            await read_request(reader)
            writer.write(STREAM_HEAD + b"6\r\nfirst\n\r\n")
            await writer.drain()
            await release.wait()  # the second line only once the client has seen the first
            writer.write(b"7\r\nsecond\n\r\n0\r\n\r\n")
            await writer.drain()
            release.clear()

    async with serving(handler) as port, httpx.AsyncClient(transport=fast_transport()) as client:
        for _ in range(2):
            async with client.stream("POST", f"http://127.0.0.1:{port}/api/chat", content=b"{}") as response:
                lines = response.aiter_lines()
                assert await anext(lines) == "first"  # before the server wrote the rest
                release.set()
                assert [line async for line in lines] == ["second"]
    assert connections == 1


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # without saying so in a header: the client finds out from the socket

    async with serving(handler) as port, httpx.AsyncClient(transport=fast_transport()) as client:
        for _ in range(3):
            await asyncio.sleep(0.05)  # the close has arrived
            assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
    assert connections == 3


@pytest.mark.parametrize(
    ("client_module", "transport"),
    [(httpx, fast_transport), (httpx2, fast_transport_v2)],
    ids=["httpx", "httpx2"],
)
async def test_a_close_the_loop_has_not_read_yet_is_seen_before_the_connection_is_reused(
    client_module: Any, transport: Callable[..., Any]
) -> None:
    """The server closes each connection right after its response (llama-server did so after a
    streamed completion) and the next request goes out before the event loop ran again: the
    close is on the socket, not yet in the stream's reader. The pool must see it there and open
    a new connection, not send on the closed one ("Server disconnected without sending a
    response", which a model chain took for a dead server)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    connections: list[int] = []

    def serve() -> None:  # in a thread of its own: it closes while the test's loop is blocked
        for n in range(3):
            conn, _ = listener.accept()
            connections.append(n)
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        async with client_module.AsyncClient(transport=transport()) as client:
            for _ in range(3):
                assert (await client.get(f"http://127.0.0.1:{port}/")).text == "ok"
                time.sleep(0.05)  # noqa: ASYNC251  (on purpose: the close arrives, the loop does not run)
    finally:
        thread.join(5)
        listener.close()
    assert connections == [0, 1, 2]


@pytest.mark.parametrize(
    ("client_module", "transport"),
    [(httpx, fast_transport), (httpx2, fast_transport_v2)],
    ids=["httpx", "httpx2"],
)
async def test_a_request_a_reused_connection_ended_without_answering_is_sent_again(
    client_module: Any, transport: Callable[..., Any]
) -> None:
    """The server answers the first request of each connection and closes the connection when the
    second arrives, without a byte of answer: the close raced the request (a full run saw it
    after a streamed Gemma 3 answer, and the model chain took a running server for a dead one).
    The request goes again on a new connection; a new connection that ends that way is an error."""
    requests: list[tuple[int, bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = len({n for n, _ in requests}) + 1
        for turn in range(2):
            request = await read_request(reader)
            requests.append((connection, request.rsplit(b"\r\n\r\n", 1)[1]))
            if turn == 1 or b"/fresh-close" in request.split(b"\r\n", 1)[0]:
                return  # closed with the request unanswered
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()

    async with serving(handler) as port, client_module.AsyncClient(transport=transport()) as client:
        for n in range(3):
            response = await client.post(f"http://127.0.0.1:{port}/", content=b"body %d" % n)
            assert response.text == "ok"
        assert requests == [(1, b"body 0"), (1, b"body 1"), (2, b"body 1"), (2, b"body 2"), (3, b"body 2")]
        await client.aclose()

    requests.clear()
    async with serving(handler) as port, client_module.AsyncClient(transport=transport()) as client:
        with pytest.raises(client_module.RemoteProtocolError, match="without sending a response"):
            await client.post(f"http://127.0.0.1:{port}/fresh-close", content=b"once")
    assert requests == [(1, b"once")]


@pytest.mark.parametrize(
    ("client_module", "transport"),
    [(httpx, fast_transport), (httpx2, fast_transport_v2)],
    ids=["httpx", "httpx2"],
)
async def test_errors_are_the_clients_own(client_module: Any, transport: Callable[..., Any]) -> None:
    """httpx's errors through httpx, httpx2's through httpx2 (what the `openai` SDK catches)."""
    x = client_module

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(30)

    async def cut_short(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(STREAM_HEAD + b"6\r\nfirst\n\r\n")
        await writer.drain()
        writer.transport.abort()

    async with x.AsyncClient(transport=transport(), timeout=x.Timeout(5, read=0.3)) as client:
        async with serving(silent) as port:
            with pytest.raises(x.ReadTimeout):
                await client.get(f"http://127.0.0.1:{port}/")
        async with serving(cut_short) as port:
            with pytest.raises((x.RemoteProtocolError, x.ReadError)):
                async with client.stream("GET", f"http://127.0.0.1:{port}/") as response:
                    async for _ in response.aiter_lines():
                        pass
        async with serving(silent) as port:
            pass  # closed: nothing listens on the port any more
        with pytest.raises(x.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


async def test_tls_checks_the_certificate(tmp_path: Path) -> None:
    server_ctx, client_ctx = certificates(tmp_path, "localhost")

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(STREAM_HEAD + chunked(b'{"a":1}\n', b'{"b":2}\n'))
        await writer.drain()

    async with serving(handler, ssl=server_ctx) as port:
        async with (
            httpx.AsyncClient(transport=fast_transport(verify=client_ctx)) as client,
            client.stream("GET", f"https://localhost:{port}/") as response,
        ):
            stream = response.extensions["network_stream"]
            assert stream.get_extra_info("ssl_object").server_hostname == "localhost"
            assert [line async for line in response.aiter_lines()] == ['{"a":1}', '{"b":2}']
        async with httpx.AsyncClient(transport=fast_transport()) as client:  # the system's CAs only
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(f"https://localhost:{port}/")


async def test_the_ollama_backend_streams_through_asyncio_streams(fake_server: FakeModelServer) -> None:
    """httpx has no option for the network backend: `fast_transport` sets httpcore's pool's. This
    fails if a new httpx or httpcore stops taking it."""
    backend = OllamaBackend(fake_server.url)
    try:
        for shard in backend._streams:
            pool = shard._client._transport._pool
            assert isinstance(pool._network_backend, AsyncioBackend)
        fake_server.enqueue("Hello there")
        http = backend._streams[0]._client
        async with http.stream("POST", "/api/chat", content=b'{"model":"m","messages":[]}') as response:
            assert isinstance(response.extensions["network_stream"], AsyncioStream)
            assert [line async for line in response.aiter_lines() if line]
    finally:
        await backend.aclose()


async def test_ndjson_lines_are_whole_lines_however_the_body_is_cut(tmp_path: Path) -> None:
    """Lines split over chunks, several in one chunk, CRLF, blank lines, a last line without its
    newline; and a gzipped body (a proxy's doing) read through httpx's decoding."""
    body = [b'{"a":', b'1}\n{"b":2}\r\n\n{"c"', b":3}\n\n", b'{"d":4}']
    handler = cut_or_gzipped(STREAM_HEAD, body)

    async with serving(handler) as port, httpx.AsyncClient(transport=fast_transport()) as client:
        for path in ("/plain", "/gzip"):
            async with client.stream("GET", f"http://127.0.0.1:{port}{path}") as response:
                lines = [json.loads(line) async for line in ndjson_lines(response)]
            assert lines == [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}], path


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_the_sdk_backends_stream_through_asyncio_streams(
    kind: str, fake_server: FakeModelServer
) -> None:
    """The `openai` and `anthropic` SDKs' client (httpx2) gets the same network backend, raising
    httpcore2's errors; this fails if a new httpx2 or httpcore2 stops taking it."""
    backend = (
        OpenAIBackend(f"{fake_server.url}/v1")
        if kind == "openai"
        else AnthropicBackend("key", fake_server.url)
    )
    try:
        pool = backend._client._client._transport._pool
        assert isinstance(pool._network_backend, AsyncioBackend)
        assert pool._network_backend._core is httpcore2
        fake_server.enqueue("Hello there")
        deltas = [
            c.text
            async for c in backend.stream_complete([Message.user("hi")], CallOptions(model=MODEL))
            if isinstance(c, TextDelta)
        ]
        assert "".join(deltas) == "Hello there"
        (connection,) = pool.connections  # kept for the next call: the body was read to its end
        assert isinstance(connection._connection._network_stream, AsyncioStream)
    finally:
        await backend.aclose()


async def test_sse_events_are_whole_events_however_the_body_is_cut() -> None:
    """Events split over chunks and several in one, CRLF, comments, named events, `id:` and
    `retry:`, data over two lines, another field (older llama-server's `error:`), a last event
    without its blank line; and a gzipped body read through httpx2's decoding."""
    body = [
        b'data: {"a":',
        b'1}\n\n: keep-alive\n\ndata: {"b":2}\r\n\r\nevent: ping\ndata: {}\n\n',
        b"id: 7\nretry: 100\ndata: one\ndata: two\n\n",
        b'error: {"message":"slot unavailable"}\n\ndata: [DONE]',
    ]
    handler = cut_or_gzipped(SSE_HEAD, body)

    async with serving(handler) as port:
        for path in ("/plain", "/gzip"):  # a client each: this server closes after one response
            async with (
                httpx2.AsyncClient(transport=fast_transport_v2()) as client,
                client.stream("GET", f"http://127.0.0.1:{port}{path}") as response,
            ):
                events = [(event, bytes(data)) async for event, data in sse_events(response)]
            assert events == [
                ("message", b'{"a":1}'),
                ("message", b'{"b":2}'),
                ("ping", b"{}"),
                ("message", b"one\ntwo"),
                ("error", b'{"message":"slot unavailable"}'),
                ("message", b"[DONE]"),
            ], path


@pytest.mark.parametrize(
    "error",
    [b'data: {"error":{"code":500,"message":"slot unavailable"}}', b'error: {"message":"slot unavailable"}'],
    ids=["data", "error-field"],
)
async def test_an_error_inside_an_sse_stream_is_the_servers_words(error: bytes) -> None:
    """A server that fails mid-stream says why: in the data (llama-server now, vLLM, OpenAI) or
    in an `error:` line (older llama-server, which the SDK's own decoder ignored: the reply then
    only "ended before it was finished"). An event with empty data before it is skipped."""
    chunk = b'data: {"model":"m","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(SSE_HEAD + chunked(b"data:\n\n", chunk, error + b"\n\n"))  # an empty keep-alive first
        await writer.drain()

    async with serving(handler) as port:
        backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1")
        received: list[Any] = []
        try:
            with pytest.raises(StreamInterrupted, match="slot unavailable"):
                async for c in backend.stream_complete([Message.user("hi")], CallOptions(model="m")):
                    received.append(c)
        finally:
            await backend.aclose()
    assert [c.text for c in received if isinstance(c, TextDelta)] == ["Hel"]
