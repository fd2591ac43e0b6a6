"""The reference's event sequences, driven through the real engine by the scripted backend."""

from __future__ import annotations

import asyncio
from pathlib import Path

from navi.agent.context import PLAN_HEADING
from navi.agent.events import ProfileSwitched, StreamEnd, StreamStopped, ToolEvent, ToolStarted, TurnThinking
from navi.agent.turns import RunControl
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import collect, scripted_runtime, types


async def test_simple_answer(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    script.turn(
        Reply(
            thinking="A greeting; answer warmly.",
            text="Hello! How can I help?",
            prompt_tokens=900,
            completion_tokens=25,
        )
    )
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Hi Navi"))
    assert types(events) == ["thinking_delta", "thinking_end", "stream_delta", "stream_end"]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.content == "Hello! How can I help?"
    assert end.context_tokens == 925  # the backend's own counts
    assert end.max_context_tokens == 65536
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    assert [(m.role, m.content) for m in stored.messages] == [
        ("user", "Hi Navi"),
        ("assistant", "Hello! How can I help?"),
    ]
    assert stored.messages[1].thinking == "A greeting; answer warmly."
    assert stored.context == stored.messages
    assert stored.context_token_count == 925
    assert stored.name is None or stored.name == "Scripted title"  # naming runs in the background
    await rt.agent.settle()
    named = await rt.sessions.get(session.id)
    assert named is not None and named.name == "Scripted title"  # named after the first exchange
    assert [r["decision"] for r in stored.planning_logs] == ["direct"]
    turn_request = script.of_kind("turn")[0]
    assert turn_request.messages[0].role == "system"
    assert "Mode: personal secretary" in turn_request.messages[0].content
    assert "todo" in turn_request.tools and "load_tools" in turn_request.tools
    assert "- spawn_agent: " in turn_request.messages[0].content  # listed, loaded on demand
    await rt.aclose()


async def test_planning_with_tools(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    plan = "1. Write the checklist with todo\n2. Note findings in the scratchpad\n3. Answer"
    script.plan(f"Here is my plan:\n{plan}")
    script.turn(
        Reply(
            thinking="Start with the checklist.",
            tool_calls=[
                ScriptedCall("todo", {"action": "set", "tasks": ["compare", "answer"]}),
                ScriptedCall(
                    "scratchpad", {"action": "write", "section": "findings", "content": "A is cheaper"}
                ),
            ],
        ),
        Reply(thinking="Both done.", text="A is cheaper, so pick A."),
    )
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Compare A and B and tell me which to buy"))
    assert types(events) == [
        "plan_ready",
        "thinking_delta",
        "thinking_end",
        "tool_started",
        "tool_call",
        "tool_started",
        "tool_call",
        "thinking_delta",
        "thinking_end",
        "stream_delta",
        "stream_end",
    ]
    plan_event = next(e for e in events if e.type == "plan_ready")
    assert plan_event.plan == plan  # the preamble before step 1 is dropped
    calls = [e for e in events if isinstance(e, ToolEvent)]
    assert [c.tool for c in calls] == ["todo", "scratchpad"] and all(c.success for c in calls)
    assert "1. [ ] compare" in calls[0].result
    started = [e for e in events if isinstance(e, ToolStarted)]
    assert [s.call_id for s in started] == [c.call_id for c in calls]
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    roles = [(m.role, m.is_plan) for m in stored.messages]
    assert roles == [
        ("user", False),
        ("assistant", True),
        ("assistant", False),
        ("tool", False),
        ("tool", False),
        ("assistant", False),
    ]
    assert stored.messages[3].metadata["status"] == "ok" and stored.messages[3].metadata["duration_ms"] >= 0
    assert stored.planning_logs[0]["decision"] == "plan"
    assert stored.planning_logs[0]["raw"].startswith("Here is my plan:")
    second = script.of_kind("turn")[1].messages
    # The plan reaches the model right after its request, as a note in the user's turn: never in the
    # system message (before the tools, it would move the cached prefix) nor as a (prefill)
    # assistant message.
    assert [m.role for m in second].count("system") == 1 and plan not in (second[0].content or "")
    # (The adapters merge it into the request's user message, as chat templates want.)
    assert second[1].role == "user" and second[2].role == "assistant"
    assert second[1].content == f"Compare A and B and tell me which to buy\n\n{PLAN_HEADING}\n{plan}"
    assert not any(m.role == "assistant" and plan in (m.content or "") for m in second)
    assert [m.content for m in second if m.role == "tool"][1].startswith("Section 'findings'")
    await rt.aclose()


async def test_subagent(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path)
    script.turn(
        Reply(tool_calls=[ScriptedCall("spawn_agent", {"task": "List two facts about Oslo."})]),
        # the subagent's own turns:
        Reply(
            thinking="Track it in my own list.",
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["find facts"]})],
        ),
        Reply(thinking="Done.", text="Oslo is Norway's capital; it hosts the Nobel Peace Prize."),
        # back in the parent:
        Reply(text="Here are the facts from my helper."),
    )
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Research Oslo with a helper"))
    assert types(events) == [
        "tool_started",
        "turn_thinking",
        "tool_started",
        "tool_call",
        "turn_thinking",
        "tool_call",
        "stream_delta",
        "stream_end",
    ]
    spawn_started, sub_started = [e for e in events if isinstance(e, ToolStarted)]
    assert (spawn_started.tool, spawn_started.is_subagent) == ("spawn_agent", False)
    assert (sub_started.tool, sub_started.is_subagent) == ("todo", True)
    thinking = [e for e in events if isinstance(e, TurnThinking)]
    assert all(t.is_subagent for t in thinking) and thinking[0].thinking == "Track it in my own list."
    spawn_done = [e for e in events if isinstance(e, ToolEvent)][-1]
    assert spawn_done.tool == "spawn_agent" and not spawn_done.is_subagent
    assert spawn_done.result == "Oslo is Norway's capital; it hosts the Nobel Peace Prize."
    # The subagent saw only its brief, and its scratch state is gone with it.
    sub_request = script.of_kind("turn")[1]
    assert [m.role for m in sub_request.messages] == ["system", "user"]
    assert sub_request.messages[1].content == "List two facts about Oslo."
    assert rt.state.sessions() == []
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    assert [m.role for m in stored.messages] == ["user", "assistant", "tool", "assistant"]  # no subagent rows
    await rt.aclose()


