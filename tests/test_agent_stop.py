"""Cooperative stop at each point: before a model call, mid-stream (closing HTTP), during and after tools."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from navi import runctx
from navi.agent.events import StreamStopped, TextDelta, ToolEvent
from navi.agent.turns import RunControl
from navi.compose import build_runtime
from navi.config import load_settings
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.registry import BackendRegistry
from navi.sessions.memory_store import InMemorySessionStore
from navi.testing.agent_script import AgentScript, kind_of
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from navi.tools.base import Tool, ToolResult
from tests.agent_helpers import MODEL, collect, scripted_runtime, types


async def test_stop_before_the_model_call(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path)
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    stop.set()
    events = await collect(rt.agent.run_stream(session.id, "anything", control=RunControl(stop_event=stop)))
    assert types(events) == ["stream_stopped"]
    assert backend.requests == []  # not even the planning call
    stored = await rt.sessions.get(session.id)
    assert stored is not None and [m.content for m in stored.messages] == ["anything"]
    await rt.aclose()


async def test_stop_mid_stream_saves_the_partial_answer(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path)
    never = asyncio.Event()
    script.turn(Reply(text="The first part of a long answer", chunk_chars=5, wait_for=never, wait_after=3))
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    events = []
    async for event in rt.agent.run_stream(
        session.id, "tell me a story", control=RunControl(stop_event=stop)
    ):
        events.append(event)
        if sum(isinstance(e, TextDelta) for e in events) == 3:
            stop.set()
    assert types(events) == ["stream_delta", "stream_stopped"]
    # The answer's stream was closed, not read to its end; so was the planning call's, once its
    # reply said DIRECT (a stream is read only as fast as its reader takes it).
    assert backend.aborted_streams == 2 and backend.completed_streams == 0
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    partial = stored.messages[-1]
    assert (partial.role, partial.content, partial.stopped) == ("assistant", "The first part ", True)
    assert stored.context[-1].stopped
    await rt.aclose()


async def test_stop_mid_stream_closes_the_http_request(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = AgentScript()
    fake_server.script = script
    script.turn(Reply(text="word " * 400, chunk_chars=5, delay=0.05))
    registry = BackendRegistry()
    registry.register_instance("ollama", OllamaBackend(fake_server.url), default_model=MODEL)
    settings = load_settings(db_path=str(tmp_path / "n.db"))
    rt = await build_runtime(settings, backends=registry, sessions=InMemorySessionStore())
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    events = []
    async for event in rt.agent.run_stream(session.id, "ramble", control=RunControl(stop_event=stop)):
        events.append(event)
        if sum(isinstance(e, TextDelta) for e in events) == 2:
            stop.set()
    assert isinstance(events[-1], StreamStopped)
    request = script.of_kind("turn")[0]
    assert fake_server.wait_for(lambda: request.outcome != "pending", timeout=3)
    assert request.outcome == "aborted"  # the model server saw the client go away
    await rt.aclose()


class SlowTool(Tool):
    name = "slow"
    description = "Sleeps until stopped (or forever, if it ignores stops)."
    parameters = {"type": "object", "properties": {"cooperative": {"type": "boolean"}}}
    timeout = 60.0

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        self.started.set()
        ctx = runctx.require()
        try:
            if params.get("cooperative", True):
                await ctx.stop_event.wait()
                return ToolResult.fail("interrupted: stop requested")
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult.ok("finished")


async def _run_with_slow_tool(tmp_path: Path, cooperative: bool) -> tuple[list, Any, SlowTool, Any]:
    rt, backend, script = await scripted_runtime(tmp_path)
    rt.agent.config.stop_grace_seconds = 0.2
    tool = SlowTool()
    rt.tools.register(tool)
    rt.agent.user_tools = lambda: ["slow"]
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall("slow", {"cooperative": cooperative}),
                ScriptedCall("todo", {"action": "read"}),
            ]
        )
    )
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()

    async def stopper() -> None:
        await tool.started.wait()
        stop.set()

    helper = asyncio.create_task(stopper())
    events = await collect(
        rt.agent.run_stream(session.id, "run the slow thing", control=RunControl(stop_event=stop))
    )
    await helper
    stored = await rt.sessions.get(session.id)
    await rt.aclose()
    return events, stored, tool, backend


async def test_stop_during_a_cooperative_tool(tmp_path: Path) -> None:
    events, stored, tool, backend = await _run_with_slow_tool(tmp_path, cooperative=True)
    assert types(events) == ["tool_started", "tool_call", "tool_started", "tool_call", "stream_stopped"]
    slow, todo = [e for e in events if isinstance(e, ToolEvent)]
    assert not slow.success and "stop requested" in slow.result
    assert not todo.success and "not run" in todo.result  # the rest of the batch is not run
    assert [m.metadata["status"] for m in stored.messages if m.role == "tool"] == ["stopped", "stopped"]
    assert [kind_of(r) for r in backend.requests] == ["planning", "turn"]  # no model call after the stop
    assert not tool.cancelled


async def test_stop_during_a_tool_that_ignores_it(tmp_path: Path) -> None:
    events, stored, tool, backend = await _run_with_slow_tool(tmp_path, cooperative=False)
    slow = next(e for e in events if isinstance(e, ToolEvent))
    assert not slow.success and "stopped by the user" in slow.result
    assert tool.cancelled  # after the grace period the tool task (not the run) is cancelled
    assert isinstance(events[-1], StreamStopped)


async def test_stop_after_tools(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path)
    script.turn(Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["x"]})]), "never sent")
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    events = []
    async for event in rt.agent.run_stream(session.id, "plan it", control=RunControl(stop_event=stop)):
        events.append(event)
        if isinstance(event, ToolEvent):
            stop.set()
    assert types(events) == ["tool_started", "tool_call", "stream_stopped"]
    assert len(script.of_kind("turn")) == 1
    stored = await rt.sessions.get(session.id)
    assert stored is not None and stored.messages[-1].role == "tool"
    assert stored.messages[-1].metadata["status"] == "ok"
    await rt.aclose()


async def test_after_a_stop_the_next_turn_works(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path)
    session = await rt.sessions.create("secretary")
    stop = asyncio.Event()
    stop.set()
    await collect(rt.agent.run_stream(session.id, "first", control=RunControl(stop_event=stop)))
    script.turn("second answer")
    events = await collect(rt.agent.run_stream(session.id, "second"))
    assert events[-1].type == "stream_end" and events[-1].content == "second answer"
    await rt.aclose()
