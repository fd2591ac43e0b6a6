"""SSH connections for `ssh_exec`, pooled by (session id, host name), and what a failure to connect means.

Calls in one session reuse a live connection, subagents (own session ids) get their own, and
`close_session` closes a finished session's connections. Host keys are verified against the host's
`known_hosts` (no trust on first use). Errors name the host's alias only: addresses and user names
from the library or the server are scrubbed from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from navi.tools.builtin.ssh_hosts import SshError, SshHost

if TYPE_CHECKING:  # imported on the first SSH call (about 0.25 s a `navi` command never pays)
    import asyncssh

CONNECT_TIMEOUT = 15.0
KEEPALIVE_INTERVAL = 30.0
CLOSE_GRACE = 1.0


def _load_client_key(host: SshHost) -> asyncssh.SSHKey:
    import asyncssh

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
    import asyncssh

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
    import asyncssh

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
            f"the SSH server {where} closed the connection: {scrub(exc.reason or type(exc).__name__, host)}"
        )
    if isinstance(exc, OSError):
        return f"could not connect to {where}: {scrub(exc.strerror or str(exc), host)}"
    return f"could not connect to {where}: {type(exc).__name__}: {scrub(str(exc), host)}"


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


def scrub(text: str, host: SshHost) -> str:
    """`text` from a library or the server without the host's address, user name or any IP address."""
    for secret in (host.host, host.username):
        text = re.sub(rf"(?<![\w.-]){re.escape(secret)}(?![\w-])", "…", text)
    return _ADDRESS.sub("…", text)


async def _close(conn: asyncssh.SSHClientConnection) -> None:
    import asyncssh

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
        import asyncssh

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