async def test_profile_switch(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    script.turn(
        Reply(
            tool_calls=[ScriptedCall("switch_profile", {"profile_id": "server_admin", "reason": "ops work"})]
        ),
        Reply(text="Switched; checking the server now."),
    )
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "Now help me with my web server"))
    assert types(events) == ["tool_started", "profile_switched", "tool_call", "stream_delta", "stream_end"]
    switched = next(e for e in events if isinstance(e, ProfileSwitched))
    assert (switched.profile_id, switched.profile_name) == ("server_admin", "Server Administrator")
    turns = script.of_kind("turn")
    assert "Mode: personal secretary" in turns[0].system_text
    assert "Mode: server administrator" in turns[1].system_text  # the next call uses the new profile
    stored = await rt.sessions.get(session.id)
    assert stored is not None and stored.profile_id == "server_admin"
    # The following turn starts in the new profile too.
    script.turn("Still the admin.")
    await collect(rt.agent.run_stream(session.id, "and now?"))
    assert "Mode: server administrator" in script.of_kind("turn")[-1].system_text
    await rt.aclose()


async def test_naming_happens_once_and_respects_a_user_name(tmp_path: Path) -> None:
    rt, backend, script = await scripted_runtime(tmp_path)
    first = await rt.sessions.create("secretary")
    script.turn("one", "two")
    await collect(rt.agent.run_stream(first.id, "Plan a trip to Bergen"))
    await rt.agent.settle()
    script.title = "Something else"
    await collect(rt.agent.run_stream(first.id, "And the hotel?"))
    await rt.agent.settle()
    assert (await rt.sessions.get(first.id)).name == "Scripted title"
    assert len(script.of_kind("naming")) == 1
    named = await rt.sessions.create("secretary", name="My own name")
    script.turn("three")
    await collect(rt.agent.run_stream(named.id, "hi"))
    await rt.agent.settle()
    assert (await rt.sessions.get(named.id)).name == "My own name"
    await rt.aclose()


