"""Navi as an MCP server, driven by the official `mcp` client: `navi mcp` spawned as a real process
over stdio, and `/mcp` of a live Navi over streamable HTTP with its token.

Every `ask` runs a real Navi turn on the fake model server; the tests check what the client gets,
what the model was sent (the second turn of a session sees the first), and who sees what.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from navi.compose import build_runtime
from navi.config import load_settings
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, live_navi, use_script

TOOLS = {"ask", "background_job", "list_sessions", "search_memory", "search_documents"}
MISSING = "00000000-0000-4000-8000-000000000000"


def folder_settings(tmp_path: Path, fake: FakeModelServer) -> dict[str, Any]:
    """The settings `live_navi` and the `navi mcp` process use: one database in `tmp_path`."""
    return {
        "db_path": str(tmp_path / "navi.db"),
        "session_files_dir": str(tmp_path / "session_files"),
        "tools_dir": str(tmp_path / "tools"),
        "ollama_host": fake.url,
    }


async def prepare(
    tmp_path: Path, fake: FakeModelServer, facts: dict[str, list[tuple[str, str, str]]], users: list[str]
) -> dict[str, str]:
    """Store facts per owner and add users in the database before Navi starts; the users' tokens."""
    runtime = await build_runtime(load_settings(**folder_settings(tmp_path, fake)), seed_tools=False)
    try:
        tokens = {name: (await runtime.users.add(name))[1] for name in users}
        for owner, rows in facts.items():
            for category, key, value in rows:
                await runtime.memory.upsert_fact(category, key, value, owner=owner)
    finally:
        await runtime.aclose()
    return tokens


