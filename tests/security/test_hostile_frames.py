"""Hostile frames get an error, never a crash (issue 14, item 6).

Deeply nested JSON, lone surrogates and NUL characters, `?since=` values that are not a count
(answered `bad_frame` and closed at once),
oversized or impossible ids in REST paths, and tool names with a trailing newline — each through
the real surface a client or the model uses: a live Navi over TCP (SQLite and PostgreSQL where
the store is involved), and the write_tool tool with its real registry.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from navi import runctx
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from navi.tools.builtin.meta import WriteToolTool
from navi.tools.registry import ToolRegistry
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
DEEP = '{"type": "message", "content": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.fixture(params=STORES)
def navi(request: pytest.FixtureRequest, tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    with live_navi(tmp_path, fake_server, database_url=url) as server:
        yield server


@pytest.fixture
def sqlite_navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server) as server:
        yield server


# --- WebSocket frames ------------------------------------------------------------------------------


async def test_deeply_nested_frame_gets_bad_frame_and_the_socket_stays(
    sqlite_navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("Still here.")
    sid = sqlite_navi.new_session()
    async with sqlite_navi.socket(sid) as ws:
        for frame in (DEEP, '{"type": "message", "content": "hi", "x": ' + "[" * 70 + "]" * 70 + "}"):
            await ws.send(frame)
            error = json.loads(await ws.recv())
            assert error["type"] == "error" and error["code"] == "bad_frame"
            assert "nested too deeply" in error["message"]
        await ws.send(json.dumps({"type": "message", "content": "hello?"}))
        frames = await frames_until(ws, "stream_end")
        assert frames[-1]["content"] == "Still here."


async def test_lone_surrogates_and_nul_in_a_message_are_stored_cleaned(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """`"\\ud800"` decodes to text no store can encode, and PostgreSQL text cannot hold NUL: the
    turn still runs, with U+FFFD in their place, on every store."""
    use_script(fake_server).turn("Got it.")
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        await ws.send('{"type": "message", "content": "half an emoji \\ud83d, a nul \\u0000 and \\udfff"}')
        frames = await frames_until(ws, "stream_end", "error")
    assert frames[-1]["type"] == "stream_end", frames[-1]
    shown = "half an emoji \ufffd, a nul \ufffd and \ufffd"
    assert frames[0]["type"] == "stream_start" and frames[0]["message"]["content"] == shown
    with navi.client() as http:
        stored = http.get(f"/sessions/{sid}").json()["messages"]
    assert [m["content"] for m in stored] == [shown, "Got it."]


BAD_SINCE = ["²", "-1", "abc", "1.5", "9" * 5000, "99999999999", "%00", "%01", "1%0A", "%7F", "", "1e3"]


async def bad_since_answer(navi: LiveNavi, sid: str, since: str) -> tuple[dict[str, Any], int | None]:
    """The one frame a reconnect with `?since=<since>` gets, and the code it is then closed with;
    within 5 s (before the fix, nothing came at all until the client gave up)."""
    async with asyncio.timeout(5), navi.socket(sid, query=f"?since={since}&run=r1") as ws:
        frame = json.loads(await ws.recv())
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    return frame, closed.value.rcvd.code if closed.value.rcvd else None


async def no_watcher_left(navi: LiveNavi, sid: str) -> None:
    for _ in range(500):  # the server sees the close within moments; 10 s at most
        if not navi.runs.followers.count(sid):
            return
        await asyncio.sleep(0.02)
    assert navi.runs.followers.count(sid) == 0


@pytest.mark.parametrize("since", BAD_SINCE, ids=lambda s: repr(s[:12]))
async def test_since_that_is_not_a_count_gets_bad_frame_and_a_close(
    sqlite_navi: LiveNavi, since: str
) -> None:
    """No run going (where a reconnect used to wait in silence) and a run going alike."""
    sid = sqlite_navi.new_session()
    frame, code = await bad_since_answer(sqlite_navi, sid, since)
    assert frame["type"] == "error" and frame["code"] == "bad_frame" and "since" in frame["message"]
    assert "9999" not in frame["message"] and "\x01" not in frame["message"]  # the value is not echoed
    assert code == 4400
    await no_watcher_left(sqlite_navi, sid)


async def test_a_bad_since_during_a_run_leaves_the_run_and_its_clients_alone(
    sqlite_navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    navi = sqlite_navi
    answer = "a reply that streams slowly enough to join it half way"
    use_script(fake_server).turn(Reply(text=answer, chunk_chars=3, delay=0.02))
    sid = navi.new_session()
    async with navi.socket(sid) as first:
        await first.send(json.dumps({"type": "message", "content": "go"}))
        await frames_until(first, "stream_delta")
        frame, code = await bad_since_answer(navi, sid, "9" * 5000)
        assert (frame["code"], code) == ("bad_frame", 4400)
        async with navi.socket(sid, query="?since=0") as late:  # a count still replays
            replay = await frames_until(late, "stream_end")
        assert replay[0]["type"] == "stream_start" and replay[0]["seq"] == 1
        assert "".join(f["delta"] for f in replay if f["type"] == "stream_delta") == answer
        done = await frames_until(first, "stream_end")
    assert done[-1]["content"] == answer
    await no_watcher_left(navi, sid)


async def test_unknown_oversized_session_id_on_the_socket(sqlite_navi: LiveNavi) -> None:
    """(Longer request lines are refused by `navi serve` before any handshake: test_input_limits.)"""
    async with sqlite_navi.socket("a" * 5_000) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004


# --- REST bodies and paths ---------------------------------------------------------------------------


def test_deeply_nested_rest_bodies_get_422(sqlite_navi: LiveNavi) -> None:
    sid = sqlite_navi.new_session()
    nested = "[" * 100_000 + "]" * 100_000
    moderate = "[" * 70 + "]" * 70
    with sqlite_navi.client(headers={"content-type": "application/json"}) as http:
        for method, path, body in [
            ("POST", "/sessions", '{"name": ' + nested + "}"),
            ("PATCH", f"/sessions/{sid}", '{"name": "x", "extra": ' + moderate + "}"),
            ("POST", f"/sessions/{sid}/messages", '{"content": "hi", "files": ' + nested + "}"),
            ("POST", "/sessions/import", '{"schema_version": "session-archive/v1", "x": ' + nested + "}"),
        ]:
            resp = http.request(method, path, content=body)
            assert resp.status_code == 422, (path, resp.text[:200])
            assert "nested too deeply" in resp.json()["detail"], path
            assert resp.json()["code"] in ("bad_request", "bad_archive"), path
        assert http.get(f"/sessions/{sid}").json()["name"] is None  # nothing was changed


def test_lone_surrogates_and_nul_in_rest_bodies_are_stored_cleaned(navi: LiveNavi) -> None:
    sid = navi.new_session()
    with navi.client(headers={"content-type": "application/json"}) as http:
        renamed = http.patch(f"/sessions/{sid}", content='{"name": "plan \\ud800 with a nul \\u0000"}')
        assert renamed.status_code == 200, renamed.text
        assert http.get(f"/sessions/{sid}").json()["name"] == "plan \ufffd with a nul \ufffd"
        created = http.post("/sessions", content='{"name": "\\udc00"}')
        assert created.status_code == 201, created.text
        assert created.json()["name"] == "\ufffd"
        archive = http.get(f"/sessions/{sid}/export").json()
        archive["messages"] = [_message("m1", "user", "PLACEHOLDER")]
        body = json.dumps(archive).replace("PLACEHOLDER", "tool said \\ud834 and \\u0000")
        imported = http.post("/sessions/import", content=body)
        assert imported.status_code == 201, imported.text
        new_id = imported.json()["session_id"]
        again = http.get(f"/sessions/{new_id}").json()["messages"]
        assert [m["content"] for m in again] == ["tool said \ufffd and \ufffd"]


def _message(mid: str, role: str, content: str) -> dict[str, Any]:
    return {"id": mid, "role": role, "timestamp": "2026-01-01T00:00:00Z", "content": content, "metadata": {}}


SESSION_ROUTES = [
    ("GET", "/sessions/{id}", None),
    ("GET", "/sessions/{id}/context", None),
    ("GET", "/sessions/{id}/planning", None),
    ("GET", "/sessions/{id}/export", None),
    ("GET", "/sessions/{id}/messages", None),
    ("GET", "/sessions/{id}/approvals", None),
    ("PATCH", "/sessions/{id}", {"name": "x"}),
    ("PATCH", "/sessions/{id}/pin", {"pinned": True}),
    ("DELETE", "/sessions/{id}", None),
    ("POST", "/sessions/{id}/messages", {"content": "hi"}),
    ("POST", "/sessions/{id}/files", None),
    ("POST", "/sessions/{id}/approvals/call-1", {"decision": "deny"}),
    ("POST", "/sessions/{id}/stop", None),
]


def test_oversized_session_ids_get_a_short_404_on_every_route(navi: LiveNavi) -> None:
    huge = "a" * 10_000
    with navi.client() as http:
        for method, path, body in SESSION_ROUTES:
            resp = http.request(method, path.format(id=huge), json=body)
            assert resp.status_code == 404, (method, path, resp.status_code, resp.text[:200])
            error = resp.json()
            assert error["code"] == "session_not_found" and len(error["detail"]) < 200, (method, path)


def test_impossible_ids_and_names_get_4xx_not_500(navi: LiveNavi) -> None:
    """Ids beyond the database's integer columns, NUL in a path or query, names longer than any
    stored one: each used to reach the database and come back as a 500."""
    with navi.client() as http:
        for path in [
            f"/memory/facts/{2**63}",
            f"/memory/facts/{2**31}",
            f"/memory/facts/-{2**63 + 1}",
            "/approvals/remembered/" + "t" * 10_000,
            "/approvals/remembered/a%00b",
            "/approvals/remembered/terminal?program=" + "p" * 10_000,
            "/approvals/remembered/terminal?program=ls%00",
        ]:
            resp = http.delete(path)
            assert resp.status_code == 422, (path[:60], resp.status_code, resp.text[:200])
            assert resp.json()["code"] == "bad_request"
        assert http.get("/memory/facts?q=disk%00").status_code == 422
        assert http.get("/sessions/%00").status_code == 422
        assert http.delete("/memory/facts/12345").status_code == 404  # a possible id: not found


# --- write_tool names ------------------------------------------------------------------------------

CODE = '''"""Says hello."""

name = {name!r}
description = "Say hello."
parameters = {{"type": "object", "properties": {{}}}}


async def execute(params: dict) -> str:
    return "hello"
'''


@pytest.mark.parametrize("name", ["hello_tool\n", "hello tool", "hello-tool", "Hello_tool", "hello_tool.py"])
async def test_write_tool_refuses_names_that_are_not_identifiers(tmp_path: Path, name: str) -> None:
    tools_dir = tmp_path / "tools"
    registry = ToolRegistry()
    registry.register(WriteToolTool(registry, tools_dir), builtin=True)
    tool = registry.get("write_tool")
    assert tool is not None
    params = {"name": name, "code": CODE.format(name=name)}
    if name.endswith("\n"):  # the schema's pattern is searched with `$`, which a final newline passes
        assert registry.validation_error(tool, params) is None
    with runctx.using(runctx.RunContext(session_id="s1")):
        result = await tool.execute(params)
    assert not result.success and "not a valid tool name" in (result.error or "")
    assert not tools_dir.exists() or list(tools_dir.iterdir()) == []
    assert name not in registry.names()