async def test_a_failing_planning_call_is_logged_and_the_turn_goes_on(tmp_path: Path) -> None:
    from navi.llm.errors import BackendTimeout

    rt, backend, script = await scripted_runtime(tmp_path)
    script.plan(Reply(exception=BackendTimeout("Ollama did not answer within 300s")), "no numbers here")
    script.turn("answer one", "answer two")
    session = await rt.sessions.create("secretary")
    events = await collect(rt.agent.run_stream(session.id, "first"))
    assert types(events) == ["stream_delta", "stream_end"]
    await collect(rt.agent.run_stream(session.id, "second"))
    stored = await rt.sessions.get(session.id)
    assert [e["decision"] for e in stored.planning_logs] == ["error", "malformed"]
    assert "did not answer" in stored.planning_logs[0]["error"]
    assert not any(m.is_plan for m in stored.messages)
    await rt.aclose()


async def test_the_planning_call_is_read_only_until_it_is_decided(tmp_path: Path) -> None:
    """A small model's planning reply often goes on after DIRECT, or repeats the instructions back
    up to its token cap; on a CPU that is seconds before the answer starts. Navi stops reading (and
    the server generating) once DIRECT has come, or once EARLY_CHARS have come with neither DIRECT
    nor a numbered step. A real plan is read to its end."""
    from navi.agent.planning import EARLY_CHARS

    rt, backend, script = await scripted_runtime(tmp_path, sql=True)
    rambling = "You are the planning step of an agent. Read the conversation above and decide. " * 25
    plan = "1. Look it up\n2. " + "Answer in detail " * 30
    script.plan(
        Reply(text="DIRECT. " + "This is a simple greeting, so no plan is needed. " * 20, chunk_chars=4),
        Reply(text=rambling, chunk_chars=4),
        Reply(text=plan, chunk_chars=4),
    )
    script.turn("one", "two", "three")
    session = await rt.sessions.create("secretary")
    for text in ("Hi", "What is the weather?", "Research the weather"):
        events = await collect(rt.agent.run_stream(session.id, text))
        assert isinstance(events[-1], StreamEnd), events[-1]
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    direct, malformed, planned = stored.planning_logs
    assert direct["decision"] == "direct" and len(direct["raw"]) <= 12  # "DIRECT. " and a chunk at most
    assert malformed["decision"] == "malformed"
    assert EARLY_CHARS < len(malformed["raw"]) <= EARLY_CHARS + 4 < len(rambling)
    assert malformed["error"] == f"no DIRECT and no numbered step in its first {EARLY_CHARS} characters"
    assert planned["decision"] == "plan" and planned["plan"] == plan.strip()  # read whole
    assert [m.content for m in stored.messages if m.role == "assistant" and not m.is_plan] == [
        "one",
        "two",
        "three",
    ]
    await rt.aclose()


async def test_a_session_whose_first_answer_was_stopped_is_named_after_its_first_message(
    tmp_path: Path,
) -> None:
    rt, backend, script = await scripted_runtime(tmp_path, planning_enabled=False)
    session = await rt.sessions.create("secretary")
    script.turn(Reply(text="A long answer about the Bergen trip " * 20, chunk_chars=4, delay=0.01), "Yes.")
    stop = asyncio.Event()
    stopped = []
    async for event in rt.agent.run_stream(
        session.id, "Plan a trip to Bergen", control=RunControl(stop_event=stop)
    ):
        stopped.append(event)
        if event.type == "stream_delta":
            stop.set()
    assert isinstance(stopped[-1], StreamStopped)
    await rt.agent.settle()
    assert script.of_kind("naming") == []  # a stopped turn names nothing
    await collect(rt.agent.run_stream(session.id, "Is it rainy there?"))
    await rt.agent.settle()
    [naming] = script.of_kind("naming")
    assert "User: Plan a trip to Bergen" in naming.last_user_text  # the conversation's subject
    assert "Is it rainy" not in naming.last_user_text and "Assistant: Yes." not in naming.last_user_text
    await rt.aclose()
