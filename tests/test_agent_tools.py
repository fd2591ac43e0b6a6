"""Tool execution in the loop: bad calls, failures, images, long results, limits, errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from navi.agent.context import INTERRUPTED, MEMORY_INTRO, SystemParts, build_context, repair
from navi.agent.engine import FAILURE_NOTE, LIMIT_NOTE, STOPPED_CALLING_TOOLS, AgentRunError, with_files
from navi.agent.events import ErrorEvent, ToolEvent, ToolStarted
from navi.agent.turns import NewMessage
from navi.llm.attached import AttachedFile
from navi.llm.errors import ModelNotFound, StreamInterrupted
from navi.llm.messages import Message, ToolCall
from navi.profiles.base import AgentProfile
from navi.testing.script import Reply, ScriptedCall
from navi.tools.base import Tool, ToolResult
from tests.agent_helpers import collect, scripted_runtime, types


class EchoTool(Tool):
    name = "echo"
    description = "Returns its input, or fails, or returns an image."
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "mode": {"type": "string"}, "size": {"type": "integer"}},
        "required": ["text"],
    }
    timeout = 0.5

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        self.calls.append(params)
        mode = params.get("mode")
        if mode == "raise":
            raise RuntimeError("disk on fire")
        if mode == "slow":
            await asyncio.sleep(5)
        if mode == "image":
            return ToolResult.ok("a red square", is_image=True, base64="data:image/png;base64,iVBORw0KGgo=")
        if mode == "big":
            return ToolResult.ok("".join(f"{i:06d}" for i in range(params["size"] // 6)))
        return ToolResult.ok(params["text"])


async def runtime_with_echo(tmp_path: Path, **kw: Any):
    kw.setdefault("navi_tool_disclosure", False)  # echo offered whole (disclosure: test_tool_disclosure.py)
    rt, backend, script = await scripted_runtime(tmp_path, **kw)
    tool = EchoTool()
    rt.tools.register(tool)
    rt.agent.user_tools = lambda: ["echo"]
    session = await rt.sessions.create("secretary")
    return rt, backend, script, tool, session.id


def tool_messages(request) -> list[Message]:
    return [m for m in request.messages if m.role == "tool"]


async def test_unknown_tool_bad_json_and_schema_errors_reach_the_model(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall("teleport", {"to": "Mars"}),
                ScriptedCall("echo", '{"text": "unterminated'),
                ScriptedCall("todo", {"action": "explode"}),
                ScriptedCall("echo", {"mode": "plain"}),
            ]
        ),
        "I could not use the tools properly.",
    )
    events = await collect(rt.agent.run_stream(sid, "do things"))
    results = [e for e in events if isinstance(e, ToolEvent)]
    assert [r.success for r in results] == [False, False, False, False]
    assert "the tool 'teleport' does not exist" in results[0].result and "echo" in results[0].result
    assert "not valid JSON" in results[1].result and '{"text": "unterminated' in results[1].result
    assert results[1].args == {"_raw": '{"text": "unterminated'}
    assert "invalid arguments for todo at action" in results[2].result and "'explode'" in results[2].result
    assert "'text' is a required property" in results[3].result
    assert tool.calls == []  # nothing ran with made-up arguments
    seen = tool_messages(script.of_kind("turn")[1])
    assert [m.content == r.result for m, r in zip(seen, results, strict=True)] == [True] * 4
    await rt.aclose()


async def test_tool_exceptions_and_timeouts_become_failed_results(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall("echo", {"text": "x", "mode": "raise"}),
                ScriptedCall("echo", {"text": "x", "mode": "slow"}),
            ]
        ),
        "Both failed.",
    )
    events = await collect(rt.agent.run_stream(sid, "try"))
    first, second = [e for e in events if isinstance(e, ToolEvent)]
    assert first.result == "Error: RuntimeError: disk on fire"
    assert second.result == "Error: echo timed out after 0.5 s"
    assert events[-1].type == "stream_end"
    stored = await rt.sessions.get(sid)
    assert stored is not None
    assert [m.metadata["status"] for m in stored.messages if m.role == "tool"] == ["error", "error"]
    await rt.aclose()


async def test_repeated_failures_are_bounded(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    script.turn(
        *[Reply(tool_calls=[ScriptedCall("nope", {})]) for _ in range(3)], "Sorry, the tool is missing."
    )
    events = await collect(rt.agent.run_stream(sid, "use nope"))
    assert events[-1].type == "stream_end" and events[-1].content == "Sorry, the tool is missing."
    turns = script.of_kind("turn")
    assert len(turns) == 4
    assert all(t.tools for t in turns[:3])
    assert turns[3].tools == [] and FAILURE_NOTE not in (turns[3].messages[0].content or "")
    # The note comes after the whole conversation (the cached prefix is untouched), as a user's turn.
    assert [m.role for m in turns[3].messages].count("system") == 1
    assert turns[3].messages[-1].role == "user" and FAILURE_NOTE in (turns[3].messages[-1].content or "")
    assert turns[3].messages[-2].role == "tool"
    await rt.aclose()


async def test_image_results_go_into_the_context_only(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall("echo", {"text": "x", "mode": "image"}),
                ScriptedCall("todo", {"action": "read"}),
            ]
        ),
        "It is a red square.",
    )
    await collect(rt.agent.run_stream(sid, "what is in the picture?"))
    stored = await rt.sessions.get(sid)
    assert stored is not None
    injected = [m for m in stored.context if m.images and m.metadata.get("synthetic") == "image"]
    assert len(injected) == 1 and injected[0].images == ["iVBORw0KGgo="]
    assert not any(m.metadata.get("synthetic") for m in stored.messages)
    roles = [m.role for m in stored.context]
    assert roles[-4:] == ["tool", "tool", "user", "assistant"]  # after both results, not between them
    second = script.of_kind("turn")[1]
    assert any(m.images == ["iVBORw0KGgo="] for m in second.messages)
    await rt.aclose()


async def test_long_results_are_shortened_recoverably(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    rt.agent.config.tool_result_max_chars = 2000
    script.turn(Reply(tool_calls=[ScriptedCall("echo", {"text": "x", "mode": "big", "size": 60000})]))
    await collect(rt.agent.run_stream(sid, "dump it"))
    stored = await rt.sessions.get(sid)
    assert stored is not None
    full = next(m for m in stored.messages if m.role == "tool")
    short = next(m for m in stored.context if m.role == "tool")
    assert len(full.content or "") == 60000 and full.id == short.id
    assert len(short.content or "") < 2200 and f'key "msg_{full.id}"' in (short.content or "")
    assert (short.content or "").startswith("000000000001") and (short.content or "").endswith("009999")
    # The model asks for a part of the middle and gets it exactly, from the display history (by the
    # bare id: keys written before the `msg_` form still work).
    script.turn(
        Reply(tool_calls=[ScriptedCall("recall", {"key": full.id, "offset": 30000, "length": 18})]), "ok"
    )
    events = await collect(rt.agent.run_stream(sid, "what is at 30000?"))
    recalled = next(e for e in events if isinstance(e, ToolEvent))
    assert recalled.success and recalled.result.endswith("\n005000005001005002")
    assert "characters 30000–30018 of 60000" in recalled.result
    await rt.aclose()


async def test_step_limit_forces_an_answer(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    rt.profiles.register(
        AgentProfile(
            id="tiny",
            name="Tiny",
            description="",
            system_prompt="Tiny.",
            max_iterations=2,
            enabled_tools=["todo"],
        )
    )
    await rt.sessions.set_profile(sid, "tiny")
    script.turn(
        *[Reply(tool_calls=[ScriptedCall("todo", {"action": "read"})]) for _ in range(2)], "Out of steps."
    )
    events = await collect(rt.agent.run_stream(sid, "loop"))
    assert events[-1].type == "stream_end" and events[-1].content == "Out of steps."
    final = script.of_kind("turn")[-1]
    assert final.tools == [] and LIMIT_NOTE in (final.messages[-1].content or "")
    assert final.messages[-1].role == "user" and LIMIT_NOTE not in (final.messages[0].content or "")
    assert [m.role for m in final.messages].count("system") == 1
    assert script.of_kind("planning") == []  # the tiny profile does not plan
    await rt.aclose()


async def test_tools_called_on_a_step_without_tools_are_not_run(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    rt.profiles.register(
        AgentProfile(id="tiny", name="Tiny", description="", system_prompt="Tiny.", max_iterations=1)
    )
    await rt.sessions.set_profile(sid, "tiny")
    script.turn(
        Reply(tool_calls=[ScriptedCall("echo", {"text": "first"})]),
        # The last step offers no tools; the model calls one anyway, with no text.
        Reply(tool_calls=[ScriptedCall("echo", {"text": "must not run"})]),
    )
    events = await collect(rt.agent.run_stream(sid, "loop"))
    assert [c["text"] for c in tool.calls] == ["first"]
    assert [e.tool for e in events if isinstance(e, ToolStarted)] == ["echo"]  # only the offered call
    assert events[-1].type == "stream_end" and events[-1].content == STOPPED_CALLING_TOOLS
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.messages[-1].tool_calls == []
    assert script.of_kind("turn")[-1].tools == []
    await rt.aclose()


async def test_run_without_streaming_or_planning(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    script.turn(Reply(tool_calls=[ScriptedCall("echo", {"text": "pong"})]), "pong received")
    assert await rt.agent.run(sid, "ping") == "pong received"
    assert script.of_kind("planning") == []
    script.turn(Reply(exception=StreamInterrupted("the connection dropped")))
    with pytest.raises(AgentRunError, match="connection dropped"):
        await rt.agent.run(sid, "again")
    await rt.aclose()


async def test_model_errors_end_the_turn_with_an_error_event(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    script.turn(Reply(text="partial answer that", chunk_chars=4, error_after=3, error="model crashed"))
    events = await collect(rt.agent.run_stream(sid, "hello"))
    assert types(events) == ["stream_delta", "error"]
    assert "model crashed" in events[-1].message
    stored = await rt.sessions.get(sid)
    assert stored is not None
    partial, record = stored.messages[-2:]
    assert partial.content == "partial answ" and "model crashed" in partial.metadata["interrupted"]
    # The failure itself is kept for the page (with Retry), in the display history only.
    assert record.metadata["error"]["code"] == "model_interrupted" and "model crashed" in record.content
    assert record.metadata["failed_turn"] == stored.messages[0].id
    assert record.id not in {m.id for m in stored.context}
    await rt.aclose()


async def test_model_not_pulled_is_a_clear_error(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)
    backend.models = ["some-other-model"]
    events = await collect(rt.agent.run_stream(sid, "hello"))
    assert isinstance(events[-1], ErrorEvent)
    assert "run `ollama pull gemma4:e2b-it-q8_0`" in events[-1].message
    assert isinstance(ModelNotFound("x"), Exception)
    await rt.aclose()


async def test_memory_summary_and_files_reach_the_model(tmp_path: Path) -> None:
    rt, backend, script, tool, sid = await runtime_with_echo(tmp_path)

    async def memory(owner: str) -> str:
        assert owner == "local"
        return "The user lives in Oslo and has a cat named Miso."

    rt.agent.memory_summary = memory
    script.turn("Noted.")
    pdf = AttachedFile(name="a.pdf", path="/f/a.pdf")
    await collect(rt.agent.run_stream(sid, NewMessage("Summarise this", files=[pdf])))
    request = script.of_kind("turn")[0]
    assert [m.role for m in request.messages].count("system") == 1  # memory is merged into it
    assert (request.messages[0].content or "").endswith(
        f"## What I remember about the user\n\n{MEMORY_INTRO}\n\n"
        "<memory>\nThe user lives in Oslo and has a cat named Miso.\n</memory>"
    )
    assert request.last_user_text == "Summarise this\n\n[Uploaded files on disk:\n- a.pdf → /f/a.pdf]"
    await rt.aclose()


def test_context_building_and_repair() -> None:
    profile = AgentProfile(id="p", name="P", description="", system_prompt="Profile rules.")
    call = ToolCall(name="todo")
    stored = [
        Message.system("an old system message that must not be resent"),
        Message.user("go"),
        Message.assistant("", tool_calls=[call, ToolCall(name="scratchpad")]),
        Message.tool("[]", tool_call_id=call.id, name="todo"),
        Message.tool("orphan", tool_call_id="call_gone", name="todo"),
        Message.user("next"),
    ]
    built = build_context(SystemParts("Persona text.", profile, memory_summary=None), stored)
    assert built[0].content == "Persona text.\n\n---\n\nProfile rules."
    assert [m.role for m in built] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert built[4].content == INTERRUPTED and built[4].name == "scratchpad"
    assert "orphan" not in [m.content for m in built]
    assert repair([]) == []
    default = build_context(SystemParts("", profile), [])[0].content or ""
    assert default.startswith("You are Navi") and default.endswith("Profile rules.")


def test_uploaded_files_format() -> None:
    assert with_files("hi", None) == "hi"
    assert with_files("hi", [AttachedFile(name="x.txt", path="session_files/s/x.txt")]) == (
        "hi\n\n[Uploaded files on disk:\n- x.txt → session_files/s/x.txt]"
    )
