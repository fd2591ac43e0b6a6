"""Running a child process for a tool: its own process group, a timeout, an output cap, and stop.

The child starts a new session (so it and everything it spawns share one process group). On
timeout, on the run's stop event, or if the tool itself is cancelled, the whole group gets SIGTERM
and, a moment later, SIGKILL. Output beyond the cap is read and thrown away (so the child never
blocks on a full pipe) and the result says how much was dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from navi.sandbox import Sandbox, SandboxRefused
from navi.tools.base import ToolResult

KILL_GRACE = 1.0


@dataclass
class ProcessResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    stopped: bool = False
    dropped_bytes: int = 0
    duration: float = 0.0

    def to_tool_result(self, what: str, time_limit: float) -> ToolResult:
        """A failed result unless the child exited 0 by itself; the output is always included."""
        text = self.render()
        kept: dict[str, Any] = {"stderr": self.stderr} if self.stderr else {}  # also in the message metadata
        if self.stopped:
            return ToolResult.fail("stopped by the user", text, stopped=True, **kept)
        if self.timed_out:
            killed = f"the {what} ran longer than {time_limit:g} s and was killed"
            return ToolResult.fail(killed, text, **kept)
        if self.returncode != 0:
            return ToolResult.fail(f"the {what} exited with code {self.returncode}", text, **kept)
        return ToolResult.ok(text, exit_code=0, **kept)

    def render(self) -> str:
        """What the model sees: both streams, how it ended, and whether output was cut."""
        parts = []
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append(f"[stderr]\n{self.stderr.rstrip()}")
        if self.dropped_bytes:
            parts.append(f"[output truncated: {self.dropped_bytes} more bytes were not kept]")
        if self.timed_out:
            parts.append(f"[killed: timed out after {self.duration:.1f} s]")
        elif self.stopped:
            parts.append("[killed: stopped by the user]")
        else:
            parts.append(f"[exit code {self.returncode}]")
        return "\n".join(parts)


class _Capped:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    async def pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = self.limit - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class SandboxPid:
    """bwrap's `--info-fd`: a pipe on which bwrap writes the host pid of the sandbox's first
    process as soon as it has made it. Killing that process ends the sandbox's whole PID
    namespace, which killing bwrap does not always do: that child, in a session of its own (out
    of reach of the group's signals), asks to die with its parent a moment after it starts, so a
    bwrap killed in its first milliseconds could leave the command running (killed 0–10 ms after
    its start: 1 in 60)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self._data = b""
        self._ended = False

    def spawned(self) -> None:
        """The child has its copy of the write end: close ours, so bwrap's exit is an end of file."""
        os.close(self.write_fd)
        self.write_fd = -1

    async def pid(self, wait: float) -> int | None:
        """The pid, once bwrap has written it (waiting at most `wait` s); None when bwrap ended or
        wrote nothing in that time."""
        deadline = time.monotonic() + wait
        while True:
            try:
                while chunk := os.read(self.read_fd, 4096):
                    self._data += chunk
                self._ended = True
            except BlockingIOError:
                pass
            if found := re.search(rb'"child-pid"\s*:\s*(\d+)', self._data):
                return int(found[1])
            if self._ended or time.monotonic() >= deadline:
                return None
            await asyncio.sleep(0.01)

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                os.close(fd)
        self.read_fd = self.write_fd = -1


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _terminate(proc: asyncio.subprocess.Process, sandbox: SandboxPid | None = None) -> None:
    if sandbox is not None and (inner := await sandbox.pid(wait=KILL_GRACE)) and proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # bwrap not reaped: still its child
            os.kill(inner, signal.SIGKILL)
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), KILL_GRACE)
    except TimeoutError:
        pass
    _kill_group(proc.pid, signal.SIGKILL)  # also reaps grandchildren that ignored SIGTERM
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()


async def run_process(
    argv: Sequence[str],
    *,
    time_limit: float,
    max_output: int = 20_000,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stop_event: asyncio.Event | None = None,
    stdin: bytes | None = None,
    sandbox: SandboxPid | None = None,
) -> ProcessResult:
    """Run `argv` to its end, its time limit or the stop; `sandbox`: the pipe `argv`'s bwrap
    writes its first process's pid to (`--info-fd`), killed with it."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        start_new_session=True,
        pass_fds=(sandbox.write_fd,) if sandbox is not None else (),
    )
    if sandbox is not None:
        sandbox.spawned()
    out, err = _Capped(max_output), _Capped(max_output // 2)
    assert proc.stdout is not None and proc.stderr is not None
    readers = [asyncio.ensure_future(out.pump(proc.stdout)), asyncio.ensure_future(err.pump(proc.stderr))]
    if stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        proc.stdin.close()
    waiter = asyncio.ensure_future(proc.wait())
    stopper = asyncio.ensure_future(stop_event.wait()) if stop_event is not None else None
    timed_out = stopped = False
    try:
        waits = {waiter} | ({stopper} if stopper else set())
        done, _ = await asyncio.wait(waits, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            stopped = stopper is not None and stopper in done
            timed_out = not stopped
            await _terminate(proc, sandbox)
        await asyncio.wait(readers, timeout=KILL_GRACE)
    except asyncio.CancelledError:
        await _terminate(proc, sandbox)
        raise
    finally:
        for task in (*readers, waiter, *(t for t in [stopper] if t)):
            task.cancel()
    return ProcessResult(
        returncode=proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        stopped=stopped,
        dropped_bytes=out.dropped + err.dropped,
        duration=time.monotonic() - started,
    )


@dataclass(frozen=True, kw_only=True)
class Program:
    """A child a tool runs confined: its command line, its own scratch folder (`workdir`), the
    folder it starts in, its whole environment, what else it may read (`readable`), and its input
    (`stdin`, None for none)."""

    argv: Sequence[str]
    workdir: str
    cwd: str
    env: Mapping[str, str]
    readable: Sequence[str] = ()
    stdin: str | None = None


async def run_confined(
    sandbox: Sandbox, program: Program, *, what: str, time_limit: float, max_output: int
) -> ToolResult:
    """Run `program` under `sandbox` for the current run (its session's uploads, its stop event)
    and turn the outcome into the tool's result (`what` names the child in it); a sandbox that
    refuses is a failed result."""
    from navi import runctx

    ctx = runctx.current()
    inner = SandboxPid() if sandbox.active else None
    try:
        confined = sandbox.command(
            program.argv,
            workdir=program.workdir,
            cwd=program.cwd,
            env=program.env,
            session_id=ctx.root_session if ctx else None,  # a subagent: the session it works for
            readable=program.readable,
            info_fd=inner.write_fd if inner else None,
        )
        result = await run_process(
            confined,
            time_limit=time_limit,
            max_output=max_output,
            cwd=program.cwd,
            env=program.env,
            stop_event=ctx.stop_event if ctx else None,
            stdin=program.stdin.encode("utf-8") if program.stdin is not None else None,
            sandbox=inner,
        )
    except SandboxRefused as exc:
        return ToolResult.fail(str(exc))
    finally:
        if inner is not None:
            inner.close()
    return result.to_tool_result(what, time_limit)
