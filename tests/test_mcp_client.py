"""MCP servers' tools through the agent loop of a live Navi (uvicorn, real TCP, the fake model).

Real servers: `mcp-server-time` and `mcp-server-git` from PyPI over stdio, a stdio server and a
streamable-HTTP server written with the `mcp` SDK (tests/mcp_servers.py). The scripted model calls
their tools like any other; what comes back is what the servers answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.mcp_servers import bin_path, http_mcp_server, stdio_entry
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

NO_PLAN = {"planning_enabled": False}


def servers_file(tmp_path: Path, servers: dict[str, Any]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def wait_for_tools(navi: LiveNavi, *names: str, within: float = 60.0) -> dict[str, dict[str, Any]]:
    """The tools of `GET /tools` once all of `names` are there (servers start in the background)."""
    deadline = time.monotonic() + within
    with navi.client() as http:
        while True:
            tools = {t["name"]: t for t in http.get("/agents/tools").json()}
            if all(n in tools for n in names):
                return tools
            if time.monotonic() > deadline:
                raise AssertionError(f"{names} not registered; tools: {sorted(tools)}")
            time.sleep(0.05)


def call(name: str, args: dict[str, Any] | None = None) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name, args or {})])


async def turn(navi: LiveNavi, sid: str, text: str) -> list[dict[str, Any]]:
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "message", "content": text}))
        return await frames_until(ws, "stream_end")


def tool_calls(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in frames if f["type"] == "tool_call"]


async def test_time_server_over_stdio_through_the_agent_loop(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    file = servers_file(tmp_path, {"time": {"command": bin_path("mcp-server-time")}})
    script = use_script(fake_server)
    script.turn(
        call("time__get_current_time", {"timezone": "Asia/Tokyo"}), Reply(text="It is late in Tokyo.")
    )
    with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
        tools = wait_for_tools(navi, "time__get_current_time", "time__convert_time")
        assert tools["time__get_current_time"]["server"] == "time"
        assert tools["time__get_current_time"]["parameters"]["required"] == ["timezone"]
        frames = await turn(navi, navi.new_session(), "what time is it in Tokyo?")
    [result] = tool_calls(frames)
    assert result["success"], result
    assert json.loads(result["result"])["timezone"] == "Asia/Tokyo"
    # The model was told of the server's tools (listed one line each with the server's own
    # description, to load or call: navi/agent/disclosure.py), called one, and saw its answer.
    listing = fake_server.requests[0].system_text
    assert "\n- time__get_current_time: Get current time in a specific timezone" in listing
    assert "\n- time__convert_time: Convert time between timezones" in listing
    seen = fake_server.requests[1].messages[-1]
    assert seen.role == "tool" and '"timezone": "Asia/Tokyo"' in (seen.content or "")


def make_repo(repo: Path) -> Path:
    """A git repository with one commit."""
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "notes.txt").write_text("hello\n")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    return repo


async def test_git_server_on_a_temporary_repository(tmp_path: Path, fake_server: FakeModelServer) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "draft.md").write_text("new\n")  # untracked: git_status must name it
    entry = {"command": bin_path("mcp-server-git"), "args": ["--repository", str(repo)]}
    file = servers_file(tmp_path, {"git": entry})
    use_script(fake_server).turn(
        call("git__git_status", {"repo_path": str(repo)}), Reply(text="One new file.")
    )
    with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
        wait_for_tools(navi, "git__git_status", "git__git_log")
        frames = await turn(navi, navi.new_session(), "what changed?")
    [result] = tool_calls(frames)
    assert result["success"], result
    assert "draft.md" in result["result"] and "Untracked" in result["result"]


async def test_http_server_image_resource_and_error_results(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with http_mcp_server() as server:
        file = servers_file(tmp_path, {"web": {"url": server.url}})
        use_script(fake_server).turn(
            Reply(
                tool_calls=[
                    ScriptedCall("web__picture", {}),
                    ScriptedCall("web__document", {}),
                    ScriptedCall("web__broken", {"reason": "no disk"}),
                ]
            ),
            Reply(text="Seen."),
        )
        with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
            tools = wait_for_tools(navi, "web__picture", "web__document", "web__broken", "web__slow")
            assert tools["web__broken"]["server"] == "web"
            frames = await turn(navi, navi.new_session(), "show me")
    picture, document, broken = tool_calls(frames)
    assert picture["success"] and "here is the picture" in picture["result"]
    assert "image 40×30 (image/png), shown to you" in picture["result"]
    assert document["success"]
    assert "[resource memo://plan (text/markdown)]\n# Plan\nShip on Friday." in document["result"]
    assert (
        "[resource memo://logo (application/octet-stream): 12 bytes of binary data, not shown]"
        in (document["result"])
    )
    assert not broken["success"] and "cannot do that: no disk" in broken["result"]
    # The picture reached the model's context as an image, like image_view's.
    second = fake_server.requests[1].messages
    shown = [m for m in second if m.role == "user" and m.images]
    assert len(shown) == 1 and shown[0].content.startswith("[Image from web__picture")


async def test_stop_during_a_slow_call_cancels_it_on_the_server(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with http_mcp_server() as server:
        file = servers_file(tmp_path, {"web": {"url": server.url}})
        use_script(fake_server).turn(call("web__slow", {"seconds": 60}), Reply(text="never"))
        with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
            wait_for_tools(navi, "web__slow")
            sid = navi.new_session()
            async with navi.socket(sid) as ws:
                await ws.send(json.dumps({"type": "message", "content": "wait a minute"}))
                await frames_until(ws, "tool_started")
                assert await asyncio.to_thread(server.slow_started.wait, 30)
                with navi.client() as http:
                    assert http.post(f"/sessions/{sid}/stop").json()["ok"] is True
                frames = await frames_until(ws, "stream_stopped", "stream_end")
            assert await asyncio.to_thread(server.slow_cancelled.wait, 30)  # the server saw the cancel
    [result] = tool_calls(frames)
    assert not result["success"] and "stopped by the user" in result["result"]
    assert frames[-1]["type"] == "stream_stopped"
    assert not server.slow_finished.is_set()


async def test_per_call_timeout_fails_the_call_and_cancels_it(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with http_mcp_server() as server:
        file = servers_file(tmp_path, {"web": {"url": server.url, "timeout": 0.5}})
        use_script(fake_server).turn(call("web__slow", {"seconds": 60}), Reply(text="Too slow."))
        with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
            wait_for_tools(navi, "web__slow")
            frames = await turn(navi, navi.new_session(), "wait")
            assert await asyncio.to_thread(server.slow_cancelled.wait, 30)
    [result] = tool_calls(frames)
    assert not result["success"]
    assert (
        "took longer than 0.5 s (the timeout of the MCP server 'web') and was cancelled" in result["result"]
    )
    assert frames[-1]["content"] == "Too slow."


async def test_tools_list_changed_refreshes_the_registry(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with http_mcp_server() as server:
        file = servers_file(tmp_path, {"web": {"url": server.url}})
        script = use_script(fake_server)
        script.turn(call("web__grow"), Reply(text="Grown."))
        script.turn(call("web__extra", {"word": "hi"}), Reply(text="Said."))
        with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
            before = wait_for_tools(navi, "web__grow")
            assert "web__extra" not in before
            sid = navi.new_session()
            await turn(navi, sid, "grow")
            after = wait_for_tools(navi, "web__extra")  # re-listed on notifications/tools/list_changed
            assert after["web__extra"]["parameters"]["required"] == ["word"]
            frames = await turn(navi, sid, "use it")
    [result] = tool_calls(frames)
    assert result["success"] and result["result"] == "extra says hi"
    # The model was told of the new tool (listed one line each, the session's tools disclosed
    # progressively: navi/agent/disclosure.py), called it, and got its answer.
    assert "\n- web__extra: Echo a word." in fake_server.requests[-2].system_text


async def test_killed_stdio_server_fails_the_call_then_restarts(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    pid_file = tmp_path / "hang.pid"
    file = servers_file(tmp_path, {"proc": stdio_entry(env={"HANG_PID_FILE": str(pid_file)})})
    script = use_script(fake_server)
    script.turn(call("proc__hang"), Reply(text="It died."))
    script.turn(call("proc__pid"), Reply(text="Back."))
    with live_navi(tmp_path, fake_server, mcp_servers_file=file, **NO_PLAN) as navi:
        wait_for_tools(navi, "proc__hang", "proc__pid")
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "hang"}))
            await frames_until(ws, "tool_started")
            deadline = time.monotonic() + 30
            while not pid_file.exists():
                assert time.monotonic() < deadline, "the server never ran the call"
                await asyncio.sleep(0.02)
            killed = int(pid_file.read_text())
            os.kill(killed, signal.SIGKILL)
            first = await frames_until(ws, "stream_end")
        second = await turn(navi, sid, "again")
        connection = navi.runtime.mcp.connections["proc"]
        assert connection.starts == 2
    [died] = tool_calls(first)
    assert not died["success"] and "the MCP server 'proc' stopped answering" in died["result"]
    [back] = tool_calls(second)
    assert back["success"] and back["result"].isdigit() and int(back["result"]) != killed


async def test_smart_mode_asks_before_an_mcp_call(tmp_path: Path, fake_server: FakeModelServer) -> None:
    servers = {
        "time": {"command": bin_path("mcp-server-time")},
        "quiet": {"command": bin_path("mcp-server-time"), "approval": "auto"},
        "never": {"command": bin_path("mcp-server-time"), "approval": "deny"},
    }
    file = servers_file(tmp_path, servers)
    args = {"timezone": "Etc/UTC"}
    use_script(fake_server).turn(
        Reply(
            tool_calls=[
                ScriptedCall("time__get_current_time", args),
                ScriptedCall("quiet__get_current_time", args),
                ScriptedCall("never__get_current_time", args),
            ]
        ),
        Reply(text="Done."),
    )
    settings = {**NO_PLAN, "navi_approval_mode": "smart", "mcp_servers_file": file}
    with live_navi(tmp_path, fake_server, **settings) as navi:
        wait_for_tools(navi, "time__get_current_time", "quiet__get_current_time", "never__get_current_time")
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "time?"}))
            frames = await frames_until(ws, "approval_required")
            asked = frames[-1]
            assert asked["tool"] == "time__get_current_time"
            assert asked["reason"] == "it runs the tool 'get_current_time' of the MCP server 'time'"
            assert asked["always_scope"] == "every time__get_current_time call"
            await ws.send(json.dumps({"type": "approval", "call_id": asked["call_id"], "decision": "allow"}))
            frames += await frames_until(ws, "stream_end")
    asked_for = [f["tool"] for f in frames if f["type"] == "approval_required"]
    assert asked_for == ["time__get_current_time"]  # "auto" ran unasked, "deny" was refused unasked
    allowed, quiet, never = tool_calls(frames)
    assert allowed["success"] and quiet["success"]
    assert not never["success"] and '"approval": "deny"' in never["result"]
