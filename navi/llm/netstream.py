"""httpx's sockets on plain asyncio streams, for the clients that read model streams.

httpx reaches the network through httpcore's network backend, by default anyio's. anyio wraps every
read in a cancel scope (a timeout scope, the current task looked up twice through sniffio), which
was a fifth of Navi's CPU per streamed token. This backend implements httpcore's public
`AsyncNetworkBackend` on asyncio's own streams: the same HTTP/1.1 client (h11, the pool, TLS,
httpx's errors), with a read that is one `StreamReader.read`, its timeout kept by a `Deadline`
(no timer per read).

`fast_transport()` is an `httpx.AsyncHTTPTransport` that uses it; the official `ollama` client takes
it as its `transport`.
"""

# ruff: noqa: ASYNC109  (httpcore's interface passes each timeout as a parameter)
from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpcore
import httpx

from navi.llm.deadline import Deadline


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


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        # A read that outlasts its timeout fails the reader; httpcore then drops the connection.
        self._deadline = Deadline(lambda: reader.set_exception(TimeoutError("the read timed out")))

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(httpcore.ReadTimeout, httpcore.ReadError):
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
        with _mapped(httpcore.WriteTimeout, httpcore.WriteError):
            self._writer.write(buffer)
        if self._writer.transport.get_write_buffer_size():  # only a full buffer waits
            async with _within(timeout, httpcore.WriteTimeout, httpcore.WriteError):
                await self._writer.drain()

    async def aclose(self) -> None:
        self._deadline.close()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        async with _within(timeout, httpcore.ConnectTimeout, httpcore.ConnectError):
            await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle kept-alive connection the server closed, or wrote to
            return self._reader.at_eof() or bool(self._reader._buffer)  # type: ignore[attr-defined]
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        if name not in ("ssl_object", "socket", "sockname", "peername"):
            return None
        try:
            return self._writer.get_extra_info(name)
        except AttributeError:  # a TLS transport already closed
            return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        async with _within(timeout, httpcore.ConnectTimeout, httpcore.ConnectError):
            reader, writer = await asyncio.open_connection(
                host, port, local_addr=(local_address, 0) if local_address else None, limit=LIMIT
            )
        sock = writer.get_extra_info("socket")  # asyncio sets TCP_NODELAY itself
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        async with _within(timeout, httpcore.ConnectTimeout, httpcore.ConnectError):
            reader, writer = await asyncio.open_unix_connection(path, limit=LIMIT)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def fast_transport(**options: Any) -> httpx.AsyncHTTPTransport:
    """An `httpx.AsyncHTTPTransport` (same options) whose connections are asyncio streams."""
    transport = httpx.AsyncHTTPTransport(**options)
    # httpx builds its httpcore pool itself and has no option for the backend; every connection the
    # pool opens takes this attribute (httpx and httpcore are pinned; tests/test_netstream.py checks).
    transport._pool._network_backend = AsyncioBackend()
    return transport


async def ndjson_lines(response: httpx.Response) -> AsyncIterator[bytes | str]:
    """The non-blank lines of a streamed NDJSON body, as they arrive.

    From the raw body, split on newlines here: httpx's `aiter_lines` stacks three more generators
    and two incremental decoders over it for each chunk. A compressed body (a proxy may gzip it)
    goes through httpx's decoding, as `aiter_lines`."""
    if response.headers.get("content-encoding", "identity") != "identity":
        async for text in response.aiter_lines():
            if text.strip():
                yield text
        return
    rest = b""
    async for data in response.aiter_raw():
        if rest:
            data = rest + data
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            line = data[start:end]
            if line.strip():
                yield line
            start = end + 1
        rest = data[start:]
    if rest.strip():
        yield rest
