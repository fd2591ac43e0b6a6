"""Open WebSockets do not outlive their sign-in (issue 41, item 3): a browser's socket is closed
(4401) when it signs out, a user's sockets when `navi users remove` removes them — and a frame sent
on such a socket before it closes runs nothing. Against a live Navi and the real `navi` command in a
process of its own; across two `navi serve` workers on one PostgreSQL database too, where the
sign-out or the removal is handled elsewhere than the socket's worker. `navi chat` says it was
signed out and does not reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from navi.api.security import COOKIE
from navi.api.sockets import CLOSE_SIGNED_OUT, SIGNED_OUT, OpenSockets
from navi.api.websocket import Ending, _sender
from navi.cli.chat.connection import NotConnected, SessionConnection
from navi.cli.remote import Target
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script
from tests.helpers.cli import run_navi
from tests.helpers.forked import forks
from tests.server_helpers import LiveNavi, frames_until, live_navi


def navi_command(tmp_path: Path, database: dict[str, str], *args: str) -> str:
    """`navi ARGS` in a process of its own, on the server's database; its standard output."""
    done = run_navi(tmp_path, *args, env={"LOG_LEVEL": "WARNING", **database})
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().splitlines()) == 1, (done.stdout, done.stderr)
    return done.stdout.strip()


def make_session(base_url: str, token: str, headers: dict[str, str] | None = None) -> str:
    with httpx.Client(base_url=base_url, timeout=15, headers={**bearer(token), **(headers or {})}) as http:
        return str(http.post("/sessions").json()["session_id"])


def sqlite_of(navi: LiveNavi) -> dict[str, str]:
    return {"DB_PATH": navi.settings.db_path}


