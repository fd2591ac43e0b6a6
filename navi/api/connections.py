"""Connections that have not sent a request yet: a deadline each, a cap on how many, a size limit.

uvicorn waits for a new connection's first request head for as long as the client likes (its
keep-alive timeout starts only after a response), takes a request head of any size with httptools,
and its `limit_concurrency` counts idle connections too — so a few hundred sockets that connect
and then send nothing, or one header byte every few seconds, would either use up the open-file
limit (and then nobody gets in) or, with `limit_concurrency`, get real users answered 503.

`navi serve` therefore uses uvicorn's HTTP protocol with a `ConnectionGuard`:

- A connection waiting for a request head (a new one, or a kept-alive one between requests) must
  complete it within `head_timeout` seconds in all, however it trickles in; then it is closed.
- At most `max_waiting` connections wait at once; one more closes the one that has waited
  longest. A real client sends its request at once, so it is never the oldest for long. But in
  a burst (hundreds of clients connecting at once, a proxy opening its pool, pages reconnecting
  after a restart) every connection is accepted before any of them is read, so the oldest were
  real clients whose request was already in the socket's buffer: one that has waited less than
  `grace` seconds is not closed for crowding until the burst reaches `hard_cap`; once it has
  had its moment, the count is brought back to `max_waiting` as before.
- A request head larger than `max_head_bytes` is answered 431, a request line longer than
  `MAX_LINE_BYTES` 414, and the connection closed. (A WebSocket handshake with a longer line
  would otherwise hang: the websockets parser gives up on it without an answer.)

Requests in progress (their head complete, the token checked by the app) are not touched: an
upload or a long answer takes as long as it takes.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is an optional speed-up of uvicorn
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

MAX_HEAD_BYTES = 32 * 1024  # request line and headers; a browser's are a few kB
MAX_LINE_BYTES = 8000  # the request line; the websockets handshake parser stops at 8,192
GRACE_SECONDS = 1.0  # a connection this new is not closed for crowding (below the hard cap)


def _refusal(status: str, text: str) -> bytes:
    body = text.encode() + b"\n"
    return (
        b"HTTP/1.1 %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n%s" % (status.encode(), len(body), body)
    )


_HEAD_END = re.compile(rb"\r?\n\r?\n")  # the blank line after the headers
_HEAD_TOO_LARGE = _refusal("431 Request Header Fields Too Large", "the request head is too large")
_LINE_TOO_LONG = _refusal("414 URI Too Long", "the request line is too long")


class ConnectionGuard:
    """The connections of one server that are waiting for a request head, oldest first."""

    def __init__(
        self,
        *,
        head_timeout: float,
        max_waiting: int,
        max_head_bytes: int = MAX_HEAD_BYTES,
        hard_cap: int | None = None,
        grace: float = GRACE_SECONDS,
    ) -> None:
        self.head_timeout = head_timeout
        self.max_waiting = max_waiting
        self.hard_cap = max(max_waiting, hard_cap if hard_cap is not None else 2 * max_waiting)
        self.grace = grace
        self.max_head_bytes = max_head_bytes
        # Each with its deadline and when it began to wait.
        self._waiting: OrderedDict[Any, tuple[asyncio.TimerHandle, float]] = OrderedDict()
        self._recheck: asyncio.TimerHandle | None = None
        self.closed_slow = 0  # closed at their deadline
        self.closed_crowded = 0  # closed to make room for a newer one

    def waiting(self, conn: Any) -> None:
        """`conn` now waits for a request head: start its deadline, make room if needed."""
        self.started(conn)
        conn.head_bytes = 0
        conn.head_tail = b""
        conn.line_done = False
        loop = conn.loop
        self._waiting[conn] = (loop.call_later(self.head_timeout, self._expire, conn), loop.time())
        self._make_room(loop)

    def _make_room(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the longest-waiting connections while more than `max_waiting` wait — but one that
        began to wait less than `grace` ago only past `hard_cap`; then look again once it has had
        its moment (its request may be in its buffer, read in the loop's next rounds)."""
        while len(self._waiting) > self.max_waiting:
            oldest, (timer, since) = next(iter(self._waiting.items()))
            young = loop.time() - since < self.grace
            if young and len(self._waiting) <= self.hard_cap:
                if self._recheck is None:
                    self._recheck = loop.call_at(since + self.grace, self._recheck_room, loop)
                return
            del self._waiting[oldest]
            timer.cancel()
            self.closed_crowded += 1
            oldest.transport.close()

    def _recheck_room(self, loop: asyncio.AbstractEventLoop) -> None:
        self._recheck = None
        self._make_room(loop)

    def started(self, conn: Any) -> None:
        """`conn` has a complete request head (or is gone): no deadline any more."""
        waited = self._waiting.pop(conn, None)
        if waited is not None:
            waited[0].cancel()

    def is_waiting(self, conn: Any) -> bool:
        return conn in self._waiting

    def count(self) -> int:
        return len(self._waiting)

    def _expire(self, conn: Any) -> None:
        if self._waiting.pop(conn, None) is not None:
            self.closed_slow += 1
            conn.transport.close()


