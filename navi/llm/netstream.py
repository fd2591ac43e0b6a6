"""httpx's sockets on plain asyncio streams, for the clients that read model streams.

httpx reaches the network through httpcore's network backend, by default anyio's. anyio wraps every
read in a cancel scope (a timeout scope, the current task looked up twice through sniffio), which
was a fifth of Navi's CPU per streamed token. This backend implements httpcore's public
`AsyncNetworkBackend` on asyncio's own streams: the same HTTP/1.1 client (h11, the pool, TLS,
httpx's errors), with a read that is one `StreamReader.read`, its timeout kept by a `Deadline`
(no timer per read).

`fast_transport()` is an `httpx.AsyncHTTPTransport` that uses it; the official `ollama` client takes
it as its `transport`. The `openai` and `anthropic` SDKs are built on the `httpx2` fork (its core
`httpcore2`, the same interface): `fast_transport_v2()` is the same thing for them. A backend holds
the core module whose errors it raises, so each client still sees its own exceptions.

A server may close a kept-alive connection just as the next request goes out on it (llama-server
does after a streamed completion); the request then meets the end of the connection before any
byte of a response. The pool checks the socket before reusing it, but the close can arrive after
the check: such a request is sent once more on a new connection (`StaleConnection`), as browsers
do. A new connection that ends that way is not tried again.

`ndjson_lines()` and `sse_events()` read a streamed body's lines from its raw bytes.
"""

# ruff: noqa: ASYNC109  (httpcore's interface passes each timeout as a parameter)
from __future__ import annotations

import asyncio
import contextlib
import functools
import select
import ssl
from collections.abc import AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any

import httpcore
import httpcore2
import httpx
import httpx2

from navi.llm.deadline import Deadline
from navi.net.tls import ca_context


@contextlib.contextmanager
def _mapped(timeout_error: type[Exception], other: type[Exception]) -> Iterator[None]:
    """asyncio's errors as httpcore's, which httpx turns into its own."""
    try:
        yield
    except TimeoutError as exc:
        raise timeout_error(str(exc) or "timed out") from exc
    except (OSError, EOFError, asyncio.IncompleteReadError) as exc:
        raise other(str(exc) or type(exc).__name__) from exc


@contextlib.asynccontextmanager
async def _within(
    timeout: float | None, timeout_error: type[Exception], other: type[Exception]
) -> AsyncIterator[None]:
    """A wait of at most `timeout` seconds (None: no limit), its errors as httpcore's."""
    with _mapped(timeout_error, other):
        async with asyncio.timeout(timeout):
            yield


LIMIT = 2**20  # a StreamReader's buffer before it pauses reading


class StaleConnection(httpcore.ReadError, httpcore2.ReadError):
    """A kept-alive connection ended before any byte of the response to a request sent on it
    again: the server closed it as the request went out, so it never answered it."""


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection. `core`: httpcore or httpcore2, whose errors the calls raise (duck-typed: the
    pools only call these methods)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, core: ModuleType = httpcore
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._core = core
        # A read that outlasts its timeout fails the reader; httpcore then drops the connection.
        self._deadline = Deadline(lambda: reader.set_exception(TimeoutError("the read timed out")))
        self._answered = False  # bytes arrived since the last request went out
        self._reused = False  # a request went out after an answer had arrived

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            with _mapped(self._core.ReadTimeout, self._core.ReadError):
                data = await self._read(max_bytes, timeout)
        except self._core.ReadError as exc:
            if self._reused and not self._answered and isinstance(exc.__cause__, ConnectionError):
                raise StaleConnection(str(exc)) from exc
            raise
        if data:
            self._answered = True
        elif self._reused and not self._answered:
            raise StaleConnection("the server closed a kept-alive connection before answering")
        return data

    async def _read(self, max_bytes: int, timeout: float | None) -> bytes:
        if timeout is None or self._reader._buffer:  # type: ignore[attr-defined]  # no wait
            return await self._reader.read(max_bytes)
        self._deadline.start(timeout)
        try:
            return await self._reader.read(max_bytes)
        finally:
            self._deadline.clear()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._answered:  # a new request on a connection that has answered one
            self._reused, self._answered = True, False
        with _mapped(self._core.WriteTimeout, self._core.WriteError):
            self._writer.write(buffer)
        if self._writer.transport.get_write_buffer_size():  # only a full buffer waits
            async with _within(timeout, self._core.WriteTimeout, self._core.WriteError):
                await self._writer.drain()

    async def aclose(self) -> None:
        self._deadline.close()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        async with _within(timeout, self._core.ConnectTimeout, self._core.ConnectError):
            await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle kept-alive connection the server closed, or wrote to
            if self._reader.at_eof() or self._reader._buffer:  # type: ignore[attr-defined]
                return True
            # The server's close may have arrived without the loop having run since to tell the
            # reader (a request sent right after the last response was read): asked of the socket.
            return _socket_readable(self._writer.get_extra_info("socket"))
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        if name not in ("ssl_object", "socket", "sockname", "peername"):
            return None
        try:
            return self._writer.get_extra_info(name)
        except AttributeError:  # a TLS transport already closed
            return None