def sign_in(base_url: str, token: str) -> str:
    with httpx.Client(base_url=base_url, timeout=15) as http:
        answer = http.post("/login", data={"token": token}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return str(answer.cookies[COOKIE])


def sign_out(base_url: str, cookie: str) -> None:
    headers = {"Origin": base_url}  # as the page's own script sends it
    with httpx.Client(base_url=base_url, timeout=15, cookies={COOKIE: cookie}, headers=headers) as http:
        answer = http.post("/logout", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/login"


@asynccontextmanager
async def socket(base_url: str, session_id: str, headers: dict[str, str]) -> AsyncIterator[ClientConnection]:
    url = f"{base_url.replace('http://', 'ws://')}/ws/sessions/{session_id}"
    async with connect(url, open_timeout=10, additional_headers=headers, close_timeout=1) as ws:
        yield ws


def with_cookie(base_url: str, cookie: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={cookie}", "Origin": base_url}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def closed_with(ws: ClientConnection, within: float) -> tuple[int | None, list[dict[str, Any]]]:
    """Wait for the server to close `ws`: its close code, and the frames that came first."""
    frames: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(within):
            while True:
                frames.append(json.loads(await ws.recv()))
    except ConnectionClosed:
        pass
    except TimeoutError:
        raise AssertionError(f"the socket is still open after {within} s: {frames}") from None
    return ws.close_code, frames


async def send_quietly(ws: ClientConnection, content: str) -> None:
    """Send a message frame; a socket already closed simply takes nothing."""
    with contextlib.suppress(ConnectionClosed):
        await ws.send(json.dumps({"type": "message", "content": content}))


def asked_about(model: FakeModelServer, words: str) -> list[Any]:
    """The model requests whose conversation holds `words`."""
    return [r for r in model.requests if any(words in (m.content or "") for m in r.messages)]


def user_messages(base_url: str, token: str, session_id: str) -> list[str]:
    with httpx.Client(base_url=base_url, timeout=15, headers=bearer(token)) as http:
        answer = http.get(f"/sessions/{session_id}")
        assert answer.status_code == 200, answer.text
        shown = answer.json()["messages"]
    return [m["content"] for m in shown if m["role"] == "user"]


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    fake_server.script.responder = lambda _request: Reply(text="Answered.")
    with live_navi(tmp_path, fake_server, planning_enabled=False, navi_socket_recheck_seconds=600) as server:
        yield server


async def test_signing_out_closes_the_browsers_socket_and_its_frames_run_nothing(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    session_id = navi.new_session()
    cookie = sign_in(navi.url, navi.token)
    async with (
        socket(navi.url, session_id, with_cookie(navi.url, cookie)) as page,
        socket(navi.url, session_id, bearer(navi.token)) as cli,
    ):
        sign_out(navi.url, cookie)  # another client with the same cookie (the page's settings)
        await send_quietly(page, "run this after signing out")
        code, frames = await closed_with(page, within=5)
        assert code == CLOSE_SIGNED_OUT
        assert [f for f in frames if f["type"] != "session_updated"] == []
        await asyncio.sleep(0.5)  # a turn, had it started, would have asked the model by now
        assert fake_server.requests == []  # nothing else ran either
        assert user_messages(navi.url, navi.token, session_id) == []
        # The owner's other credentials are not signed out: the token's socket goes on.
        await cli.send(json.dumps({"type": "message", "content": "still here?"}))
        assert (await frames_until(cli, "stream_end"))[-1]["content"] == "Answered."


async def test_a_removed_users_frame_is_refused_and_the_socket_closed(
    tmp_path: Path, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """SQLite: `navi users remove` runs in another process, which the server hears nothing from;
    the next frame is checked (the round of checks is set to 10 minutes here)."""
    alice = navi_command(tmp_path, sqlite_of(navi), "users", "add", "alice")
    session_id = make_session(navi.url, alice)
    async with socket(navi.url, session_id, bearer(alice)) as ws:
        await ws.send(json.dumps({"type": "message", "content": "hello"}))
        assert (await frames_until(ws, "stream_end"))[-1]["content"] == "Answered."
        navi_command(tmp_path, sqlite_of(navi), "users", "remove", "alice")
        await send_quietly(ws, "run this after my removal")
        code, _frames = await closed_with(ws, within=5)
        assert code == CLOSE_SIGNED_OUT
    await asyncio.sleep(0.5)  # a turn, had it started, would have asked the model by now
    assert not asked_about(fake_server, "after my removal")
    with pytest.raises(InvalidStatus):  # and the token opens no socket any more
        async with socket(navi.url, session_id, bearer(alice)):
            pass
    stored = sqlite3.connect(navi.settings.db_path)  # through SQLite, as the server wrote it
    try:
        dump = "\n".join(stored.iterdump())
    finally:
        stored.close()
    assert "hello" in dump and "after my removal" not in dump  # the refused frame was not stored


async def test_a_removed_users_idle_sockets_close_within_the_round_of_checks(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Nothing is sent on them: the round of checks (NAVI_SOCKET_RECHECK_SECONDS) finds the user
    gone, and both the token's socket and the browser's are closed."""
    with live_navi(tmp_path, fake_server, navi_socket_recheck_seconds=0.3) as navi:
        alice = navi_command(tmp_path, sqlite_of(navi), "users", "add", "alice")
        session_id = make_session(navi.url, alice)
        cookie = sign_in(navi.url, alice)
        owners = navi.new_session()
        async with (
            socket(navi.url, session_id, bearer(alice)) as token_socket,
            socket(navi.url, session_id, with_cookie(navi.url, cookie)) as page,
            socket(navi.url, owners, bearer(navi.token)) as owner,
        ):
            await asyncio.sleep(1)  # several rounds: nobody is closed while signed in
            navi_command(tmp_path, sqlite_of(navi), "users", "remove", "alice")
            removed = time.monotonic()
            assert (await closed_with(token_socket, within=5))[0] == CLOSE_SIGNED_OUT
            assert (await closed_with(page, within=5))[0] == CLOSE_SIGNED_OUT
            assert time.monotonic() - removed < 3
            await owner.send(json.dumps({"type": "retry"}))  # the owner's socket is still served
            assert (await frames_until(owner, "error"))[-1]["code"] == "nothing_to_retry"


@pytest.mark.postgres
async def test_across_workers_a_sign_out_or_removal_elsewhere_closes_the_socket_at_once(
    tmp_path: Path, pg_url: str
) -> None:
    """Two `navi serve` on one PostgreSQL database, checking sockets only every 10 minutes: a
    sign-out through worker B and `navi users remove` (a process of its own) are announced, and
    worker A closes the sockets they concern within a second or two — a removed proxy's sockets
    for the user it named too."""
    token = "socket-workers-token-0123456789abcdef"
    database = {"DATABASE_URL": pg_url}
    with FakeModelServer(Script(responder=lambda _request: Reply(text="Answered."))) as model:
        env = {
            **database,
            "OLLAMA_HOST": model.url,
            "NAVI_API_TOKEN": token,
            "PLANNING_ENABLED": "false",
            "NAVI_SOCKET_RECHECK_SECONDS": "600",
        }
        with forks(tmp_path, env) as workers:
            ports = [free_port(), free_port()]
            pids = [workers.serve(port, wait=False) for port in ports]
            for port, pid in zip(ports, pids, strict=True):
                workers.wait_up(port, pid)
            a, b = (f"http://127.0.0.1:{port}" for port in ports)
            alice = navi_command(tmp_path, database, "users", "add", "alice")
            gate = navi_command(tmp_path, database, "users", "add", "gate", "--proxy")
            for_bob = {**bearer(gate), "X-User-Id": "bob"}  # a proxy, forwarding for bob
            owners = make_session(b, token)
            alices = make_session(b, alice)
            bobs = make_session(b, gate, {"X-User-Id": "bob"})
            cookie = sign_in(b, token)  # made through B, used on A
            async with (
                socket(a, owners, with_cookie(a, cookie)) as page,
                socket(a, owners, bearer(token)) as owner,
                socket(a, alices, bearer(alice)) as alice_socket,
                socket(a, bobs, for_bob) as proxied,
            ):
                sign_out(b, cookie)
                signed_out = time.monotonic()
                assert (await closed_with(page, within=5))[0] == CLOSE_SIGNED_OUT
                assert time.monotonic() - signed_out < 2

                navi_command(tmp_path, database, "users", "remove", "alice")
                removed = time.monotonic()
                assert (await closed_with(alice_socket, within=5))[0] == CLOSE_SIGNED_OUT
                assert time.monotonic() - removed < 2

                navi_command(tmp_path, database, "users", "remove", "gate")  # bob's socket was the proxy's
                removed = time.monotonic()
                assert (await closed_with(proxied, within=5))[0] == CLOSE_SIGNED_OUT
                assert time.monotonic() - removed < 2

                await owner.send(json.dumps({"type": "message", "content": "still here?"}))
                assert (await frames_until(owner, "stream_end"))[-1]["content"] == "Answered."
            assert asked_about(model, "still here?")


async def test_navi_chat_is_told_it_was_signed_out_and_does_not_reconnect(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with live_navi(tmp_path, fake_server, navi_socket_recheck_seconds=0.3) as navi:
        alice = navi_command(tmp_path, sqlite_of(navi), "users", "add", "alice")
        session_id = make_session(navi.url, alice)
        frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        conn = SessionConnection(Target(navi.url, alice, "NAVI_API_TOKEN"), session_id, frames)
        conn.start()
        try:
            await conn.wait_open()
            assert (await frames.get()) == {"type": "_connection", "state": "open"}
            navi_command(tmp_path, sqlite_of(navi), "users", "remove", "alice")
            told = await asyncio.wait_for(frames.get(), 10)
            assert told["type"] == "_gone", told
            assert told["message"].startswith(f"Navi at {navi.url} signed this connection out")
            assert "NAVI_API_TOKEN" in told["message"]  # the fix: the token to set
            assert conn.state == "gone"
            await asyncio.sleep(1)  # no reconnect, no "reconnecting"
            assert frames.empty()
            with pytest.raises(NotConnected, match="signed this connection out"):
                await conn.send({"type": "message", "content": "hello?"})
        finally:
            await conn.close()


class Recorder:
    """Stands in for the socket: what is sent, and how it was closed."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed: tuple[int, str] | None = None

    async def send_text(self, text: str) -> None:
        self.sent.append(text)

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


async def test_once_a_socket_is_ending_nothing_that_waits_is_sent() -> None:
    socket, outbox, ending = Recorder(), asyncio.Queue[Any](), Ending()
    for seq in range(1, 6):  # a turn's frames, queued before the sign-out was found
        outbox.put_nowait({"type": "stream_delta", "delta": "secret", "run_id": "r", "seq": seq})
    ending.code, ending.reason = CLOSE_SIGNED_OUT, SIGNED_OUT
    outbox.put_nowait(ending)
    await asyncio.wait_for(_sender(socket, outbox, ending), 5)  # type: ignore[arg-type]
    assert socket.sent == [] and socket.closed == (CLOSE_SIGNED_OUT, SIGNED_OUT)


async def test_a_round_checks_each_credential_once_and_closes_only_the_revoked() -> None:
    checks: list[str] = []
    valid = {"good": True, "revoked": False}

    def check(credential: str) -> Any:
        async def recheck() -> bool:
            checks.append(credential)
            if credential == "unreachable":
                raise OSError("the database is not answering")
            return valid[credential]

        return recheck

    closed: list[str] = []
    sockets = OpenSockets(every=3600)
    for name, user, credential in [
        ("page 1", "alice", "revoked"),
        ("page 2", "alice", "revoked"),
        ("cli", "alice", "good"),
        ("bob", "bob", "unreachable"),
    ]:
        sockets.add(user, check(credential), credential, lambda name=name: closed.append(name))
    assert await sockets.check("alice") == 2
    assert sorted(checks) == ["good", "revoked"] and sorted(closed) == ["page 1", "page 2"]
    checks.clear()
    assert await sockets.check() == 0  # the closed ones are no longer watched; a failing check closes nothing
    assert sorted(checks) == ["good", "unreachable"] and sorted(closed) == ["page 1", "page 2"]