class _Guarded:
    """Mixed into a uvicorn HTTP protocol class; `guard` is set on the class (`guarded_protocol`)."""

    guard: ConnectionGuard
    head_bytes: int = 0  # of the request head being waited for
    head_tail: bytes = b""  # its last bytes so far: the blank line that ends it may span packets
    line_done: bool = False  # its request line has ended
    transport: asyncio.Transport
    cycle: Any

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self.guard.waiting(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.started(self)
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        if self.guard.is_waiting(self) and (refusal := self._measure_head(data)):
            return self._refuse(refusal)
        super().data_received(data)  # type: ignore[misc]
        self._after_data()

    def _measure_head(self, data: bytes) -> bytes | None:
        """Count what `data` adds to the request head (not the body that may follow it in the same
        packet); the refusal to send when the head or its first line is too long."""
        seen = self.head_tail + data
        end = _HEAD_END.search(seen)
        head_part = len(data) if end is None else max(0, end.end() - len(self.head_tail))
        line_start = self.head_bytes
        self.head_bytes += head_part
        self.head_tail = seen[-3:]
        if not self.line_done:
            newline = data.find(b"\n", 0, head_part)
            self.line_done = newline >= 0
            if (line_start + newline if newline >= 0 else self.head_bytes) > MAX_LINE_BYTES:
                return _LINE_TOO_LONG
        return _HEAD_TOO_LARGE if self.head_bytes > self.guard.max_head_bytes else None

    def _refuse(self, response: bytes) -> None:
        self.guard.started(self)
        if not self.transport.is_closing():
            self.transport.write(response)
            self.transport.close()

    def _after_data(self) -> None:
        """Subclasses: tell the guard when a request head has completed."""

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self.guard.waiting(self)  # kept alive: the next request's head has its own deadline


class _GuardedH11(_Guarded, H11Protocol):
    conn: h11.Connection

    def _after_data(self) -> None:
        if self.conn.their_state is not h11.IDLE:  # a whole request head was parsed (or an error)
            self.guard.started(self)


_GuardedHttpTools: type | None = None
if HttpToolsProtocol is not None:

    class _GuardedHttpToolsProtocol(_Guarded, HttpToolsProtocol):
        def on_headers_complete(self) -> None:
            self.guard.started(self)
            super().on_headers_complete()

    _GuardedHttpTools = _GuardedHttpToolsProtocol


def guarded_protocol(guard: ConnectionGuard, *, prefer_httptools: bool = True) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools when installed, else h11) watched by `guard`: pass it
    as `uvicorn.run(..., http=...)`."""
    base: type = _GuardedHttpTools if prefer_httptools and _GuardedHttpTools is not None else _GuardedH11
    return type(f"Guarded{base.__name__}", (base,), {"guard": guard})
