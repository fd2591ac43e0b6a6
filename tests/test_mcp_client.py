"""MCP servers' tools through the agent loop of a live Navi (uvicorn, real TCP, the fake model).

Real servers: `mcp-server-time` and `mcp-server-git` from PyPI over stdio, a stdio server and a
streamable-HTTP server written with the `mcp` SDK (tests/mcp_servers.py). The scripted model calls
their tools like any other; what comes back is what the servers answered.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.mcp_servers import bin_path
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
    # The model was offered the tool with the server's schema, and saw the server's answer.
    offered = set(fake_server.requests[0].tools)
    assert {"time__get_current_time", "time__convert_time"} <= offered
    seen = fake_server.requests[1].messages[-1]
    assert seen.role == "tool" and '"timezone": "Asia/Tokyo"' in (seen.content or "")
