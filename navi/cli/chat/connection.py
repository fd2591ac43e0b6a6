"""One WebSocket to one session, kept open: frames go into a queue, a drop is repaired.

After a drop it reconnects with backoff and asks only for what it has not seen of the run it
followed (`?since=<last seq>&run=<run id>`), so a turn carries on where it was — the run went on
without us. Frames already seen are skipped, as the web page does. What the reader learns about
the connection itself reaches the queue as frames of our own, with types starting with `_`:
`_connection {state}` (`open`, `reconnecting`) and `_gone {message}` (the session was deleted, or
Navi refused us — at the handshake, or by closing the socket with 4401 when the token stopped
letting us in: following it is over, and reconnecting would only be refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import quote

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from navi.cli.remote import START_FIX, Target, token_fix

CLOSE_UNKNOWN_SESSION = 4004
CLOSE_SIGNED_OUT = 4401  # the token or sign-in no longer lets us in (the user was removed)
MAX_BACKOFF = 8.0
VISIBILITY_SECONDS = 30  # as the page reports (navi/push/presence.py)


class NotConnected(Exception):
    """The socket is not open (Navi is unreachable, or it is reconnecting)."""


class SessionConnection:
    def __init__(self, target: Target, session_id: str, frames: asyncio.Queue[dict[str, Any]]) -> None:
        self.target = target
        self.session_id = session_id
        self.frames = frames  # shared with whoever else feeds the consumer (keys, Ctrl-C)
        self.state = "connecting"  # open, reconnecting, gone
        self.last_seq = 0
        self.last_run = ""
        self._ws: ClientConnection | None = None
        self._opened = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._kick = asyncio.Event()
        self.gone_reason = ""

    def url(self) -> str:
        since = f"?since={self.last_seq}&run={quote(self.last_run)}" if self.last_seq else ""
        return f"{self.target.ws_url}/ws/sessions/{quote(self.session_id)}{since}"

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"navi-chat-socket-{self.session_id}")

    async def close(self) -> None:
        self.state = "gone"
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()

    async def wait_open(self, limit: float = 10.0) -> None:
        """Wait until the socket is open; NotConnected (with the fix) when it is not within `limit` s."""
        if self.state == "gone":
            raise NotConnected(self.gone_reason or "this conversation is closed")
        self._kick.set()  # a reconnect waiting out its backoff tries now
        try:
            await asyncio.wait_for(self._opened.wait(), limit)
        except TimeoutError:
            raise NotConnected(f"cannot reach Navi at {self.target.url} — {START_FIX}") from None

    async def send(self, frame: dict[str, Any]) -> None:
        await self.wait_open()
        assert self._ws is not None
        try:
            await self._ws.send(json.dumps(frame))
        except ConnectionClosed:
            raise NotConnected("the connection to Navi dropped; try again in a moment") from None

    def _accept(self, frame: dict[str, Any]) -> bool:
        """Whether `frame` is new. A run's frames are numbered from 1 (its stream_start); after a
        reconnect, frames of the same run up to the last seen number are skipped."""
        seq = frame.get("seq")
        if not isinstance(seq, int):
            return True
        run = frame.get("run_id")
        same_run = run is None or run == self.last_run
        if same_run and frame.get("type") != "stream_start" and seq <= self.last_seq:
            return False
        self.last_seq = seq
        if isinstance(run, str):
            self.last_run = run
        return True

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.frames.put_nowait({"type": "_connection", "state": state})

    async def _run(self) -> None:
        retries = 0
        while True:
            try:
                async with connect(
                    self.url(),
                    additional_headers=self.target.headers,
                    open_timeout=10,
                    max_size=64 * 1024 * 1024,
                    compression=None,
                ) as ws:
                    self._ws = ws
                    retries = 0
                    self._opened.set()
                    self._set_state("open")
                    # The terminal is in view while it is connected: Navi pushes no notification
                    # of what it shows here (docs/notifications.md), told every 30 s as a page is.
                    beat = asyncio.create_task(_in_view(ws))
                    try:
                        async for raw in ws:
                            try:
                                frame = json.loads(raw)
                            except ValueError:
                                continue
                            if isinstance(frame, dict) and self._accept(frame):
                                self.frames.put_nowait(frame)
                    finally:
                        beat.cancel()
                    if self._ended(ws.close_code):
                        return
            except InvalidStatus as exc:
                status = exc.response.status_code
                if status in (401, 403):
                    self._gone(f"Navi at {self.target.url} refused the connection — {token_fix(self.target)}")
                    return
            except ConnectionClosed as exc:
                if exc.rcvd is not None and self._ended(exc.rcvd.code):
                    return
            except (OSError, InvalidHandshake, TimeoutError):
                pass
            self._ws = None
            self._opened.clear()
            self._set_state("reconnecting")
            self._kick.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), min(MAX_BACKOFF, 0.25 * 2**retries))
            retries += 1

    def _ended(self, code: int | None) -> bool:
        """Whether Navi closed the socket for good (`_gone` said why): no reconnect."""
        if code == CLOSE_UNKNOWN_SESSION:
            self._gone("this conversation no longer exists (it was deleted)")
        elif code == CLOSE_SIGNED_OUT:
            self._gone(
                f"Navi at {self.target.url} signed this connection out: its token no longer lets it in "
                f"(the user was removed) — {token_fix(self.target)}"
            )
        else:
            return False
        return True

    def _gone(self, message: str) -> None:
        self.gone_reason = message
        self._ws = None
        self._opened.clear()
        self.state = "gone"
        self.frames.put_nowait({"type": "_gone", "message": message})


async def _in_view(ws: Any) -> None:
    with contextlib.suppress(ConnectionClosed, OSError):
        while True:
            await ws.send(json.dumps({"type": "visibility", "visible": True}))
            await asyncio.sleep(VISIBILITY_SECONDS)