def text_of(result: CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert json.loads(text_of(result)) == result.structured_content  # the text says the same
    return result.structured_content


def sent_texts(request: Any) -> list[tuple[str, str]]:
    return [(m.role, m.content or "") for m in request.messages if m.role in ("user", "assistant")]


async def converse(session: ClientSession, fake: FakeModelServer) -> str:
    """ask (a new session), then ask again in it: the second turn is sent the first. The session id."""
    script = use_script(fake)
    script.turn("Hello from Navi.")
    first = structured(await session.call_tool("ask", {"message": "remember the word pelican"}))
    assert first["answer"] == "Hello from Navi." and not first["stopped"]
    sid = str(first["session_id"])
    script.turn("You said pelican.")
    second = structured(await session.call_tool("ask", {"message": "what word?", "session_id": sid}))
    assert second == {"answer": "You said pelican.", "session_id": sid, "stopped": False}
    turns = script.of_kind("turn")
    assert sent_texts(turns[1])[-3:] == [
        ("user", "remember the word pelican"),
        ("assistant", "Hello from Navi."),
        ("user", "what word?"),
    ]
    return sid


# --- stdio: `navi mcp` as a desktop client launches it -------------------------------------------


def navi_mcp_env(tmp_path: Path, fake: FakeModelServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NAVI_", "OLLAMA_", "LOG_"))}
    env.update({k.upper(): v for k, v in folder_settings(tmp_path, fake).items()})
    env.update({"NAVI_APPROVAL_MODE": "auto", "LOG_LEVEL": "DEBUG", **extra})
    return env


@asynccontextmanager
async def stdio_session(tmp_path: Path, fake: FakeModelServer, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "navi", "mcp"],
        env=navi_mcp_env(tmp_path, fake, **env),
        cwd=tmp_path,
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def test_navi_mcp_over_stdio(tmp_path: Path, fake_server: FakeModelServer) -> None:
    await prepare(tmp_path, fake_server, {"local": [("pets", "cat", "Miso"), ("work", "editor", "vim")]}, [])
    async with stdio_session(tmp_path, fake_server) as session:
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS
        sid = await converse(session, fake_server)
        listed = structured(await session.call_tool("list_sessions", {}))["sessions"]
        assert [(s["id"], s["message_count"], s["profile"]) for s in listed] == [(sid, 4, "secretary")]
        facts = structured(await session.call_tool("search_memory", {"query": "cat"}))["facts"]
        assert [(f["category"], f["key"], f["value"]) for f in facts] == [("pets", "cat", "Miso")]
        unknown = await session.call_tool("ask", {"message": "hi", "session_id": MISSING})
        assert unknown.is_error and f"no session '{MISSING}'" in text_of(unknown)
        bad_profile = await session.call_tool("ask", {"message": "hi", "profile": "pirate"})
        assert bad_profile.is_error and "no profile 'pirate'" in text_of(bad_profile)
    # Logs went to stderr (at DEBUG, plenty of them), none among the protocol's messages.
    assert "sandbox" in (tmp_path / "stderr.log").read_text()
    # The same database a `navi serve` would use: the session is there for it.
    runtime = await build_runtime(load_settings(**folder_settings(tmp_path, fake_server)), seed_tools=False)
    try:
        assert [i.id for i in await runtime.sessions.list(owner="local")] == [sid]
    finally:
        await runtime.aclose()


def test_stdout_carries_only_the_protocol(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """Every line `navi mcp` writes on stdout is a JSON-RPC message, with logging at DEBUG."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_sessions", "arguments": {}},
        },
    ]
    with subprocess.Popen(
        [sys.executable, "-m", "navi", "mcp"],
        cwd=tmp_path,
        env=navi_mcp_env(tmp_path, fake_server),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        lines = []
        try:
            for request in requests:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
                if "id" in request:  # its answer before the next request (and before stdin closes)
                    lines.append(process.stdout.readline())
            rest, err = process.communicate(timeout=30)  # closes stdin: the server ends
        finally:
            if process.poll() is None:
                process.kill()
    lines += rest.splitlines()
    messages = [json.loads(line) for line in lines if line.strip()]
    assert [m.get("id") for m in messages] == [1, 2]
    assert messages[1]["result"]["structuredContent"] == {"sessions": []}
    assert "migration" in err and process.returncode == 0


def test_a_setting_it_cannot_use_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "tools").write_text("a file, not a folder")
    env = {**os.environ, "DB_PATH": str(tmp_path / "navi.db"), "TOOLS_DIR": str(tmp_path / "tools")}
    env["LOG_LEVEL"] = "WARNING"
    done = subprocess.run(
        [sys.executable, "-m", "navi", "mcp"],
        cwd=tmp_path,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("navi: ") and "set TOOLS_DIR" in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


# --- streamable HTTP: /mcp of a live Navi ---------------------------------------------------------


@asynccontextmanager
async def http_session(
    navi: LiveNavi, token: str, statuses: list[int] | None = None
) -> AsyncIterator[ClientSession]:
    """The SDK's client on /mcp with this bearer token (`statuses`: each HTTP answer's status)."""

    async def record(response: httpx2.Response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    async with (
        httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=30, event_hooks={"response": [record]}
        ) as http,
        streamable_http_client(f"{navi.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_mcp_over_http_with_the_token(tmp_path: Path, fake_server: FakeModelServer) -> None:
    await prepare(tmp_path, fake_server, {"local": [("pets", "cat", "Miso")]}, [])
    with live_navi(tmp_path, fake_server) as navi:
        async with http_session(navi, navi.token) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            sid = await converse(session, fake_server)
            listed = structured(await session.call_tool("list_sessions", {"limit": 5}))["sessions"]
            assert [(s["id"], s["message_count"]) for s in listed] == [(sid, 4)]
            facts = structured(await session.call_tool("search_memory", {"query": "cat"}))["facts"]
            assert [f["value"] for f in facts] == ["Miso"]
        with navi.client() as http:  # the page sees the same session
            assert [m["content"] for m in http.get(f"/sessions/{sid}").json()["messages"]][-1] == (
                "You said pelican."
            )


def test_http_without_the_right_token_is_401(tmp_path: Path, fake_server: FakeModelServer) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with live_navi(tmp_path, fake_server) as navi:
        for headers in ({"Authorization": "Bearer wrong-token"}, {}):
            resp = httpx.post(f"{navi.url}/mcp", json=init, headers={**accept, **headers}, timeout=10)
            assert resp.status_code == 401 and resp.headers["www-authenticate"] == "Bearer"
            assert resp.json()["code"] == "unauthorized"
        ok = httpx.post(f"{navi.url}/mcp", json=init, headers={**accept, **navi.auth}, timeout=10)
        assert ok.status_code == 200, ok.text
        # A browser page of another site cannot drive it either.
        evil = {**accept, **navi.auth, "Origin": "https://evil.example"}
        assert httpx.post(f"{navi.url}/mcp", json=init, headers=evil, timeout=10).status_code == 403


async def test_the_sdk_client_with_a_wrong_token_gets_no_session(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        statuses: list[int] = []
        with pytest.raises(ExceptionGroup) as refused:
            async with http_session(navi, "wrong-token", statuses):
                pass
        assert refused.group_contains(MCPError)
        assert statuses == [401]


async def test_a_user_token_sees_only_that_users_sessions(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    tokens = await prepare(
        tmp_path,
        fake_server,
        {"local": [("pets", "cat", "Miso")], "alice": [("pets", "dog", "Rex")]},
        ["alice", "bob"],
    )
    with live_navi(tmp_path, fake_server) as navi:
        owner_sid = navi.new_session()
        script = use_script(fake_server)
        async with http_session(navi, tokens["alice"]) as alice:
            script.turn("Hi Alice.")
            asked = structured(await alice.call_tool("ask", {"message": "hello"}))
            alice_sid = asked["session_id"]
            listed = structured(await alice.call_tool("list_sessions", {}))["sessions"]
            assert [s["id"] for s in listed] == [alice_sid]
            facts = structured(await alice.call_tool("search_memory", {"query": "cat dog"}))["facts"]
            assert [f["value"] for f in facts] == ["Rex"]
            other = await alice.call_tool("ask", {"message": "read it", "session_id": owner_sid})
            assert other.is_error and f"no session '{owner_sid}'" in text_of(other)
        async with http_session(navi, tokens["bob"]) as bob:
            assert structured(await bob.call_tool("list_sessions", {}))["sessions"] == []
            theirs = await bob.call_tool("ask", {"message": "go on", "session_id": alice_sid})
            assert theirs.is_error and "no session" in text_of(theirs)
        async with http_session(navi, navi.token) as owner:
            ids = [s["id"] for s in structured(await owner.call_tool("list_sessions", {}))["sessions"]]
            assert ids == [owner_sid]
        with navi.client(anonymous=True, headers={"Authorization": f"Bearer {tokens['alice']}"}) as http:
            assert [s["id"] for s in http.get("/sessions").json()] == [alice_sid]
    assert len(script.of_kind("turn")) == 1  # the refused asks reached no model


async def test_calls_that_need_approval_are_denied(tmp_path: Path, fake_server: FakeModelServer) -> None:
    target = tmp_path / "notes.txt"
    write = ScriptedCall("filesystem", {"action": "write", "path": str(target), "content": "x"})
    # A person at a page would be asked; the timeout is short so a run that wrongly waits fails fast.
    asking = {"navi_approval_mode": "smart", "navi_approval_timeout_seconds": 5}
    with live_navi(tmp_path, fake_server, **asking) as navi:
        script = use_script(fake_server)
        script.turn(Reply(tool_calls=[write]), Reply(text="I could not write the file."))
        async with http_session(navi, navi.token) as session:
            answer = structured(await session.call_tool("ask", {"message": "write notes.txt"}))["answer"]
    assert answer.startswith("I could not write the file.\n\n[Navi did not run 1 tool call (filesystem)")
    assert "through MCP" in answer and "NAVI_MCP_APPROVALS=allow" in answer
    assert not target.exists()
    result = script.of_kind("turn")[1].messages[-1]
    assert result.role == "tool" and "nobody can be asked" in (result.content or "")


async def test_a_setting_allows_them(tmp_path: Path, fake_server: FakeModelServer) -> None:
    target = tmp_path / "notes.txt"
    write = ScriptedCall("filesystem", {"action": "write", "path": str(target), "content": "written"})
    async with stdio_session(
        tmp_path, fake_server, NAVI_APPROVAL_MODE="smart", NAVI_MCP_APPROVALS="allow"
    ) as session:
        use_script(fake_server).turn(Reply(tool_calls=[write]), Reply(text="Done."))
        assert structured(await session.call_tool("ask", {"message": "write notes.txt"}))["answer"] == "Done."
    assert target.read_text() == "written"


async def until(condition: Callable[[], bool]) -> None:
    """Wait for `condition` (checked every 50 ms, for at most 30 s)."""
    for _ in range(600):
        if condition():
            return
        await anyio.sleep(0.05)
    raise AssertionError("the condition never held")


async def test_cancelling_an_ask_stops_its_turn(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="a long answer " * 50, delay=0.2))  # each chunk slow: the turn lasts
    async with stdio_session(tmp_path, fake_server) as session:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.call_tool, "ask", {"message": "take your time"})
            await until(lambda: bool(script.of_kind("turn")))  # the model is answering
            tg.cancel_scope.cancel()  # the client gives up: the SDK sends notifications/cancelled
        turn = script.of_kind("turn")[0]
        await until(lambda: turn.outcome != "pending")  # the model's stream ended, one way or another
        assert turn.outcome == "aborted"  # Navi closed it: the turn stopped
        listed = structured(await session.call_tool("list_sessions", {}))["sessions"]
        assert len(listed) == 1


async def test_both_protocol_eras_over_http_and_stdio(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """The SDK's `Client`: `mode="auto"` finds 2026-07-28 (`server/discover`, no handshake, each
    request standing alone), `mode="legacy"` gets the 2025-11-25 handshake; both reach the same
    tools, over HTTP with the token and over stdio (`navi mcp`)."""
    from mcp import Client

    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        for mode, era in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            async with httpx2.AsyncClient(headers=navi.auth, timeout=60) as http:
                transport = streamable_http_client(f"{navi.url}/mcp", http_client=http)
                async with Client(transport, mode=mode, cache=None) as client:
                    assert client.protocol_version == era
                    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                    script.turn(f"Answered in {era}.")
                    said = structured(await client.call_tool("ask", {"message": f"which era? {mode}"}))
                    assert said["answer"] == f"Answered in {era}." and not said["stopped"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "navi", "mcp"],
        env=navi_mcp_env(tmp_path, fake_server),
        cwd=tmp_path,
    )
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="auto", cache=None) as client:
            assert client.protocol_version == "2026-07-28"
            script.turn("Answered over stdio.")
            said = structured(await client.call_tool("ask", {"message": "and over stdio?"}))
            assert said["answer"] == "Answered over stdio."


async def test_a_2025_sdk_client(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """A client on the 2025 SDK (`mcp` 1.27.2, fetched pinned), which knows nothing of 2026-07-28,
    gets the handshake of 2025-11-25 and the same tools over HTTP."""
    from navi.testing.old_mcp import old_sdk_path

    old = str(old_sdk_path())
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        script.turn("Hello, old client.")
        env = {**os.environ, "PYTHONPATH": old}
        client = str(Path(__file__).with_name("mcp_old_client.py"))
        done = await anyio.run_process(
            [sys.executable, client, f"{navi.url}/mcp", navi.token, "hi from 2025"], env=env, check=False
        )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    said = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert said["protocol"] == "2025-11-25" and set(said["tools"]) == TOOLS
    assert said["result"]["answer"] == "Hello, old client." and not said["result"]["stopped"]
