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
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import re
import socket
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import asyncssh

from navi import runctx
from navi.tools.base import Tool, ToolResult

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
CONNECT_TIMEOUT = 15.0
KEEPALIVE_INTERVAL = 30.0
MAX_STDOUT_CHARS = 20_000
MAX_STDERR_CHARS = 10_000
CLOSE_GRACE = 1.0
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"

_FIELDS = ("host", "port", "username", "key_file", "passphrase", "password", "known_hosts")
_EXAMPLE = (
    '{"hosts": {"nas": {"host": "192.168.1.10", "port": 22, "username": "me", '
    '"key_file": "~/.ssh/id_ed25519"}}}'
)
# OpenSSH StrictHostKeyChecking words someone might put in `known_hosts`; they are not paths.
_POLICY_WORDS = ("accept-new", "yes", "no", "ask", "off", "false", "true", "none")

T = TypeVar("T")


class SshError(Exception):
    """A problem the model (or the user) can act on; its text becomes the failed result's error."""


# --- the hosts file --------------------------------------------------------------------------------
@dataclass(frozen=True)
class SshHost:
    """One entry of the hosts file, validated. Frozen and comparable: a changed entry reconnects."""

    name: str
    host: str
    username: str
    port: int = 22
    key_file: str | None = None
    passphrase: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    known_hosts: str | None = None  # an absolute path, or None: do not verify the host key

    @property
    def keyscan(self) -> str:
        """How to record the host's key, without its address (the user fills in the hosts file's values)."""
        return (
            f"ssh-keyscan -p PORT HOST >> {self.known_hosts or DEFAULT_KNOWN_HOSTS}, with the host and port "
            f"of '{self.name}' from the SSH hosts file"
        )


def _resolve(path: str, base: Path) -> str:
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else base / p)


