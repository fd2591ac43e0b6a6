"""`ssh_exec` against a real asyncssh server started in the test, on 127.0.0.1 with a random port.

The server interprets a few shell-like commands (joined with `;`): `echo …` (`echo … >&2` writes to
stderr), `exit N`, `sleep S` (which notes when its channel is closed before it ends), `seq N`, `cat`;
anything else is "command not found" with status 127. It counts connections, so pooling is visible.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from navi import runctx
from navi.runctx import RunContext
from navi.testing.ports import free_port
from navi.tools.builtin import ssh as ssh_tool
from navi.tools.builtin.ssh import MAX_STDOUT_CHARS, SshExecTool
from navi.tools.builtin.ssh_hosts import SshHost, load_host
from navi.tools.builtin.ssh_pool import SshPool, describe_connect_error

USER = "navi"
PASSWORD = "s3cret"
PASSPHRASE = "open sesame"


@dataclass
class ServerState:
    opened: int = 0
    open_now: int = 0
    conns: list[asyncssh.SSHServerConnection] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    sleeping: list[str] = field(default_factory=list)  # commands whose earlier output is sent


class _Server(asyncssh.SSHServer):
    def __init__(self, state: ServerState) -> None:
        self.state = state

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.state.opened += 1
        self.state.open_now += 1
        self.state.conns.append(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.open_now -= 1

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == USER and password == PASSWORD


async def _sleep(process: asyncssh.SSHServerProcess[str], state: ServerState, seconds: float) -> bool:
    """Sleep, unless the client closes the channel first (then record it and say so)."""
    sleeper = asyncio.ensure_future(asyncio.sleep(seconds))
    closed = asyncio.ensure_future(process.channel.wait_closed())
    await asyncio.wait({sleeper, closed}, return_when=asyncio.FIRST_COMPLETED)
    sleeper.cancel()
    closed.cancel()
    if not closed.cancelled() and closed.done():
        state.interrupted.append(process.command or "")
        return False
    return True


def make_handler(state: ServerState) -> Any:
    async def handle(process: asyncssh.SSHServerProcess[str]) -> None:
        command = process.command or ""
        state.commands.append(command)
        status = 0
        for part in command.split(";"):
            words = part.split()
            if not words:
                continue
            name, args = words[0], words[1:]
            if name == "echo" and args[-1:] == [">&2"]:
                process.stderr.write(" ".join(args[:-1]) + "\n")
            elif name == "echo":
                process.stdout.write(" ".join(args) + "\n")
            elif name == "exit":
                status = int(args[0])
                break
            elif name == "seq":
                process.stdout.write("".join(f"{i}\n" for i in range(1, int(args[0]) + 1)))
            elif name == "cat":
                process.stdout.write(await process.stdin.read())
            elif name == "sleep":
                await process.stdout.drain()
                state.sleeping.append(command)
                if not await _sleep(process, state, float(args[0])):
                    return
            else:
                process.stderr.write(f"sh: {name}: command not found\n")
                status = 127
                break
        await process.stdout.drain()
        await process.stderr.drain()
        process.exit(status)

    return handle


def write(path: str | Path, text: str) -> None:
    Path(path).write_text(text)


def remove(path: str | Path) -> None:
    Path(path).unlink()


def _write_key(key: asyncssh.SSHKey, path: Path, passphrase: str | None = None) -> str:
    if passphrase:
        key.write_private_key(str(path), passphrase=passphrase, format_name="pkcs8-pem")
    else:
        key.write_private_key(str(path))
    return str(path)


@dataclass
class Env:
    state: ServerState
    port: int
    dir: Path
    host_key: asyncssh.SSHKey
    key_file: str
    locked_key_file: str
    known_hosts: str
    hosts_file: str = "ssh_hosts.json"

    def write_hosts(self, name: str = "box", **overrides: Any) -> str:
        """Write hosts `name` and "other" (same entry) for this server; an override of `...` drops a field."""
        entry: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": self.port,
            "username": USER,
            "key_file": self.key_file,
            "known_hosts": self.known_hosts,
        }
        entry.update(overrides)
        entry = {k: v for k, v in entry.items() if v is not ...}
        write(self.hosts_file, json.dumps({"hosts": {name: entry, "other": entry}}))
        return self.hosts_file

    def known_hosts_line(self, key: asyncssh.SSHKey) -> str:
        return f"[127.0.0.1]:{self.port} {key.export_public_key().decode().strip()}\n"


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    state = ServerState()
    host_key = asyncssh.generate_private_key("ssh-ed25519")
    client_key = asyncssh.generate_private_key("ssh-ed25519")
    locked_key = asyncssh.generate_private_key("ssh-ed25519")
    authorized = asyncssh.import_authorized_keys(
        "".join(k.export_public_key().decode() for k in (client_key, locked_key))
    )
    server = await asyncssh.create_server(
        lambda: _Server(state),
        "127.0.0.1",
        0,
        server_host_keys=[host_key],
        authorized_client_keys=authorized,
        process_factory=make_handler(state),
        encoding="utf-8",
    )
    port = server.get_port()
    keys = tmp_path / "keys"
    keys.mkdir()
    known_hosts = keys / "known_hosts"
    result = Env(
        state,
        port,
        keys,
        host_key,
        key_file=_write_key(client_key, keys / "id_ed25519"),
        locked_key_file=_write_key(locked_key, keys / "locked", passphrase=PASSPHRASE),
        known_hosts=str(known_hosts),
    )
    known_hosts.write_text(result.known_hosts_line(host_key))
    try:
        yield result
    finally:
        server.close()
        for conn in state.conns:
            conn.close()
        for conn in state.conns:
            await conn.wait_closed()
        await server.wait_closed()


@pytest.fixture
async def tool(env: Env) -> AsyncIterator[SshExecTool]:
    env.write_hosts()
    ssh = SshExecTool(env.hosts_file)
    try:
        yield ssh
    finally:
        await ssh.pool.aclose()


async def run(tool: SshExecTool, command: str, session: str = "s1", host: str = "box", **extra: Any) -> Any:
    with runctx.using(RunContext(session_id=session)):
        return await tool.execute({"host": host, "command": command, **extra})


def sections(output: str) -> tuple[str, str, str]:
    """(status line, stdout section, stderr section) of a rendered result."""
    status, rest = output.split("\n--- stdout ---\n", 1)
    stdout, stderr = rest.split("\n--- stderr ---\n", 1)
    return status, stdout, stderr


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """A TCP port that accepts connections and never says a word (no SSH banner); yields the port."""
    writers: list[asyncio.StreamWriter] = []
    server = await asyncio.start_server(lambda r, w: writers.append(w), "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in writers:
            writer.close()
        for writer in writers:
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        await server.wait_closed()


def assert_alias_only(error: str | None, env: Env, alias: str = "box") -> None:
    """An SSH error names the host by its alias, never by its address, port or user name."""
    assert error is not None and f"'{alias}'" in error
    for leak in ("127.0.0.1", "localhost", "::1", f"{USER}@", f"user {USER}", str(env.port)):
        assert leak not in error, (leak, error)


async def wait_for(predicate: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


# --- running commands ------------------------------------------------------------------------------
async def test_runs_a_command_and_reports_output_and_status(tool: SshExecTool, env: Env) -> None:
    result = await run(tool, "echo hello world")
    assert result.success, result.error
    assert sections(result.output) == ("exit status: 0", "hello world", "(empty)")
    assert result.metadata["exit_status"] == 0
    assert result.metadata["host"] == "box"
    assert env.state.commands == ["echo hello world"]


async def test_stderr_is_kept_apart_from_stdout(tool: SshExecTool) -> None:
    result = await run(tool, "echo to out; echo to err >&2; echo more out")
    status, stdout, stderr = sections(result.output)
    assert stdout == "to out\nmore out"
    assert stderr == "to err"


async def test_nonzero_exit_is_a_successful_call_that_shows_the_status(tool: SshExecTool) -> None:
    result = await run(tool, "echo partial; exit 3")
    assert result.success
    assert result.metadata["exit_status"] == 3
    assert sections(result.output) == ("exit status: 3", "partial", "(empty)")

    missing = await run(tool, "frobnicate now")
    assert missing.success and missing.metadata["exit_status"] == 127
    assert sections(missing.output)[2] == "sh: frobnicate: command not found"


async def test_stdin_is_empty_so_reading_commands_do_not_hang(tool: SshExecTool) -> None:
    result = await run(tool, "cat; echo after", timeout=5)
    assert result.success
    assert sections(result.output) == ("exit status: 0", "after", "(empty)")


async def test_stdout_beyond_the_cap_is_dropped_and_counted(tool: SshExecTool) -> None:
    full = "".join(f"{i}\n" for i in range(1, 20_001))
    result = await run(tool, "seq 20000")
    assert result.success
    _, stdout, _ = sections(result.output)
    assert stdout.startswith("1\n2\n3\n")
    dropped = len(full) - MAX_STDOUT_CHARS
    assert result.metadata["stdout_dropped"] == dropped
    assert stdout.endswith(
        f"[stdout truncated: the first {MAX_STDOUT_CHARS} characters are shown, {dropped} more were dropped]"
    )
    assert full[:MAX_STDOUT_CHARS].rstrip("\n") in stdout
    assert full[MAX_STDOUT_CHARS + 10 :] not in stdout


async def test_timeout_closes_the_remote_command(tool: SshExecTool, env: Env) -> None:
    started = time.monotonic()
    result = await run(tool, "echo begun; sleep 30", timeout=0.5)
    assert time.monotonic() - started < 5
    assert not result.success
    assert result.metadata["timed_out"] is True
    assert "did not finish within 0.5 s on 'box'" in (result.error or "")
    status, stdout, _ = sections(result.output)
    assert status.startswith("exit status: none (timed out after")
    assert stdout == "begun"
    await wait_for(lambda: env.state.interrupted == ["echo begun; sleep 30"])
    # The connection itself survives and is reused.
    again = await run(tool, "echo still here")
    assert sections(again.output)[1] == "still here"
    assert env.state.opened == 1


async def test_timeout_is_capped(tool: SshExecTool, env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    import navi.tools.builtin.ssh as ssh_module

    monkeypatch.setattr(ssh_module, "MAX_TIMEOUT", 0.3)
    result = await run(tool, "sleep 30", timeout=9999)
    assert not result.success
    assert "did not finish within 0.3 s" in (result.error or "")


async def test_stop_event_ends_a_running_command(tool: SshExecTool, env: Env) -> None:
    ctx = RunContext(session_id="s1")
    with runctx.using(ctx):
        task = asyncio.create_task(tool.execute({"host": "box", "command": "sleep 30"}))
    await wait_for(lambda: env.state.commands == ["sleep 30"])
    started = time.monotonic()
    ctx.stop_event.set()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 3
    assert not result.success
    assert result.metadata["stopped"] is True
    assert "stopped by the user while running on 'box'" in (result.error or "")
    assert sections(result.output)[0] == "exit status: none (stopped by the user; the channel was closed)"
    await wait_for(lambda: env.state.interrupted == ["sleep 30"])


async def test_stop_while_connecting_gives_up(env: Env) -> None:
    tool = SshExecTool(env.hosts_file)
    ctx = RunContext(session_id="s1")
    async with silent_server() as port:
        env.write_hosts(port=port)
        with runctx.using(ctx):
            task = asyncio.create_task(tool.execute({"host": "box", "command": "echo hi"}))
        await asyncio.sleep(0.2)
        ctx.stop_event.set()
        result = await asyncio.wait_for(task, 3)
        assert not result.success and result.metadata["stopped"] is True
        assert result.error == "stopped by the user before the command started"
        assert tool.pool.connections() == []


async def test_stop_already_pressed_runs_nothing(tool: SshExecTool, env: Env) -> None:
    ctx = RunContext(session_id="s1")
    ctx.stop_event.set()
    with runctx.using(ctx):
        result = await tool.execute({"host": "box", "command": "echo hi"})
    assert not result.success and result.metadata["stopped"] is True
    assert env.state.opened == 0


# --- authentication ----------------------------------------------------------------------------------
async def test_password_auth(env: Env) -> None:
    env.write_hosts(key_file=..., password=PASSWORD)
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo by password")
        assert result.success, result.error
        assert sections(result.output)[1] == "by password"
    finally:
        await tool.pool.aclose()


async def test_encrypted_key_with_passphrase(env: Env) -> None:
    path = env.locked_key_file
    env.write_hosts(key_file=path)  # no passphrase: a clear error
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo hi")
        assert not result.success
        assert f"cannot load the key_file {path}" in (result.error or "")
        assert "set `passphrase`" in (result.error or "")

        env.write_hosts(key_file=path, passphrase="wrong")
        result = await run(tool, "echo hi")
        assert "cannot load the key_file" in (result.error or "")
        assert "Unable to decrypt" in (result.error or "")
        assert env.state.opened == 0

        env.write_hosts(key_file=path, passphrase=PASSPHRASE)
        result = await run(tool, "echo unlocked")
        assert result.success, result.error
        assert sections(result.output)[1] == "unlocked"
    finally:
        await tool.pool.aclose()


async def test_wrong_password_is_refused(env: Env) -> None:
    env.write_hosts(key_file=..., password="guess")
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo hi")
        assert not result.success
        assert result.error is not None
        assert result.error.startswith("authentication failed for 'box': the server rejected the password")
        assert_alias_only(result.error, env)
        assert "guess" not in result.error
        assert env.state.commands == []
    finally:
        await tool.pool.aclose()


async def test_wrong_key_is_refused(env: Env, tmp_path: Path) -> None:
    stranger = _write_key(asyncssh.generate_private_key("ssh-ed25519"), tmp_path / "stranger")
    env.write_hosts(key_file=stranger)
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo hi")
        assert not result.success
        assert "authentication failed for 'box'" in (result.error or "")
        assert f"rejected the key {stranger}" in (result.error or "")
        assert_alias_only(result.error, env)
        assert tool.pool.connections() == []
    finally:
        await tool.pool.aclose()


async def test_missing_key_file(env: Env) -> None:
    env.write_hosts(key_file="/nonexistent/id_ed25519")
    tool = SshExecTool(env.hosts_file)
    result = await run(tool, "echo hi")
    assert result.error == (
        "the key_file /nonexistent/id_ed25519 of host 'box' does not exist; fix `key_file` in the SSH "
        "hosts file"
    )


# --- host keys ---------------------------------------------------------------------------------------
async def test_changed_host_key_is_refused(env: Env) -> None:
    write(env.known_hosts, env.known_hosts_line(asyncssh.generate_private_key("ssh-ed25519")))
    env.write_hosts()
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo hi")
        assert not result.success
        assert "its host key does NOT match the key recorded in" in (result.error or "")
        assert env.known_hosts in (result.error or "")
        assert_alias_only(result.error, env)
        assert env.state.commands == []
        assert tool.pool.connections() == []
    finally:
        await tool.pool.aclose()


async def test_unrecorded_host_key_is_refused(env: Env) -> None:
    write(env.known_hosts, "[otherhost]:22 " + env.host_key.export_public_key().decode())
    env.write_hosts()
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo hi")
        assert not result.success
        assert "its host key is not recorded in" in (result.error or "")
        assert (
            f"ssh-keyscan -p PORT HOST >> {env.known_hosts}, with the host and port of 'box' from the SSH "
            "hosts file"
        ) in (result.error or "")
        assert_alias_only(result.error, env)
    finally:
        await tool.pool.aclose()


async def test_missing_known_hosts_file_is_an_error_not_a_pass(env: Env) -> None:
    remove(env.known_hosts)
    env.write_hosts()
    tool = SshExecTool(env.hosts_file)
    result = await run(tool, "echo hi")
    assert not result.success
    assert f"the known_hosts file {env.known_hosts} does not exist" in (result.error or "")
    assert_alias_only(result.error, env)
    assert env.state.opened == 0


async def test_known_hosts_null_skips_verification(env: Env) -> None:
    write(env.known_hosts, env.known_hosts_line(asyncssh.generate_private_key("ssh-ed25519")))
    env.write_hosts(known_hosts=None)
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo unverified")
        assert result.success, result.error
        assert sections(result.output)[1] == "unverified"
    finally:
        await tool.pool.aclose()


async def test_default_known_hosts_is_the_users_file(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    home = env.dir / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    env.write_hosts(known_hosts=...)
    tool = SshExecTool(env.hosts_file)
    try:
        result = await run(tool, "echo hi")
        assert f"the known_hosts file {home}/.ssh/known_hosts does not exist" in (result.error or "")
        (home / ".ssh" / "known_hosts").write_text(env.known_hosts_line(env.host_key))
        result = await run(tool, "echo verified")
        assert result.success, result.error
    finally:
        await tool.pool.aclose()


# --- connection failures -----------------------------------------------------------------------------
async def test_unreachable_port(env: Env) -> None:
    closed = free_port()
    env.write_hosts(port=closed)
    tool = SshExecTool(env.hosts_file)
    result = await run(tool, "echo hi")
    assert not result.success
    assert result.error == (
        "could not connect to 'box': connection refused. Is the SSH server running, and is the port in "
        "the SSH hosts file right?"
    )


async def test_refused_on_every_address_of_a_name(env: Env) -> None:
    """`localhost` may resolve to 127.0.0.1 and ::1: asyncio then folds both refusals, with the
    addresses, into one plain OSError; the message must still be "refused" and name no address."""
    closed = free_port()
    env.write_hosts(host="localhost", port=closed)
    result = await run(SshExecTool(env.hosts_file), "echo hi")
    assert not result.success
    assert "could not connect to 'box': connection refused" in (result.error or "")
    assert_alias_only(result.error, env)
    assert str(closed) not in (result.error or "")


async def test_connect_timeout(env: Env) -> None:
    tool = SshExecTool(env.hosts_file, SshPool(connect_timeout=0.3))
    async with silent_server() as port:
        env.write_hosts(port=port)
        started = time.monotonic()
        result = await run(tool, "echo hi")
        assert time.monotonic() - started < 3
        assert not result.success
        assert "no SSH handshake within 0.3 s" in (result.error or "")
        assert_alias_only(result.error, env)
        assert str(port) not in (result.error or "")
        assert tool.pool.connections() == []


async def test_dns_failure_names_the_alias_only(env: Env) -> None:
    env.write_hosts(host="nas-box.invalid")  # .invalid never resolves (RFC 6761)
    result = await run(SshExecTool(env.hosts_file), "echo hi")
    assert not result.success
    assert (result.error or "").startswith("could not connect to 'box': cannot resolve its host name (")
    assert "nas-box" not in (result.error or "")
    assert_alias_only(result.error, env)


def test_library_and_server_texts_are_scrubbed() -> None:
    """What asyncssh, asyncio or the server say can carry the address or user name: it is cut out."""
    host = SshHost(name="nas", host="nas.home.lan", username="admin", password="x")
    folded = OSError(
        "Multiple exceptions: [Errno 113] Connect call failed ('192.168.1.10', 22), [Errno 113] "
        "Connect call failed ('fd00::10', 22, 0, 0)"
    )
    disconnect = asyncssh.DisconnectError(11, "user admin from 10.0.0.7 port 5022 at nas.home.lan refused")
    odd = ValueError("bad address [fe80::1%eth0]:22 for admin@nas.home.lan")
    for exc in (folded, disconnect, odd):
        message = describe_connect_error(host, exc)
        assert message.startswith(("could not connect to 'nas'", "the SSH server 'nas' closed")), message
        for leak in ("192.168", "fd00", "10.0.0.7", "fe80", "admin", "nas.home.lan"):
            assert leak not in message, (leak, message)


# --- the hosts file ----------------------------------------------------------------------------------
async def test_unknown_host_name_lists_the_known_ones(tool: SshExecTool) -> None:
    result = await run(tool, "echo hi", host="nope")
    assert not result.success
    assert "there is no SSH host named 'nope' in" in (result.error or "")
    assert (result.error or "").endswith("Known hosts: box, other")


async def test_missing_hosts_file(tmp_path: Path) -> None:
    tool = SshExecTool("absent.json")
    result = await run(tool, "echo hi")
    assert not result.success
    error = result.error or ""
    assert f"the SSH hosts file {tmp_path / 'absent.json'} does not exist" in error
    assert "SSH_HOSTS_FILE" in error
    assert '{"hosts": {"nas": {"host": "192.168.1.10"' in error


async def test_invalid_json_says_where() -> None:
    write("ssh_hosts.json", '{"hosts": {\n  "nas": {"host": "x",}\n}}')
    result = await run(SshExecTool("ssh_hosts.json"), "echo hi")
    assert not result.success
    assert "is not valid JSON" in (result.error or "")
    assert "line 2, column 23" in (result.error or "")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"host": "h", "password": "p"}, "host 'nas' is missing `username`"),
        ({"password": "p"}, "host 'nas' is missing `host` and `username`"),
        ({"host": "h", "username": "u"}, "host 'nas' needs `key_file` (a private key path) or `password`"),
        ({"host": "h", "username": "u", "password": "p", "keyfile": "k"}, "unknown field(s) keyfile"),
        ({"host": "h", "username": "u", "password": "p", "port": "22"}, "`port` must be an integer"),
        ({"host": "h", "username": "u", "password": "p", "known_hosts": "accept-new"}, "not 'accept-new'"),
        ({"host": "h", "username": "u", "password": "p", "known_hosts": False}, "`known_hosts` must be"),
        ("h", "host 'nas' must be a JSON object"),
    ],
)
async def test_bad_host_entries(entry: Any, message: str) -> None:
    write("ssh_hosts.json", json.dumps({"hosts": {"nas": entry}}))
    result = await run(SshExecTool("ssh_hosts.json"), "echo hi", host="nas")
    assert not result.success
    assert message in (result.error or "")


async def test_hosts_file_without_hosts_object() -> None:
    write("ssh_hosts.json", '{"nas": {"host": "h"}}')
    result = await run(SshExecTool("ssh_hosts.json"), "echo hi", host="nas")
    assert "must be a JSON object with a `hosts` object" in (result.error or "")


async def test_relative_paths_are_relative_to_the_hosts_file(env: Env) -> None:
    config = env.dir / "conf"
    config.mkdir()
    hosts = {
        "host": "127.0.0.1",
        "port": env.port,
        "username": USER,
        "key_file": "../id_ed25519",
        "known_hosts": "../known_hosts",
    }
    (config / "hosts.json").write_text(json.dumps({"hosts": {"box": hosts}}))
    tool = SshExecTool(str(config / "hosts.json"))
    try:
        result = await run(tool, "echo relative")
        assert result.success, result.error
    finally:
        await tool.pool.aclose()


def test_secrets_stay_out_of_repr() -> None:
    host = SshHost(name="nas", host="h", username="u", password="hunter2", passphrase="pp")
    assert "hunter2" not in repr(host) and "pp" not in repr(host)


# --- the pool ----------------------------------------------------------------------------------------
async def test_a_session_reuses_its_connection(tool: SshExecTool, env: Env) -> None:
    first = await run(tool, "echo one")
    second = await run(tool, "echo two")
    assert [sections(r.output)[1] for r in (first, second)] == ["one", "two"]
    assert env.state.opened == 1
    assert tool.pool.connections() == [("s1", "box")]


async def test_concurrent_calls_share_one_connection(tool: SshExecTool, env: Env) -> None:
    results = await asyncio.gather(*(run(tool, f"echo {i}") for i in range(4)))
    assert [sections(r.output)[1] for r in results] == ["0", "1", "2", "3"]
    assert env.state.opened == 1


async def test_sessions_and_hosts_have_their_own_connections(tool: SshExecTool, env: Env) -> None:
    await run(tool, "echo a", session="s1")
    await run(tool, "echo b", session="subagent_ab12")
    await run(tool, "echo c", session="s1", host="other")
    await run(tool, "echo d", session="s1")
    assert env.state.opened == 3
    assert sorted(tool.pool.connections()) == [("s1", "box"), ("s1", "other"), ("subagent_ab12", "box")]
    assert tool.pool.connections("subagent_ab12") == [("subagent_ab12", "box")]


async def test_close_session_closes_only_that_session(tool: SshExecTool, env: Env) -> None:
    await run(tool, "echo a", session="s1")
    await run(tool, "echo b", session="s1", host="other")
    await run(tool, "echo c", session="s2")
    assert env.state.open_now == 3

    await tool.pool.close_session("s1")
    assert tool.pool.connections() == [("s2", "box")]
    await wait_for(lambda: env.state.open_now == 1)

    still = await run(tool, "echo still", session="s2")
    assert sections(still.output)[1] == "still"
    assert env.state.opened == 3  # s2 kept its connection
    again = await run(tool, "echo back", session="s1")
    assert sections(again.output)[1] == "back"
    assert env.state.opened == 4  # s1 connects anew

    await tool.pool.aclose()
    assert tool.pool.connections() == []
    await wait_for(lambda: env.state.open_now == 0)


async def test_reconnects_when_the_server_dropped_the_connection(tool: SshExecTool, env: Env) -> None:
    await run(tool, "echo one")
    server_side = env.state.conns[0]
    server_side.close()
    await server_side.wait_closed()
    result = await run(tool, "echo two")  # whether or not the client noticed yet
    assert result.success, result.error
    assert sections(result.output)[1] == "two"
    assert env.state.opened == 2
    assert tool.pool.connections() == [("s1", "box")]


async def test_a_dead_connection_that_looks_alive_is_replaced_once(
    tool: SshExecTool, env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    await run(tool, "echo one")
    conn, reused = await tool.pool.get("s1", load_host(env.hosts_file, "box"))
    assert reused
    conn.close()
    await conn.wait_closed()
    monkeypatch.setattr(conn, "is_closed", lambda: False)  # as if the peer vanished silently
    result = await run(tool, "echo two")
    assert result.success, result.error
    assert sections(result.output)[1] == "two"
    assert env.state.opened == 2


async def test_connection_lost_mid_command(
    tool: SshExecTool, env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    received = asyncio.Event()  # "started" has reached Navi (sent is not enough: CI lost that race)

    class Watched(ssh_tool._Capped):
        async def pump(self, stream: asyncssh.SSHReader[str]) -> None:
            read = stream.read

            async def watched(n: int = -1) -> str:
                chunk = await read(n)
                if "started" in chunk:
                    received.set()
                return chunk

            monkeypatch.setattr(stream, "read", watched)
            await super().pump(stream)

    monkeypatch.setattr(ssh_tool, "_Capped", Watched)
    with runctx.using(RunContext(session_id="s1")):
        task = asyncio.create_task(tool.execute({"host": "box", "command": "echo started; sleep 30"}))
    await wait_for(lambda: env.state.sleeping == ["echo started; sleep 30"])
    await asyncio.wait_for(received.wait(), 10)
    env.state.conns[0].close()
    result = await asyncio.wait_for(task, 5)
    assert not result.success
    assert "the connection to 'box' was lost while the command ran" in (result.error or "")
    status, stdout, _ = sections(result.output)
    assert status.startswith("exit status: none (the connection was lost")
    assert stdout == "started"
    assert tool.pool.connections() == []


async def test_an_edited_host_entry_reconnects(tool: SshExecTool, env: Env) -> None:
    await run(tool, "echo by key")
    env.write_hosts(key_file=..., password=PASSWORD)
    result = await run(tool, "echo by password")
    assert sections(result.output)[1] == "by password"
    assert env.state.opened == 2
    await wait_for(lambda: env.state.open_now == 1)  # the old connection was closed
