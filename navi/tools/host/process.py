"""One running tool host, usable from any event loop: its pipes are served by threads.

Why threads: Navi's runtime may be built in one event loop and used or closed in another (CLI
commands and tests do), and asyncio's subprocess transports belong to the loop that made them. Here
a reader thread hands each reply to the loop that asked for it, a writer thread writes frames in
order (so a host that stops reading can never block Navi's event loop), and a third thread keeps the
tail of what the host prints on stderr, for the message when it dies.

The process is a process-group leader. It is killed (the whole group, and with bwrap everything in
its sandbox) before it is ever reaped, so its pid cannot have been reused by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from typing import Any

from navi.logging import get_logger
from navi.tools.host.protocol import ProtocolError, encode, read_frame_sync

log = get_logger(__name__)

CLOSE_GRACE = 2.0  # how long a closed host may take to exit by itself
LAST_WORDS = 0.5  # how long to wait for the last of a dead host's stderr
STDERR_TAIL = 12
MAX_LINE = 300


class HostError(Exception):
    """The tool host cannot be started, or stopped while answering; the message says why."""


def _settle(future: asyncio.Future[dict[str, Any]], reply: dict[str, Any] | None, error: str | None) -> None:
    if future.done():
        return
    if error is None:
        assert reply is not None
        future.set_result(reply)
    else:
        future.set_exception(HostError(error))
        future.exception()  # seen: a caller that gave up waiting need not hear of it


class HostProcess:
    """A started host: requests and their replies, how it ended, the calls running in it."""

    def __init__(self, proc: subprocess.Popen[bytes], workdir: str) -> None:
        self.proc = proc
        self.workdir = workdir
        self.tail: deque[str] = deque(maxlen=STDERR_TAIL)
        self.ended: str | None = None
        self.busy = 0  # calls running in it (only ever touched from an event loop)
        self.retired = False  # replaced by a newer host: closed once its calls are done
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[dict[str, Any]]]] = {}
        self._lock = threading.Lock()
        self._reap_lock = threading.Lock()
        self._reaped = False
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._read, name="tool-host-reader", daemon=True),
            threading.Thread(target=self._write, name="tool-host-writer", daemon=True),
            threading.Thread(target=self._stderr, name="tool-host-stderr", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def alive(self) -> bool:
        return self.ended is None and not self._reaped

    def last_output(self) -> str:
        return " | ".join(self.tail)

    # --- threads ---------------------------------------------------------------------------------
    def _read(self) -> None:
        assert self.proc.stdout is not None
        reason = "the tool host exited"
        try:
            while (message := read_frame_sync(self.proc.stdout)) is not None:
                rid = message.get("id")
                with self._lock:
                    entry = self._pending.pop(rid, None) if isinstance(rid, int) else None
                if entry is not None:
                    self._deliver(entry, message, None)
        except ProtocolError as exc:
            reason = f"the tool host broke the protocol ({exc})"
        except (OSError, ValueError) as exc:
            reason = f"the tool host's output failed ({exc})"
        self._finish(reason)
        with contextlib.suppress(OSError):
            self.proc.stdout.close()

    def _write(self) -> None:
        assert self.proc.stdin is not None
        try:
            while (data := self._outbox.get()) is not None:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError):
            pass  # the host is gone; the reader reports it
        finally:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()

    def _stderr(self) -> None:
        assert self.proc.stderr is not None
        partial = b""
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(self.proc.stderr.fileno(), 65536):
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-4 * MAX_LINE :]
                for raw in lines:
                    line = raw.decode("utf-8", errors="replace").rstrip()
                    if line.strip():
                        self.tail.append(line[:MAX_LINE])
                        log.debug("tool_host_output", line=line[: 10 * MAX_LINE])
        if partial.strip():
            self.tail.append(partial.decode("utf-8", errors="replace").rstrip()[:MAX_LINE])
        with contextlib.suppress(OSError):
            self.proc.stderr.close()

    @staticmethod
    def _deliver(
        entry: tuple[asyncio.AbstractEventLoop, asyncio.Future[dict[str, Any]]],
        reply: dict[str, Any] | None,
        error: str | None,
    ) -> None:
        loop, future = entry
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is waiting any more
            loop.call_soon_threadsafe(_settle, future, reply, error)

    def _reap(self) -> None:
        """Kill the group (a no-op for what already exited), then collect the exit status."""
        with self._reap_lock:
            if self._reaped:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self._reaped = True
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _exited(self, limit: float) -> bool:
        """Whether the host exits within `limit` seconds, leaving it unreaped (its pid stays ours)."""
        deadline = time.monotonic() + limit
        while True:
            try:
                if os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def _finish(self, reason: str) -> None:
        """The host is over: reap it, say why in `ended`, fail every request still waiting."""
        if self.ended is None:
            self._exited(LAST_WORDS)  # its output ended: give it a moment to exit with its own status
        self._reap()
        self._threads[2].join(LAST_WORDS)
        if self.ended is None:
            code = self.proc.returncode
            detail = f"{reason} (exit code {code})" if code is not None and code >= 0 else reason
            if self.tail:
                detail += f"; its last output: {self.last_output()}"
            self.ended = detail
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for entry in pending:
            self._deliver(entry, None, self.ended)
        self._outbox.put(None)

    # --- from an event loop ----------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Queue one frame for the host; HostError when it is gone or the message is too large."""
        if not self.alive:
            raise HostError(self.ended or "the tool host is not running")
        try:
            self._outbox.put(encode(message))
        except ProtocolError as exc:
            raise HostError(str(exc)) from None

    def request(self, message: dict[str, Any]) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Send `message` with a fresh id; the future gets the reply (or HostError)."""
        rid = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        with self._lock:
            self._pending[rid] = (loop, future)
        future.add_done_callback(lambda _f: self._forget(rid))
        try:
            self.send({**message, "id": rid})
        except HostError:
            future.cancel()
            raise
        return rid, future

    def _forget(self, rid: int) -> None:
        with self._lock:
            self._pending.pop(rid, None)

    async def ask(self, message: dict[str, Any], limit: float) -> dict[str, Any]:
        """The reply to `message`; TimeoutError after `limit` seconds."""
        _rid, future = self.request(message)
        return await asyncio.wait_for(future, limit)

    async def kill(self, reason: str = "the tool host was stopped") -> None:
        """End the host now; requests still waiting fail with `reason`."""
        if self.ended is None:
            self.ended = reason
        await asyncio.to_thread(self._finish, reason)

    async def close(self) -> None:
        """Let the host finish: close its input (it exits at end of input), kill it if it lingers."""
        self._outbox.put(None)
        await asyncio.to_thread(self._threads[0].join, CLOSE_GRACE)
        await self.kill("the tool host was closed")