def _socket_readable(sock: Any) -> bool:
    """Whether a read of `sock` would return at once (data, or the end of the connection), asked
    without reading. No socket (a transport already closed): readable, as a closed one is."""
    fd = sock.fileno() if sock is not None else -1
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, core: ModuleType = httpcore) -> None:
        self._core = core

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        async with _within(timeout, self._core.ConnectTimeout, self._core.ConnectError):
            reader, writer = await asyncio.open_connection(
                host, port, local_addr=(local_address, 0) if local_address else None, limit=LIMIT
            )
        sock = writer.get_extra_info("socket")  # asyncio sets TCP_NODELAY itself
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer, self._core)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        async with _within(timeout, self._core.ConnectTimeout, self._core.ConnectError):
            reader, writer = await asyncio.open_unix_connection(path, limit=LIMIT)
        return AsyncioStream(reader, writer, self._core)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@functools.cache
def _tls(flavour: str) -> ssl.SSLContext:
    """The certificate store loaded once per process (httpx or httpx2's defaults, `SSL_CERT_FILE`
    honoured): loading it costs about 30 ms, and a backend has several transports — every runtime
    a CLI command or a worker builds paid it eight times over."""
    return httpx2.create_ssl_context() if flavour == "httpx2" else ca_context()


def _stale(exc: Exception, request: httpx.Request | httpx2.Request) -> bool:
    """Whether `exc` is a request the server never answered on a reused connection, whose body
    can be sent again (bytes, not a stream already read)."""
    return isinstance(exc.__cause__, StaleConnection) and isinstance(
        request.stream, (httpx.ByteStream, httpx2.ByteStream)
    )


class _SendsAgain:
    """A transport (httpx's or httpx2's, the other base) that sends a request once more on a new
    connection when a reused one ended without answering it (`_stale`)."""

    async def handle_async_request(self, request: Any) -> Any:
        try:
            return await super().handle_async_request(request)  # type: ignore[misc]
        except (httpx.ReadError, httpx2.ReadError) as exc:
            if not _stale(exc, request):
                raise
        return await super().handle_async_request(request)  # type: ignore[misc]


class _Transport(_SendsAgain, httpx.AsyncHTTPTransport):
    pass


class _TransportV2(_SendsAgain, httpx2.AsyncHTTPTransport):
    pass


def fast_transport(**options: Any) -> httpx.AsyncHTTPTransport:
    """An `httpx.AsyncHTTPTransport` (same options) whose connections are asyncio streams."""
    options.setdefault("verify", _tls("httpx"))
    transport = _Transport(**options)
    # httpx builds its httpcore pool itself and has no option for the backend; every connection the
    # pool opens takes this attribute (httpx and httpcore are pinned; tests/test_netstream.py checks).
    transport._pool._network_backend = AsyncioBackend()
    return transport


# What the `openai` and `anthropic` SDKs' own clients allow (a transport given to a client takes its own).
SDK_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)


def fast_transport_v2(**options: Any) -> httpx2.AsyncHTTPTransport:
    """The same for `httpx2` (the `openai` and `anthropic` SDKs' HTTP client), with the SDKs'
    connection limits unless given others."""
    options.setdefault("limits", SDK_LIMITS)
    options.setdefault("verify", _tls("httpx2"))
    transport = _TransportV2(**options)
    transport._pool._network_backend = AsyncioBackend(httpcore2)  # type: ignore[assignment]  # duck-typed
    return transport


async def body_lines(response: httpx.Response | httpx2.Response) -> AsyncIterator[bytes | str]:
    """Every line of a streamed body as it arrives, blank ones too, without its newline.

    From the raw body, split on newlines here: httpx's `aiter_lines` stacks three more generators
    and two incremental decoders over it for each chunk. A compressed body (a proxy may gzip it)
    goes through the client's decoding, as `aiter_lines`."""
    if response.headers.get("content-encoding", "identity") != "identity":
        async for text in response.aiter_lines():
            yield text
        return
    rest = b""
    async for data in response.aiter_raw():
        if rest:
            data = rest + data
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            yield data[start:end]
            start = end + 1
        rest = data[start:]
    if rest:
        yield rest


async def ndjson_lines(response: httpx.Response) -> AsyncIterator[bytes | str]:
    """The non-blank lines of a streamed NDJSON body, as they arrive."""
    async for line in body_lines(response):
        if line.strip():
            yield line


async def sse_events(response: httpx2.Response) -> AsyncIterator[tuple[str, bytes]]:
    """`(event, data)` for each server-sent event of a streamed body, as it arrives.

    The event is "message" unless an `event:` field names it; the data lines of one event are
    joined by newlines. Comments, `id:` and `retry:` are skipped. Any other field is yielded on
    its own as an event of its name: older llama-server versions reported a failure mid-stream
    as an `error: {…}` line (newer ones send `data: {"error": …}`), which the `openai` SDK's
    decoder drops."""
    event, data = "", []
    async for raw in body_lines(response):
        line = raw.encode() if isinstance(raw, str) else raw
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif not line:
            if data:
                yield event or "message", data[0] if len(data) == 1 else b"\n".join(data)
            event, data = "", []
        elif not line.startswith(b":"):
            name, _, value = line.partition(b":")
            value = value[1:] if value[:1] == b" " else value
            if name == b"event":
                event = value.decode("utf-8", "replace")
            elif name not in (b"id", b"retry"):
                yield name.decode("utf-8", "replace"), value
    if data:
        yield event or "message", b"\n".join(data)
