"""Prompts laid out for a model server's prompt cache: every model call of a session sends the
previous call's whole prompt — system message, tools in their order, messages — as its exact prefix,
so the server reads only what came since. Plans and notes never go into the system message."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from navi.agent.context import PLAN_HEADING
from navi.llm.messages import Message
from navi.sessions.models import DEFAULT_OWNER
from navi.testing.agent_script import PLANNING_MARK
from navi.testing.script import Reply, ScriptedCall, ScriptRequest
from tests.agent_helpers import collect, scripted_runtime


def key(msg: Message) -> tuple[Any, ...]:
    """What a template renders of a message (ids and timestamps are never sent)."""
    calls = [(c.name, c.arguments) for c in msg.tool_calls or []]
    return (msg.role, msg.content, calls, msg.tool_call_id, list(msg.images or []))


def assert_extends(earlier: ScriptRequest, later: ScriptRequest) -> None:
    """`later` starts with the whole of `earlier`: tools (in order) and messages."""
    assert later.tools[: len(earlier.tools)] == earlier.tools, (earlier.tools, later.tools)
    before = [key(m) for m in earlier.messages]
    after = [key(m) for m in later.messages]
    assert len(after) > len(before)
    assert after[: len(before)] == before, next(
        (i, b, a) for i, (b, a) in enumerate(zip(before, after, strict=False)) if b != a
    )


async def test_each_call_extends_the_previous_one_across_turns(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["pack"]})]),
        "Your list has one task.",
    )
    script.turn("You're welcome.")
    script.turn("It is on the list.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Make me a packing list"))
    await collect(rt.agent.run_stream(session.id, "Thanks"))
    await collect(rt.agent.run_stream(session.id, "Is the passport on it?"))
    turns = script.of_kind("turn")
    assert len(turns) == 4
    for earlier, later in pairwise(turns):
        assert_extends(earlier, later)
    assert len({t.messages[0].content for t in turns}) == 1  # the system message never changes
    await rt.aclose()


async def test_a_planned_turn_then_an_unplanned_one_keep_the_prefix(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path)
    plan = "1. Write the list with todo\n2. Answer"
    script.plan(plan, "DIRECT")
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["pack"]})]),
        "Done: one task.",
    )
    script.turn("You're welcome.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Make me a packing list"))
    await collect(rt.agent.run_stream(session.id, "Thanks"))
    assert len(script.of_kind("planning")) == 2
    turns = script.of_kind("turn")
    assert len(turns) == 3
    assert PLAN_HEADING in (turns[0].messages[-1].content or "")  # the plan follows its request…
    assert plan not in (turns[0].messages[0].content or "")  # …never in the system message
    for earlier, later in pairwise(turns):
        assert_extends(earlier, later)
    # The unplanned turn still carries the earlier plan where it was: the prefix is untouched.
    assert any(PLAN_HEADING in (m.content or "") for m in turns[2].messages)
    await rt.aclose()


async def test_a_tool_loaded_later_is_appended_after_the_tools_sent_before(tmp_path: Path) -> None:
    """A later request's keywords leave the tools as they were (they come before the conversation
    in the prompt); the model's load of a listed tool appends it."""
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    script.turn("Hello.")
    script.turn(Reply(tool_calls=[ScriptedCall("load_tools", {"names": ["terminal"]})]), "Loaded it.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hi"))
    await collect(rt.agent.run_stream(session.id, "Run the command uptime"))
    first, second, third = script.of_kind("turn")
    assert_extends(first, second)
    assert second.tools == first.tools and "terminal" not in first.tools
    assert third.tools == [*first.tools, "terminal"]
    await rt.aclose()


