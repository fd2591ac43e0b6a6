"""MCP servers as configured: the servers file, names, who is offered the tools, what a stdio server
may see, reloads, and `navi doctor`. Real servers (stdio processes, the SDK's HTTP server)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from navi.cli.doctor import mcp_checks
from navi.compose import SetupError, build_runtime
from navi.config import Settings
from navi.mcp.config import McpConfigError, load_servers
from navi.mcp.tools import tool_name
from tests.mcp_servers import bin_path, stdio_entry

TIME = {"command": bin_path("mcp-server-time")}


def write(tmp_path: Path, data: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            "{not json",
            "not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)",
        ),
        ({"servers": {}}, 'expected an object with "mcpServers"'),
        ({"mcpServers": {"a": {}}}, 'server \'a\': needs either "command" (stdio) or "url"'),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}, "needs either"),
        ({"mcpServers": {"a": {"command": "x", "aproval": "auto"}}}, "server 'a': unknown key 'aproval'"),
        ({"mcpServers": {"a": {"command": "x", "approval": "maybe"}}}, '"approval" must be one of ask, auto'),
        ({"mcpServers": {"a": {"command": "x", "args": "-v"}}}, '"args" must be a list of strings'),
        ({"mcpServers": {"a": {"command": "x", "timeout": 0}}}, '"timeout" must be a number of seconds'),
        ({"mcpServers": {"a": {"url": "file:///etc/passwd"}}}, '"url" must be an http:// or https://'),
        ({"mcpServers": {"a": {"url": "http://h/", "env": {}}}}, '"env" belongs to command servers'),
        ({"mcpServers": {"a.b": {"command": "x"}, "a_b": {"command": "y"}}}, "the same prefix 'a_b'"),
    ],
)
def test_a_malformed_file_is_one_line_naming_it(tmp_path: Path, content: Any, says: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(McpConfigError) as caught:
        load_servers(path)
    message = str(caught.value)
    assert message.startswith(f"MCP_SERVERS_FILE {path}: ") and "\n" not in message
    assert says in message


async def test_navi_does_not_start_with_a_broken_file(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    path = write(tmp_path, {"mcpServers": {"t": {"command": ""}}})
    with pytest.raises(SetupError) as caught:
        await build_runtime(make_settings(tools_dir=str(tmp_path / "tools"), mcp_servers_file=str(path)))
    assert (
        caught.value.problem == f"MCP_SERVERS_FILE {path}: server 't': \"command\" must be a non-empty string"
    )
    with pytest.raises(SetupError, match="no such file"):
        await build_runtime(make_settings(mcp_servers_file=str(tmp_path / "missing.json")))


def test_tool_names_are_valid_for_every_backend_and_unique() -> None:
    assert tool_name("time", "get_current_time", set()) == "time__get_current_time"
    assert tool_name("my_srv", "read file.v2/ü", set()) == "my_srv__read_file_v2__"
    long = tool_name("s", "x" * 200, set())
    assert len(long) == 64 and long.startswith("s__xxx")
    taken = {long}
    second = tool_name("s", "x" * 200, taken)
    assert len(second) == 64 and second.endswith("_2") and second != long
    for name in (long, second, tool_name("a-b", "ok.go", set())):
        assert all(c.isascii() and (c.isalnum() or c in "_-") for c in name)


async def test_profiles_enabled_list_and_reloads(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    servers = {
        "time": TIME,
        "clock": {**TIME, "profiles": ["smart_home"]},
        "off": {**TIME, "disabled": True},
    }
    tools_dir = tmp_path / "tools"
    settings = make_settings(
        tools_dir=str(tools_dir), mcp_servers_file=str(write(tmp_path, {"mcpServers": servers}))
    )
    rt = await build_runtime(settings)
    try:
        await rt.mcp.wait_started(30)
        assert set(rt.mcp.connections) == {"time", "clock"}  # a disabled server is not started
        names = lambda profile: {s.name for s in rt.agent.tool_specs(rt.profiles.get(profile))}  # noqa: E731
        assert {"time__get_current_time", "clock__get_current_time"} <= names("smart_home")
        secretary = names("secretary")
        assert "time__get_current_time" in secretary and "clock__get_current_time" not in secretary
        # enabled.json names a server: all its tools, for every profile
        enabled = json.loads((tools_dir / "enabled.json").read_text())
        (tools_dir / "enabled.json").write_text(json.dumps([*enabled, "clock"]))
        assert {"clock__get_current_time", "clock__convert_time"} <= names("secretary")
        # Reloading the user tools keeps the MCP tools
        await rt.tools.reload_user_tools(tools_dir)
        assert rt.tools.server_of("time__convert_time") == "time"
        assert {t.name for t in rt.tools.user_tools()} == {"get_current_datetime", "user_notes"}
        listing = await rt.tools.get("list_tools").execute({})  # type: ignore[union-attr]
        assert "- time__get_current_time (MCP server time): " in listing.output
    finally:
        await rt.aclose()
    assert rt.tools.server_tools("time") == []


async def test_a_stdio_server_sees_only_a_safe_environment(
    tmp_path: Path, make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAVI_API_TOKEN", "secret-token-0123456789abcdef")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw@db/navi")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    workdir = tmp_path / "work"
    workdir.mkdir()
    entry = stdio_entry(env={"GREETING": "hi"}, cwd=str(workdir))
    settings = make_settings(
        tools_dir=str(tmp_path / "tools"),
        database_url="",  # the variable stays in Navi's environment; Navi itself uses SQLite here
        mcp_servers_file=str(write(tmp_path, {"mcpServers": {"env": entry}})),
    )
    rt = await build_runtime(settings)
    try:
        await rt.mcp.wait_started(30)
        result = await rt.tools.get("env__environment").execute({})  # type: ignore[union-attr]
    finally:
        await rt.aclose()
    names, cwd = result.output.split("\n")
    assert "GREETING" in names.split() and "PATH" in names.split()
    for secret in ("NAVI_API_TOKEN", "DATABASE_URL", "OPENAI_API_KEY"):
        assert secret not in names.split()
    assert cwd == f"cwd={workdir}"


async def test_a_server_that_fails_leaves_navi_running(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nprint('boom: missing API key', file=sys.stderr)\nsys.exit(3)\n")
    servers = {"bad": {"command": sys.executable, "args": [str(crash)]}, "time": TIME}
    settings = make_settings(
        tools_dir=str(tmp_path / "tools"), mcp_servers_file=str(write(tmp_path, {"mcpServers": servers}))
    )
    rt = await build_runtime(settings)
    try:
        await rt.mcp.wait_started(30)
        bad = rt.mcp.connections["bad"]
        # The failed server is started again after 1 s, 2 s, 4 s…: on a slow machine the first
        # retry may already be under way, so wait for a moment it is down (as a user would see it).
        for _ in range(1500):  # 30 s at most
            if bad.state == "down":
                break
            await asyncio.sleep(0.02)
        assert bad.state == "down" and bad.failures >= 1
        assert "boom: missing API key" in bad.stderr_tail()
        assert rt.tools.server_tools("bad") == [] and rt.tools.get("time__get_current_time") is not None
    finally:
        await rt.aclose()


async def test_doctor_starts_each_server_and_reports_it(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nprint('boom: missing API key', file=sys.stderr)\nsys.exit(3)\n")
    servers = {
        "time": TIME,
        "bad": {"command": sys.executable, "args": [str(crash)]},
        "gone": {"command": str(tmp_path / "no-such-program")},
        "off": {**TIME, "disabled": True},
    }
    settings = make_settings(mcp_servers_file=str(write(tmp_path, {"mcpServers": servers})))
    checks = {c.what.split(":")[0]: c async for c in mcp_checks(settings, start_timeout=20)}
    time_check = checks[f"MCP server 'time' ({bin_path('mcp-server-time')})"]
    assert time_check.ok and time_check.what.endswith(": 2 tools")
    bad = checks[f"MCP server 'bad' ({sys.executable} {crash})"]
    assert not bad.ok and bad.fix == "its stderr ends with: boom: missing API key"
    gone = checks[f"MCP server 'gone' ({tmp_path / 'no-such-program'})"]
    assert not gone.ok and "no-such-program" in gone.what
    off = checks[f"MCP server 'off' ({bin_path('mcp-server-time')})"]
    assert off.ok and off.note and off.what.endswith(": disabled")
    broken = make_settings(mcp_servers_file=str(write(tmp_path, "[]", "broken.json")))
    [check] = [c async for c in mcp_checks(broken)]
    assert not check.ok and check.what.startswith(f"MCP_SERVERS_FILE {tmp_path / 'broken.json'}: expected")


async def test_what_a_failed_server_wrote_survives_its_restart(tmp_path: Path) -> None:
    """A server that fails is started again after a backoff, with a new stderr file. What the failed
    start wrote is what `navi doctor` and the logs must show, even while the restart has written
    nothing yet: on a loaded machine doctor read the restart's empty file (found by CI)."""
    from navi.mcp.config import ServerConfig
    from navi.mcp.connection import ServerConnection

    crash = tmp_path / "crash.py"
    marker = tmp_path / "started-once"
    crash.write_text(
        "import pathlib, sys, time\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if marker.exists():\n"
        "    time.sleep(5)  # the restart: writes nothing for a while\n"
        "marker.touch()\n"
        "print('boom: missing API key', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    config = ServerConfig(name="bad", command=sys.executable, args=(str(crash),), env={"PATH": "/usr/bin"})
    connection = ServerConnection(config, first_retry=0.05, start_timeout=60)
    connection.start()
    try:
        for _ in range(600):
            if connection.starts >= 2:
                break
            await asyncio.sleep(0.05)
        assert connection.starts >= 2 and marker.exists()
        await asyncio.sleep(0.5)  # the restart is running and has written nothing
        assert connection.stderr_tail() == "boom: missing API key"
    finally:
        await connection.aclose()
