"""Failed turns in the history, Retry, the user message's id, and tools on a step without tools.

The engine against a real SQLite session store and the scripted model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from navi.agent.engine import STOPPED_CALLING_TOOLS, AgentRunError
from navi.agent.events import ErrorEvent, StreamEnd, ToolEvent, ToolStarted
from navi.agent.turns import NewMessage, Retry, RunControl
from navi.compose import Runtime
from navi.llm.errors import BackendUnreachable, StreamInterrupted
from navi.profiles.base import AgentProfile
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import collect, scripted_runtime, types


async def sql_runtime(tmp_path: Path, **settings: Any) -> tuple[Runtime, AgentScript, str]:
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True, **settings)
    session = await rt.sessions.create("secretary")
    return rt, script, session.id


async def buffers(rt: Runtime, sid: str) -> tuple[list[Any], list[Any]]:
    stored = await rt.sessions.get(sid)
    assert stored is not None
    return stored.messages, stored.context


async def test_a_failed_turn_is_recorded_for_the_page_only(tmp_path: Path) -> None:
    rt, script, sid = await sql_runtime(tmp_path)
    script.turn(Reply(exception=BackendUnreachable("the model server at :11434 does not answer")))
    events = []
    async for event in rt.agent.run_stream(sid, NewMessage("Capital of Germany?", message_id="m-given-1")):
        if isinstance(event, ErrorEvent):  # a client that reloads on the error already sees the record
            display, _ = await buffers(rt, sid)
            assert display[-1].metadata["failed_turn"] == "m-given-1"
        events.append(event)
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "model_unreachable"
    display, context = await buffers(rt, sid)
    assert [(m.role, m.id) for m in context] == [("user", "m-given-1")]  # the model never sees the record
    user, record = display
    assert (user.id, user.content) == ("m-given-1", "Capital of Germany?")
    assert record.role == "assistant" and record.content == events[-1].message
    assert record.metadata["error"] == {"code": "model_unreachable", "message": events[-1].message}
    assert record.metadata["failed_turn"] == "m-given-1"
    await rt.aclose()


async def test_the_rest_turn_records_its_failure_too(tmp_path: Path) -> None:
    rt, script, sid = await sql_runtime(tmp_path)
    script.turn(Reply(exception=StreamInterrupted("the connection dropped")))
    with pytest.raises(AgentRunError, match="connection dropped"):
        await rt.agent.run(sid, "hello")
    display, context = await buffers(rt, sid)
    assert [m.role for m in display] == ["user", "assistant"] and [m.role for m in context] == ["user"]
    assert display[-1].metadata["error"]["code"] == "model_interrupted"
    assert display[-1].metadata["failed_turn"] == display[0].id
    await rt.aclose()


async def test_retry_answers_the_stored_message_once(tmp_path: Path) -> None:
    rt, script, sid = await sql_runtime(tmp_path)
    script.turn(Reply(exception=BackendUnreachable("down")))
    await collect(rt.agent.run_stream(sid, NewMessage("Capital of Germany?", message_id="m-1")))
    plans_before = len(script.of_kind("planning"))

    script.turn(Reply(thinking="Easy.", text="Berlin is the capital."))
    retried = await collect(rt.agent.run_stream(sid, Retry()))

    # The same events as a normal turn (here: planning said DIRECT, then thinking and the answer).
    other = await rt.sessions.create("secretary")
    script.turn(Reply(thinking="Easy.", text="Berlin is the capital."))
    normal = await collect(rt.agent.run_stream(other.id, "Capital of Germany?"))
    assert types(retried, status=True) == types(normal, status=True)
    assert isinstance(retried[-1], StreamEnd) and retried[-1].content == "Berlin is the capital."
    assert len(script.of_kind("planning")) == plans_before + 2  # planning as usual on the retry

    display, context = await buffers(rt, sid)
    assert [(m.role, m.content) for m in display if m.role == "user"] == [("user", "Capital of Germany?")]
    assert [m.role for m in context] == ["user", "assistant"]
    assert context[0].id == "m-1" and context[-1].content == "Berlin is the capital."
    assert display[-1].metadata["retry_of"] == "m-1" and "error" not in display[-1].metadata
    asked = script.of_kind("turn")[1]  # the retry's model call
    assert [m.content for m in asked.messages if m.role == "user"] == ["Capital of Germany?"]
    await rt.aclose()


async def test_a_retry_that_fails_again_can_be_retried(tmp_path: Path) -> None:
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False)
    script.turn(
        Reply(exception=BackendUnreachable("down")),
        Reply(exception=BackendUnreachable("still down")),
        "Back again.",
    )
    await collect(rt.agent.run_stream(sid, NewMessage("hi", message_id="m-hi")))
    again = await collect(rt.agent.run_stream(sid, Retry()))
    assert isinstance(again[-1], ErrorEvent) and "still down" in again[-1].message
    done = await collect(rt.agent.run_stream(sid, Retry()))
    assert isinstance(done[-1], StreamEnd) and done[-1].content == "Back again."
    display, context = await buffers(rt, sid)
    assert [m.role for m in display] == ["user", "assistant", "assistant", "assistant"]
    assert [m.metadata.get("failed_turn") for m in display[1:3]] == ["m-hi", "m-hi"]
    assert [m.role for m in context] == ["user", "assistant"]
    await rt.aclose()


async def test_a_retry_does_not_continue_a_broken_answer(tmp_path: Path) -> None:
    """The text a broken stream left is kept for the page; the retried call does not end with it
    (a trailing assistant message would be a prefill the model continues)."""
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False)
    script.turn(Reply(text="Berlin is the cap", chunk_chars=4, error_after=2, error="dropped"))
    await collect(rt.agent.run_stream(sid, "Capital of Germany?"))
    display, context = await buffers(rt, sid)
    assert display[1].content == "Berlin i" and "dropped" in display[1].metadata["interrupted"]
    assert [m.role for m in context] == ["user", "assistant"]

    script.turn("Berlin is the capital.")
    events = await collect(rt.agent.run_stream(sid, Retry()))
    assert isinstance(events[-1], StreamEnd) and events[-1].content == "Berlin is the capital."
    asked = script.of_kind("turn")[-1]
    assert asked.messages[-1].role == "user" and asked.messages[-1].content == "Capital of Germany?"
    display, context = await buffers(rt, sid)
    assert [m.content for m in display] == [
        "Capital of Germany?",
        "Berlin i",
        display[2].content,  # the error record
        "Berlin is the capital.",
    ]
    assert [m.content for m in context] == ["Capital of Germany?", "Berlin is the capital."]
    await rt.aclose()


async def test_a_retry_keeps_the_tool_results_of_the_failed_turn(tmp_path: Path) -> None:
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False)
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["pack"]})]),
        Reply(exception=BackendUnreachable("down")),
        "Your list has one task: pack.",
    )
    await collect(rt.agent.run_stream(sid, "Make my list"))
    events = await collect(rt.agent.run_stream(sid, Retry()))
    assert not any(isinstance(e, ToolStarted) for e in events)  # the tool is not run twice
    assert isinstance(events[-1], StreamEnd)
    asked = script.of_kind("turn")[-1]
    assert [m.role for m in asked.messages] == ["system", "user", "assistant", "tool"]
    await rt.aclose()


@pytest.mark.parametrize("before", ["nothing", "an answer", "a stop"])
async def test_nothing_to_retry(tmp_path: Path, before: str) -> None:
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False)
    if before == "an answer":
        script.turn("Hello!")
        await collect(rt.agent.run_stream(sid, "hi"))
    elif before == "a stop":
        script.turn(Reply(text="stopping soon", chunk_chars=2, delay=0.05))
        stop = asyncio.Event()
        async for event in rt.agent.run_stream(sid, "hi", control=RunControl(stop_event=stop)):
            if event.type == "stream_delta":
                stop.set()
    await rt.agent.settle()  # naming, after the answer
    calls = len(script.requests)
    display_before, context_before = await buffers(rt, sid)
    events = await collect(rt.agent.run_stream(sid, Retry()))
    assert len(events) == 1 and isinstance(events[0], ErrorEvent) and events[0].code == "nothing_to_retry"
    display, context = await buffers(rt, sid)
    assert [m.id for m in display] == [m.id for m in display_before]  # nothing stored, no record
    assert [m.id for m in context] == [m.id for m in context_before]
    assert len(script.requests) == calls  # no model call
    await rt.aclose()


async def test_the_message_id_is_the_stored_id(tmp_path: Path) -> None:
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False)
    script.turn("Hello!")
    await collect(rt.agent.run_stream(sid, NewMessage("hi", message_id="client-chosen-7")))
    script.turn("Again!")
    await collect(rt.agent.run_stream(sid, "hi again"))
    display, context = await buffers(rt, sid)
    assert display[0].id == context[0].id == "client-chosen-7"
    assert display[2].role == "user" and display[2].id not in ("", "client-chosen-7")  # a fresh one
    await rt.aclose()


def writer_profile() -> AgentProfile:
    return AgentProfile(
        id="writer",
        name="Writer",
        description="",
        system_prompt="You write files.",
        enabled_tools=["filesystem"],
        max_iterations=1,
    )


def write(path: Path, text: str = "x") -> ScriptedCall:
    return ScriptedCall("filesystem", {"action": "write", "path": str(path), "content": text})


async def test_a_write_on_the_last_step_is_not_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False, fs_allowed_paths=str(work))
    rt.profiles.register(writer_profile())
    await rt.sessions.set_profile(sid, "writer")
    script.turn(
        Reply(tool_calls=[write(work / "first.txt")]),
        # The step limit: no tools are offered, the model writes anyway, with no text.
        Reply(tool_calls=[write(work / "second.txt")]),
    )
    events = await collect(rt.agent.run_stream(sid, "write two files"))
    assert (work / "first.txt").exists() and not (work / "second.txt").exists()
    assert [e.tool for e in events if isinstance(e, ToolStarted)] == ["filesystem"]
    assert isinstance(events[-1], StreamEnd) and events[-1].content == STOPPED_CALLING_TOOLS
    display, context = await buffers(rt, sid)
    assert context[-1].role == "assistant" and context[-1].tool_calls == []  # no call left unanswered
    assert context[-1].content == STOPPED_CALLING_TOOLS
    await rt.aclose()


async def test_calls_after_repeated_failures_are_not_run_and_the_text_is_the_answer(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    rt, script, sid = await sql_runtime(tmp_path, planning_enabled=False, fs_allowed_paths=str(work))
    failing = ScriptedCall("filesystem", {"action": "read", "path": str(work / "missing.txt")})
    script.turn(
        *(Reply(tool_calls=[failing]) for _ in range(3)),
        Reply(text="I could not read it.", tool_calls=[write(work / "late.txt")]),
    )
    events = await collect(rt.agent.run_stream(sid, "read missing.txt"))
    results = [e for e in events if isinstance(e, ToolEvent)]
    assert len(results) == 3 and not any(r.success for r in results)
    assert not (work / "late.txt").exists()
    assert isinstance(events[-1], StreamEnd) and events[-1].content == "I could not read it."
    assert script.of_kind("turn")[-1].tools == []
    await rt.aclose()
