"""`ssh_exec`: run a command on a named remote host over SSH, with connections pooled per session.

Hosts are named in a JSON file (setting `SSH_HOSTS_FILE`, default `ssh_hosts.json`), read on every
call so edits apply without a restart; the model only ever names a host, it never sees addresses,
user names or secrets (error messages name the host's alias only, and no file tool may read the
hosts file):

    {
      "hosts": {
        "nas": {
          "host": "192.168.1.10",              # address or DNS name (required)
          "port": 22,                           # optional, default 22
          "username": "me",                     # required
          "key_file": "~/.ssh/id_ed25519",      # private key file, and/or …
          "passphrase": "…",                    # … its passphrase if it is encrypted (optional)
          "password": null,                     # … a password (at least one of key_file/password)
          "known_hosts": "~/.ssh/known_hosts"   # optional, this is the default; see below
        }
      }
    }

(The file is plain JSON: no comments.) Relative `key_file`/`known_hosts` paths are relative to the
hosts file's directory; `~` is expanded. Unknown fields are rejected, so a typo is reported rather
than silently ignored. `~/.ssh/config` and the SSH agent are not used: the file is the whole truth.

Host keys are always verified unless the file explicitly says otherwise. `known_hosts` is the path
of an OpenSSH known_hosts file (default `~/.ssh/known_hosts`); the server's key must be recorded
there (for a non-default port as `[host]:port`), e.g. with `ssh-keyscan -p PORT HOST >> FILE` after
checking the fingerprint. There is no trust-on-first-use: an unknown or changed key refuses the
connection. `"known_hosts": null` turns verification off for that host. WARNING: then anyone who can
intercept the traffic can impersonate the host and read the password or the commands' output; use
it only on a network you fully trust, for throwaway machines.

A command that runs to the end is a successful tool call whatever its exit status: the status is
the first line of the output (and `exit_status` in the metadata). Exit codes carry meaning (grep
finds nothing, test is false), and counting them as tool failures would trip the agent's
consecutive-failure cutoff. The call fails when the command could not be run (hosts file, connect,
authentication, host key), timed out, or was stopped by the user.

Connections live in an `SshPool` keyed by (session id, host name): calls in one session reuse a live
connection, subagents (own session ids) get their own, and `close_session` closes a finished
session's connections. Each command still runs in its own channel, i.e. a fresh shell.

`ssh_hosts.py` reads the hosts file; `ssh_pool.py` connects and pools; this module runs a command
and is the tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from navi import runctx
from navi.tools.base import Tool, ToolResult
from navi.tools.builtin.ssh_hosts import SshError, SshHost, load_host
from navi.tools.builtin.ssh_pool import CLOSE_GRACE, CONNECT_TIMEOUT, SshPool, scrub

if TYPE_CHECKING:  # imported on the first SSH call (about 0.25 s a `navi` command never pays)
    import asyncssh

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
MAX_STDOUT_CHARS = 20_000
MAX_STDERR_CHARS = 10_000

T = TypeVar("T")


# --- running a command ---------------------------------------------------------------------------
class _Capped:
    """Keeps the first `limit` characters of a stream, counts the rest, and never stops reading."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    async def pump(self, stream: asyncssh.SSHReader[str]) -> None:
        while chunk := await stream.read(65536):
            room = self.limit - self.kept
            if room > 0:
                self.parts.append(chunk[:room])
                self.kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class RemoteResult:
    exit_status: int | None
    exit_signal: str | None
    stdout: str
    stderr: str
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    timed_out: bool = False
    stopped: bool = False
    lost: str | None = None  # why the connection broke mid-command
    duration: float = 0.0

    def render(self) -> str:
        """What the model sees: how it ended, then stdout and stderr under their own headers."""
        if self.timed_out:
            status = f"exit status: none (timed out after {self.duration:.1f} s; the channel was closed)"
        elif self.stopped:
            status = "exit status: none (stopped by the user; the channel was closed)"
        elif self.lost is not None:
            status = f"exit status: none (the connection was lost: {self.lost})"
        elif self.exit_signal is not None:
            status = f"exit status: none (killed by signal {self.exit_signal})"
        elif self.exit_status is None:
            status = "exit status: unknown (the server did not report one)"
        else:
            status = f"exit status: {self.exit_status}"
        parts = [status, "--- stdout ---", self.stdout.rstrip("\n") or "(empty)"]
        if self.stdout_dropped:
            parts.append(
                f"[stdout truncated: the first {len(self.stdout)} characters are shown, "
                f"{self.stdout_dropped} more were dropped]"
            )
        parts += ["--- stderr ---", self.stderr.rstrip("\n") or "(empty)"]
        if self.stderr_dropped:
            parts.append(
                f"[stderr truncated: the first {len(self.stderr)} characters are shown, "
                f"{self.stderr_dropped} more were dropped]"
            )
        return "\n".join(parts)


