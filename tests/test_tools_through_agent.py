"""Every built-in tool, called by the (scripted) model through the real agent loop.

Each tool talks to a real local counterpart: files in a temp dir, a local HTTP server, an
in-process SSH server, real subprocesses, the memory store, and a subagent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from navi.agent.events import ToolEvent
from navi.agent.tool_batch import STDERR_KEPT
from navi.sessions.archive import import_archive
from navi.testing.script import Reply, ScriptedCall
from navi.tools.builtin.web import WebSearchTool
from tests.agent_helpers import collect, scripted_runtime
from tests.helpers.local_http import LocalHttpServer, png_bytes
from tests.test_tool_ssh import Env, env  # noqa: F401 - the in-process SSH server fixture

DOUBLE_TOOL = '''"""Doubles a number."""

name = "double"
description = "Double a number."
parameters = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


async def execute(params: dict) -> str:
    return str(params["n"] * 2)
'''


class FakeSearch:
    def text(self, query: str, **kwargs: Any) -> list[dict[str, str]]:
        return [
            {
                "title": "Oslo - Wikipedia",
                "href": "https://en.wikipedia.org/wiki/Oslo",
                "body": f"About {query}",
            }
        ]


@pytest.fixture(scope="module")
def http() -> Iterator[LocalHttpServer]:
    server = LocalHttpServer().start()
    try:
        yield server
    finally:
        server.stop()


async def test_every_builtin_through_the_loop(tmp_path: Path, http: LocalHttpServer, env: Env) -> None:  # noqa: F811
    hosts = env.write_hosts()
    work = tmp_path / "work"
    work.mkdir()
    (work / "photo.png").write_bytes(png_bytes((64, 48)))
    rt, backend, script = await scripted_runtime(
        tmp_path,
        sql=True,
        fs_allowed_paths=str(work),
        ssh_hosts_file=hosts,
        terminal_allowed_commands="echo,ls",
        navi_fetch_allowed_hosts="127.0.0.1",  # the local test server; nothing else of this machine
    )
    rt.tools.register(WebSearchTool(client_factory=FakeSearch), builtin=True)
    await rt.memory.upsert_fact("pets", "cat", "Miso")
    await rt.memory.upsert_fact("location", "home city", "Oslo")
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("todo", {"action": "set", "tasks": ["check everything"]}, "1. [ ] check everything"),
        ("scratchpad", {"action": "write", "section": "findings", "content": "ok"}, "Section 'findings'"),
        ("web_search", {"query": "Oslo"}, "Oslo - Wikipedia"),
        ("web_view", {"url": http("/article")}, "Understanding Local Servers"),
        ("http_request", {"method": "GET", "url": http("/echo"), "params": {"x": "1"}}, "200"),
        ("filesystem", {"action": "write", "path": str(work / "a.txt"), "content": "hello file"}, "Wrote 10"),
        ("filesystem", {"action": "read", "path": str(work / "a.txt")}, "hello file"),
        ("code_exec", {"code": "print(6 * 7)"}, "42"),
        ("terminal", {"command": "echo from the terminal"}, "from the terminal"),
        ("ssh_exec", {"host": "box", "command": "echo over ssh"}, "over ssh"),
        ("image_view", {"source": str(work / "photo.png")}, "64"),
        ("memory_search", {"query": "cat"}, "pets: cat = Miso"),
        ("memory_forget", {"key": "home city"}, "Forgot 1 fact"),
        ("list_tools", {}, "ssh_exec"),
        ("tool_manual", {"name": "write_tool"}, "execute"),
        ("get_current_datetime", {}, "20"),
        ("user_notes", {"action": "add", "text": "buy milk"}, "Saved note #1"),
        ("spawn_agent", {"task": "Say hello."}, "Hello from the subagent."),
        ("write_tool", {"name": "double", "code": DOUBLE_TOOL}, "double"),
        ("reload_tools", {}, "double"),
        ("recall", {"key": "no-such-key"}, "nothing is stored"),
        ("switch_profile", {"profile_id": "server_admin"}, "Server Administrator"),
    ]
    script.turn(
        Reply(tool_calls=[ScriptedCall(name, args) for name, args, _ in calls]),
        Reply(text="Hello from the subagent."),  # the subagent's answer
        Reply(text="All tools ran."),
    )
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Exercise every tool"))
    results = [e for e in events if isinstance(e, ToolEvent) and not e.is_subagent]
    assert [r.tool for r in results] == [name for name, _, _ in calls]
    for (name, _, expected), result in zip(calls, results, strict=True):
        if name == "recall":
            assert not result.success and expected in result.result
            continue
        assert result.success, (name, result.result)
        assert expected in result.result, (name, result.result)
    assert events[-1].type == "stream_end"
    # The image went into the model's next request; the file exists; the memory fact is gone.
    final_request = script.of_kind("turn")[-1]
    assert any(m.images for m in final_request.messages if m.role == "user")
    assert (work / "a.txt").read_text() == "hello file"
    assert [f.key for f in await rt.memory.get_all_facts()] == ["cat"]
    assert "Mode: server administrator" in final_request.system_text
    # The tool written during the turn is offered, and callable, from the next message on.
    assert "double" not in script.of_kind("turn")[0].tools
    assert json.loads((tmp_path / "tools" / "enabled.json").read_text())[-1] == "double"
    script.turn(Reply(tool_calls=[ScriptedCall("double", {"n": 21})]), "21 doubled is 42.")
    events = await collect(rt.agent.run_stream(session.id, "Double 21 with your new tool"))
    doubled = next(e for e in events if isinstance(e, ToolEvent))
    assert doubled.tool == "double" and doubled.success and doubled.result == "42"
    # Named in the second request it stays listed (the tools are fixed after the first request);
    # the model's call of it runs, and from then on its schema is sent.
    assert "double" not in script.of_kind("turn")[-2].tools and "double" in script.of_kind("turn")[-1].tools
    await rt.aclose()


async def test_stderr_is_kept_in_the_tool_messages_metadata_and_archives(tmp_path: Path, env: Env) -> None:  # noqa: F811
    rt, _, script = await scripted_runtime(tmp_path, sql=True, ssh_hosts_file=env.write_hosts())
    leaky = (
        "import sys\nprint('done')\n"
        "sys.stderr.write('fetch https://bob:hunter2@example.org/x failed\\n')\n"
        "sys.stderr.write('w' * 9000 + '\\nlast line\\n')"
    )
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall("code_exec", {"code": leaky}),
                ScriptedCall("ssh_exec", {"host": "box", "command": "echo out; echo disk is full >&2"}),
                ScriptedCall("code_exec", {"code": "print('quiet')"}),
            ]
        ),
        "Done.",
    )
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Run them"))
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    code, ssh, quiet = [m for m in stored.messages if m.role == "tool"]
    # What the model sees is as before: the output holds stderr as the process wrote it.
    sent = {m.tool_call_id: m.content for m in script.of_kind("turn")[-1].messages if m.role == "tool"}
    assert "hunter2" in (sent[code.tool_call_id] or "") and "[stderr]" in (sent[code.tool_call_id] or "")
    # The metadata keeps stderr apart: credentials masked, its start and end when long.
    kept = code.metadata["stderr"]
    assert kept.startswith("fetch https://bob:***@example.org/x failed") and "hunter2" not in kept
    assert kept.endswith("w\nlast line\n") and "characters left out" in kept
    assert len(kept) < STDERR_KEPT + 100
    assert ssh.metadata["stderr"] == "disk is full\n" and "stderr" not in quiet.metadata
    context = await rt.sessions.get(session.id, display=False)
    assert context is not None
    assert [m.metadata.get("stderr") for m in context.context if m.role == "tool"] == [
        kept,
        "disk is full\n",
        None,
    ]
    # And archives: exported beside status and duration, imported back.
    archive = await rt.export_archive(stored)
    out = [m["metadata"] for m in archive["messages"] if m["role"] == "tool"]
    assert [m["stderr"] for m in out] == [kept, "disk is full\n", None]
    assert all("stderr" not in m.get("extra", {}) for m in out)
    again = import_archive(archive)
    assert [m.metadata.get("stderr") for m in again.messages if m.role == "tool"] == [
        kept,
        "disk is full\n",
        None,
    ]
    await rt.aclose()