def _optional_str(name: str, entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise SshError(f"host '{name}': `{key}` must be a non-empty string or null")
    return value


def parse_host(name: str, entry: object, base: Path) -> SshHost:
    """Validate one hosts-file entry; `base` is the directory relative paths are resolved against."""
    if not isinstance(entry, dict):
        raise SshError(f"host '{name}' must be a JSON object with at least `host` and `username`")
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise SshError(
            f"host '{name}': unknown field(s) {', '.join(unknown)} (allowed: {', '.join(_FIELDS)})"
        )
    missing = [key for key in ("host", "username") if not entry.get(key)]
    if missing:
        raise SshError(f"host '{name}' is missing {' and '.join(f'`{key}`' for key in missing)}")
    host, username = entry["host"], entry["username"]
    if not isinstance(host, str) or not isinstance(username, str):
        raise SshError(f"host '{name}': `host` and `username` must be strings")
    port = entry.get("port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise SshError(f"host '{name}': `port` must be an integer from 1 to 65535, not {port!r}")
    key_file = _optional_str(name, entry, "key_file")
    password = _optional_str(name, entry, "password")
    passphrase = _optional_str(name, entry, "passphrase")
    if key_file is None and password is None:
        raise SshError(f"host '{name}' needs `key_file` (a private key path) or `password` to log in")
    known_hosts: str | None = DEFAULT_KNOWN_HOSTS
    if "known_hosts" in entry:
        known_hosts = _optional_str(name, entry, "known_hosts")
        if known_hosts is not None and known_hosts.lower() in _POLICY_WORDS:
            raise SshError(
                f"host '{name}': `known_hosts` is the path of a known_hosts file (or null to skip "
                f"host key verification), not '{known_hosts}'. To trust a new host, record its key: "
                f"ssh-keyscan -p PORT HOST >> {DEFAULT_KNOWN_HOSTS} with the host and port of '{name}' "
                "(after checking the fingerprint)"
            )
    return SshHost(
        name=name,
        host=host,
        username=username,
        port=port,
        key_file=_resolve(key_file, base) if key_file else None,
        passphrase=passphrase,
        password=password,
        known_hosts=_resolve(known_hosts, base) if known_hosts else None,
    )


def load_host(hosts_file: str, name: str) -> SshHost:
    """Read the hosts file now (edits apply without a restart) and return the entry called `name`.

    Only that entry is validated, so one broken entry does not block the others.
    """
    path = Path(hosts_file).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SshError(
            f"the SSH hosts file {path.absolute()} does not exist (setting SSH_HOSTS_FILE). "
            f"Create it with the hosts Navi may use, e.g. {_EXAMPLE}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SshError(f"cannot read the SSH hosts file {path.absolute()}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SshError(
            f"the SSH hosts file {path.absolute()} is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, dict):
        raise SshError(
            f"the SSH hosts file {path.absolute()} must be a JSON object with a `hosts` object "
            f"mapping names to hosts, e.g. {_EXAMPLE}"
        )
    if name not in hosts:
        known = ", ".join(sorted(hosts)) or "none"
        raise SshError(f"there is no SSH host named '{name}' in {path.absolute()}. Known hosts: {known}")
    return parse_host(name, hosts[name], path.absolute().parent)


# --- connecting ----------------------------------------------------------------------------------
def _load_client_key(host: SshHost) -> asyncssh.SSHKey:
    assert host.key_file is not None
    try:
        return asyncssh.read_private_key(host.key_file, host.passphrase)
    except FileNotFoundError:
        raise SshError(
            f"the key_file {host.key_file} of host '{host.name}' does not exist; fix `key_file` in the "
            "SSH hosts file"
        ) from None
    except OSError as exc:
        raise SshError(f"cannot read the key_file {host.key_file} of host '{host.name}': {exc}") from None
    except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError, ValueError) as exc:
        hint = "" if host.passphrase else " If the key is encrypted, set `passphrase` for this host."
        raise SshError(
            f"cannot load the key_file {host.key_file} of host '{host.name}': {exc}.{hint}"
        ) from None


def _check_known_hosts(host: SshHost) -> None:
    if host.known_hosts is not None and not Path(host.known_hosts).is_file():
        raise SshError(
            f"the known_hosts file {host.known_hosts} does not exist, so the host key of '{host.name}' "
            f"cannot be verified. Record the key (after checking its fingerprint): {host.keyscan}; or set "
            "`known_hosts` for this host in the SSH hosts file"
        )


def _key_is_recorded(host: SshHost) -> bool:
    """Whether known_hosts has any key for this host name (so a refusal means the key changed)."""
    assert host.known_hosts is not None
    try:
        known = asyncssh.read_known_hosts(host.known_hosts)
        keys = known.match(host.host, "", host.port if host.port != 22 else None)
    except (OSError, ValueError):
        return False
    return bool(keys[0] or keys[1])


def describe_connect_error(
    host: SshHost, exc: BaseException, connect_timeout: float = CONNECT_TIMEOUT
) -> str:
    """Turn a connection failure into a message that says what to check, naming the host's alias only:
    its address and user name stay in the hosts file, out of the model's context."""
    where = f"'{host.name}'"
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        if host.known_hosts is not None and _key_is_recorded(host):
            return (
                f"refused to connect to {where}: its host key does NOT match the key recorded in "
                f"{host.known_hosts}. The host may have been reinstalled, or someone may be intercepting "
                "the connection. Do not work around this: ask the user to verify the new key's "
                "fingerprint and, if it is genuine, replace the old entry in the known_hosts file."
            )
        return (
            f"refused to connect to {where}: its host key is not recorded in {host.known_hosts}, so it "
            f"cannot be verified. After checking the fingerprint, record it with: {host.keyscan}"
        )
    if isinstance(exc, asyncssh.PermissionDenied):
        tried = [f"the key {host.key_file}"] if host.key_file else []
        methods = " and ".join([*tried, *(["the password"] if host.password else [])])
        return (
            f"authentication failed for {where}: the server rejected {methods}. Check `username`, "
            "`key_file`/`passphrase` or `password` for this host in the SSH hosts file, and that the "
            "public key is in the server's authorized_keys."
        )
    if isinstance(exc, TimeoutError):
        return (
            f"could not connect to {where}: no SSH handshake within {connect_timeout:g} s. Is the host up, "
            "the address and port right, and no firewall in the way?"
        )
    if isinstance(exc, socket.gaierror):
        return f"could not connect to {where}: cannot resolve its host name ({exc.strerror})"
    if _refused(exc):
        return (
            f"could not connect to {where}: connection refused. Is the SSH server running, and is the "
            "port in the SSH hosts file right?"
        )
    if isinstance(exc, asyncssh.DisconnectError):
        return (
            f"the SSH server {where} closed the connection: {_scrub(exc.reason or type(exc).__name__, host)}"
        )
    if isinstance(exc, OSError):
        return f"could not connect to {where}: {_scrub(exc.strerror or str(exc), host)}"
    return f"could not connect to {where}: {type(exc).__name__}: {_scrub(str(exc), host)}"


def _refused(exc: BaseException) -> bool:
    """Connection refused, also when asyncio folds one refusal per address into a plain OSError."""
    if isinstance(exc, ConnectionRefusedError):
        return True
    return isinstance(exc, OSError) and exc.errno is None and f"[Errno {errno.ECONNREFUSED}]" in str(exc)


_ADDRESS = re.compile(
    r"\('[^']*', \d+[^)]*\)"  # a socket address as Python prints it: ('10.0.0.5', 22)
    r"|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"  # IPv4, with a port
    r"|\[?(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%\w+)?\]?(?::\d+)?"  # IPv6
)


def _scrub(text: str, host: SshHost) -> str:
    """`text` from a library or the server without the host's address, user name or any IP address."""
    for secret in (host.host, host.username):
        text = re.sub(rf"(?<![\w.-]){re.escape(secret)}(?![\w-])", "…", text)
    return _ADDRESS.sub("…", text)


async def _close(conn: asyncssh.SSHClientConnection) -> None:
    conn.close()
    with contextlib.suppress(TimeoutError, asyncssh.Error, OSError):
        await asyncio.wait_for(conn.wait_closed(), CLOSE_GRACE)


@dataclass
class _Pooled:
    host: SshHost
    conn: asyncssh.SSHClientConnection


class SshPool:
    """Open SSH connections by (session id, host name), reused until closed or the session ends."""

    def __init__(self, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.connect_timeout = connect_timeout
        self._conns: dict[tuple[str, str], _Pooled] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def get(self, session_id: str, host: SshHost) -> tuple[asyncssh.SSHClientConnection, bool]:
        """A live connection for this session and host, and whether it was reused.

        A closed connection, or one opened with a since-edited hosts entry, is replaced. Raises
        `SshError` with an actionable message when connecting fails.
        """
        key = (session_id, host.name)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            pooled = self._conns.get(key)
            if pooled is not None:
                if pooled.host == host and not pooled.conn.is_closed():
                    return pooled.conn, True
                del self._conns[key]
                await _close(pooled.conn)
            conn = await self._connect(host)
            if self._locks.get(key) is not lock:  # the session was closed while we connected
                await _close(conn)
                raise SshError(f"the session ended while connecting to '{host.name}'")
            self._conns[key] = _Pooled(host, conn)
            return conn, False

    async def discard(self, session_id: str, name: str, conn: asyncssh.SSHClientConnection) -> None:
        """Drop a connection found broken (if it is still the pooled one) and close it."""
        pooled = self._conns.get((session_id, name))
        if pooled is not None and pooled.conn is conn:
            del self._conns[(session_id, name)]
        await _close(conn)

    def connections(self, session_id: str | None = None) -> list[tuple[str, str]]:
        """The (session id, host name) pairs with an open connection, optionally for one session."""
        return [
            key
            for key, pooled in self._conns.items()
            if not pooled.conn.is_closed() and (session_id is None or key[0] == session_id)
        ]

    async def close_session(self, session_id: str) -> None:
        """Close the connections of a finished session (a session-end hook)."""
        keys = [key for key in self._conns if key[0] == session_id]
        conns = [self._conns.pop(key).conn for key in keys]
        for key in keys:
            self._locks.pop(key, None)
        await asyncio.gather(*(_close(conn) for conn in conns))

    async def aclose(self) -> None:
        """Close every connection (at shutdown)."""
        conns = [pooled.conn for pooled in self._conns.values()]
        self._conns.clear()
        self._locks.clear()
        await asyncio.gather(*(_close(conn) for conn in conns))

    async def _connect(self, host: SshHost) -> asyncssh.SSHClientConnection:
        _check_known_hosts(host)
        client_keys = [_load_client_key(host)] if host.key_file else None
        try:
            return await asyncssh.connect(
                host.host,
                host.port,
                username=host.username,
                client_keys=client_keys,
                password=host.password,
                known_hosts=host.known_hosts,
                config=None,  # not ~/.ssh/config: the hosts file is the whole truth
                agent_path=None,
                connect_timeout=self.connect_timeout,
                keepalive_interval=KEEPALIVE_INTERVAL,  # notices dead connections in the pool
            )
        except (OSError, asyncssh.Error, TimeoutError, ValueError) as exc:
            raise SshError(describe_connect_error(host, exc, self.connect_timeout)) from None


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
        while True:
            conn, reused = await _unless_stopped(self.pool.get(ctx.session_id, host), ctx.stop_event)
            try:
                return await run_remote(conn, command, time_limit=time_limit, stop_event=ctx.stop_event)
            except (asyncssh.Error, OSError) as exc:  # the channel could not be opened
                await self.pool.discard(ctx.session_id, host.name, conn)
                if not reused:
                    raise SshError(
                        f"connected to '{host.name}' but could not start the command: "
                        f"{_scrub(str(getattr(exc, 'reason', '') or exc), host)}"
                    ) from None