async def _end(proc: asyncssh.SSHClientProcess[str]) -> None:
    """Ask the remote process to stop (not every server honours signals), then close its channel.

    OpenSSH's sshd hangs up the command's session when the channel closes.
    """
    import asyncssh

    with contextlib.suppress(OSError, asyncssh.Error):
        proc.send_signal("TERM")
    proc.close()
    with contextlib.suppress(TimeoutError, OSError, asyncssh.Error):
        await asyncio.wait_for(proc.wait_closed(), CLOSE_GRACE)


async def run_remote(
    conn: asyncssh.SSHClientConnection,
    command: str,
    *,
    time_limit: float,
    stop_event: asyncio.Event | None = None,
    max_stdout: int = MAX_STDOUT_CHARS,
    max_stderr: int = MAX_STDERR_CHARS,
) -> RemoteResult:
    """Run `command` in a new channel of `conn` with empty stdin, a time limit, output caps and stop.

    Opening the channel may raise (`asyncssh.Error`, `OSError`) when the connection is broken.
    """
    started = time.monotonic()
    proc = await conn.create_process(command, encoding="utf-8", errors="replace")
    proc.stdin.write_eof()  # no input: a command that reads stdin sees EOF instead of hanging
    out, err = _Capped(max_stdout), _Capped(max_stderr)

    async def finish() -> None:
        await asyncio.gather(out.pump(proc.stdout), err.pump(proc.stderr))
        await proc.wait_closed()

    finisher = asyncio.ensure_future(finish())
    stopper = asyncio.ensure_future(stop_event.wait()) if stop_event is not None else None
    timed_out = stopped = False
    lost: str | None = None
    try:
        waits = {finisher} | ({stopper} if stopper else set())
        done, _ = await asyncio.wait(waits, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
        if finisher in done:
            exc = finisher.exception()
            if exc is not None:
                lost = str(exc) or type(exc).__name__
            elif proc.exit_status is None and proc.exit_signal is None and conn.is_closed():
                lost = "it closed before the command reported an exit status"
        else:
            stopped = stopper is not None and stopper in done
            timed_out = not stopped
            await _end(proc)
    except asyncio.CancelledError:
        proc.close()
        raise
    finally:
        for task in (finisher, *(t for t in [stopper] if t)):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await finisher
    signal = proc.exit_signal
    return RemoteResult(
        exit_status=proc.exit_status,
        exit_signal=signal[0] if signal else None,
        stdout=out.text(),
        stderr=err.text(),
        stdout_dropped=out.dropped,
        stderr_dropped=err.dropped,
        timed_out=timed_out,
        stopped=stopped,
        lost=lost,
        duration=time.monotonic() - started,
    )


class _Stopped(Exception):
    pass


async def _unless_stopped(aw: Awaitable[T], stop_event: asyncio.Event) -> T:
    """Await `aw`, but cancel it and raise `_Stopped` as soon as the user presses stop."""
    task = asyncio.ensure_future(aw)
    stopper = asyncio.ensure_future(stop_event.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise _Stopped
        return task.result()
    finally:
        task.cancel()
        stopper.cancel()


class SshExecTool(Tool):
    name = "ssh_exec"
    description = (
        "Run a shell command over SSH on `host` from the SSH hosts file (an unknown name lists "
        "them). Each command runs in a fresh shell with no input: chain steps with `&&`, use "
        "non-interactive flags (`sudo -n`, `apt-get -y`, `systemctl --no-pager`). Returns the exit"
        f" status (nonzero is no tool error), stdout (cut after {MAX_STDOUT_CHARS} characters: "
        "filter with grep or tail) and stderr."
    )
    parameters = {
        "type": "object",
        "properties": {
            "host": {"type": "string", "minLength": 1},
            "command": {"type": "string", "minLength": 1},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": f"seconds, at most {MAX_TIMEOUT:g}",
            },
        },
        "required": ["host", "command"],
        "additionalProperties": False,
    }
    # The engine's own limit must leave room for connecting and closing around the longest command.
    timeout = MAX_TIMEOUT + CONNECT_TIMEOUT + 30.0

    def __init__(self, hosts_file: str, pool: SshPool | None = None) -> None:
        self.hosts_file = hosts_file
        self.pool = pool if pool is not None else SshPool()

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        if ctx.stopped:
            return ToolResult.fail("not run: the user stopped the agent", stopped=True)
        command: str = params["command"]
        timeout = min(float(params.get("timeout", DEFAULT_TIMEOUT)), MAX_TIMEOUT)
        try:
            host = load_host(self.hosts_file, params["host"])
            result = await self._run(ctx, host, command, timeout)
        except SshError as exc:
            return ToolResult.fail(str(exc), host=params["host"])
        except _Stopped:
            return ToolResult.fail("stopped by the user before the command started", stopped=True)
        meta: dict[str, Any] = {
            "host": host.name,
            "exit_status": result.exit_status,
            "exit_signal": result.exit_signal,
            "stdout_dropped": result.stdout_dropped,
            "stderr_dropped": result.stderr_dropped,
            "duration": round(result.duration, 3),
        }
        if result.stderr:  # also kept apart, in the message's metadata
            meta["stderr"] = result.stderr
        output = result.render()
        if result.stopped:
            return ToolResult.fail(
                f"stopped by the user while running on '{host.name}'; the remote command's channel was "
                "closed",
                output,
                stopped=True,
                **meta,
            )
        if result.timed_out:
            return ToolResult.fail(
                f"the command did not finish within {timeout:g} s on '{host.name}' and its channel was "
                f"closed. Pass a larger `timeout` (at most {MAX_TIMEOUT:g}), or start long jobs in the "
                "background (nohup … > log 2>&1 &) and check on them later",
                output,
                timed_out=True,
                **meta,
            )
        if result.lost is not None:
            return ToolResult.fail(
                f"the connection to '{host.name}' was lost while the command ran; it may or may not have "
                "finished. Check its effects before running it again",
                output,
                **meta,
            )
        return ToolResult.ok(output, **meta)

    async def _run(
        self, ctx: runctx.RunContext, host: SshHost, command: str, time_limit: float
    ) -> RemoteResult:
        """Run on a pooled connection; if a reused one turns out dead, reconnect once and retry."""
        import asyncssh

        while True:
            conn, reused = await _unless_stopped(self.pool.get(ctx.session_id, host), ctx.stop_event)
            try:
                return await run_remote(conn, command, time_limit=time_limit, stop_event=ctx.stop_event)
            except (asyncssh.Error, OSError) as exc:  # the channel could not be opened
                await self.pool.discard(ctx.session_id, host.name, conn)
                if not reused:
                    raise SshError(
                        f"connected to '{host.name}' but could not start the command: "
                        f"{scrub(str(getattr(exc, 'reason', '') or exc), host)}"
                    ) from None