async def test_the_planning_call_is_the_answer_call_plus_its_instruction(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path)
    script.plan("DIRECT", "DIRECT")
    script.turn("Hello!", "Fine, thanks.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hi"))
    await collect(rt.agent.run_stream(session.id, "How are you?"))
    plans, turns = script.of_kind("planning"), script.of_kind("turn")
    assert len(plans) == 2 and len(turns) == 2
    for planning, answer in zip(plans, turns, strict=True):
        # The same system message and conversation; the instruction joins the user's turn at the end.
        assert [key(m) for m in planning.messages[:-1]] == [key(m) for m in answer.messages[:-1]]
        request, instruction = (planning.messages[-1].content or "").split("\n\n", 1)
        assert request == answer.messages[-1].content and instruction.startswith(PLANNING_MARK)
        assert planning.tools == []
    # The second planning call re-sends the first one's conversation as it was (no rewritten transcript).
    first = [key(m) for m in plans[0].messages[:-1]]
    assert [key(m) for m in plans[1].messages[: len(first)]] == first
    await rt.aclose()


async def test_the_memory_summary_is_frozen_for_the_session(tmp_path: Path) -> None:
    """Memory rewritten mid-session (extraction from another session) does not move the prompt's
    prefix; the next session gets it."""
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    await rt.memory.set_summary("Lives in Oslo.")
    script.turn("Hi.", "Sure.", "Hello again.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Hi"))
    await rt.memory.set_summary("Lives in Bergen.")
    await collect(rt.agent.run_stream(session.id, "Where do I live?"))
    other = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(other.id, "Hello"))
    first, second, third = script.of_kind("turn")
    assert "Lives in Oslo." in (first.messages[0].content or "")
    assert_extends(first, second)
    assert "Lives in Bergen." in (third.messages[0].content or "")
    await rt.aclose()


async def test_the_summary_is_read_again_after_the_session_changed_memory(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False)
    await rt.memory.upsert_fact("personal", "home_city", "Oslo")
    await rt.memory.set_summary("Lives in Oslo.")
    script.turn(
        Reply(tool_calls=[ScriptedCall("memory_forget", {"key": "home_city"})]),
        "Forgotten.",
    )
    script.turn("Noted.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Forget where I live"))
    await rt.agent.settle()  # memory_forget ran: the summary's rewrite (in the background) is done
    await rt.memory.set_summary("Nothing remembered yet.")  # what the rewrite after forgetting gives
    await collect(rt.agent.run_stream(session.id, "Thanks"))
    turns = script.of_kind("turn")
    assert "Lives in Oslo." in (turns[0].messages[0].content or "")
    assert "Lives in Oslo." not in (turns[-1].messages[0].content or "")
    assert "Nothing remembered yet." in (turns[-1].messages[0].content or "")
    await rt.aclose()


@pytest.mark.parametrize("sql", [False, True], ids=["memory", "sqlite"])
async def test_forgetting_the_last_fact_takes_it_out_of_the_summary(tmp_path: Path, sql: bool) -> None:
    """The rewrite after `memory_forget` left the old summary in place when no fact was left, so the next
    turn's system prompt still told the model what the user had it forget. And a next turn that
    began before the rewrite (in the background) was done read the old summary and kept it for
    the session: the rewrite here is slowed down so that it always would."""
    rt, _, script = await scripted_runtime(tmp_path, planning_enabled=False, sql=sql)
    await rt.memory.upsert_fact("personal", "home_city", "Oslo")
    await rt.extractor.refresh_summary(DEFAULT_OWNER)
    assert "Oslo" in (await rt.memory.get_summary() or "")
    write = rt.memory.set_summary

    async def slow_write(content: str, *, owner: str = DEFAULT_OWNER) -> None:
        await asyncio.sleep(0.3)
        await write(content, owner=owner)

    rt.memory.set_summary = slow_write  # type: ignore[method-assign]
    script.turn(Reply(tool_calls=[ScriptedCall("memory_forget", {"key": "home_city"})]), "Forgotten.")
    script.turn("Noted.")
    session = await rt.sessions.create("secretary")
    await collect(rt.agent.run_stream(session.id, "Forget where I live"))
    await collect(rt.agent.run_stream(session.id, "Thanks"))
    turns = script.of_kind("turn")
    assert "Oslo" in (turns[0].messages[0].content or "")
    assert "Oslo" not in (turns[-1].messages[0].content or "")
    assert not await rt.memory.get_summary()
    await rt.aclose()


def test_the_scripts_know_how_a_plan_note_starts() -> None:
    from navi.testing.agent_script import PLAN_MARK

    assert PLAN_HEADING.startswith(PLAN_MARK)
