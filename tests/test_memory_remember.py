"""`remember` and `memory_forget` through the agent loop (scripted model, real SQLite stores)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from navi.agent.events import ToolEvent
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import collect, scripted_runtime


async def turn(
    rt: Any, session_id: str, said: str, *calls: ScriptedCall, answer: str = "Done."
) -> list[ToolEvent]:
    rt.backends.get("ollama").script.turn(Reply(tool_calls=list(calls)), answer)
    events = await collect(rt.agent.run_stream(session_id, said))
    await rt.agent.settle()  # the summary is rewritten in the background
    return [e for e in events if isinstance(e, ToolEvent)]


def remember(value: str) -> ScriptedCall:
    return ScriptedCall("remember", {"category": "location", "key": "home city", "value": value})


async def test_remember_now_and_a_move_is_answered_in_a_new_session(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, sql=True)
    first = await rt.sessions.create(rt.profiles.default_id)
    (card,) = await turn(rt, first.id, "Remember that I live in Lisbon.", remember("Lisbon"))
    assert card.tool == "remember" and card.success
    asked = script.of_kind("turn")[0]
    assert {"remember", "memory_search"} <= set(asked.tools)  # named in the message, and likely
    assert "memory_forget" in asked.tools or "\n- memory_forget: " in asked.system_text  # sent, or listed
    assert "forget" not in asked.tools and "\n- forget: " not in asked.system_text  # one name only
    assert card.result == "Remembered: location: home_city = Lisbon"
    (fact,) = await rt.memory.get_all_facts()
    assert (fact.value, fact.source, fact.session_id) == ("Lisbon", "remembered", first.id)
    assert "Lisbon" in (await rt.memory.get_summary() or "")  # stored at once, not when idle
    # A new session: the memory it starts with and memory_search both know it.
    second = await rt.sessions.create("secretary")
    (found,) = await turn(
        rt, second.id, "Where do I live?", ScriptedCall("memory_search", {"query": "home city"})
    )
    assert "location: home_city = Lisbon" in found.result
    assert "Lisbon" in script.of_kind("turn")[-2].system_text.split("## What I remember about the user")[1]
    # The move: Porto replaces Lisbon, which stays as history.
    (moved,) = await turn(rt, second.id, "I moved to Porto last month, remember that.", remember("Porto"))
    assert moved.success and moved.result == "Remembered: location: home_city = Porto (was: Lisbon)"
    (now,) = await rt.memory.get_all_facts()
    assert (now.id, now.value, now.session_id) == (fact.id, "Porto", second.id)
    assert [f.value for f in await rt.memory.fact_history(fact.id, owner="local")] == ["Lisbon"]
    # A third session is told Porto, and not Lisbon.
    third = await rt.sessions.create("secretary")
    (found,) = await turn(
        rt,
        third.id,
        "Which city do I live in?",
        ScriptedCall("memory_search", {"query": "where do I live city"}),
        answer="You live in Porto.",
    )
    assert "home_city = Porto" in found.result and "Lisbon" not in found.result
    told = script.of_kind("turn")[-2].system_text.split("## What I remember about the user")[1]
    assert "Porto" in told and "Lisbon" not in told
    await rt.aclose()


async def test_remembering_the_same_again_is_a_confirmation(tmp_path: Path) -> None:
    rt, _, _ = await scripted_runtime(tmp_path, sql=True)
    session = await rt.sessions.create("secretary")
    await turn(rt, session.id, "Remember: I live in Lisbon.", remember("Lisbon"))
    (again,) = await turn(rt, session.id, "Again: I live in lisbon.", remember("lisbon"))
    assert again.success and again.result == "Already remembered: location: home_city = Lisbon"
    (fact,) = await rt.memory.get_all_facts()
    assert fact.confirmations == 2 and await rt.memory.fact_history(fact.id, owner="local") == []
    await rt.aclose()


async def test_forget_retires_the_fact(tmp_path: Path) -> None:
    rt, _, script = await scripted_runtime(tmp_path, sql=True)
    session = await rt.sessions.create("secretary")
    await turn(rt, session.id, "Remember that I live in Lisbon.", remember("Lisbon"))
    (card,) = await turn(
        rt, session.id, "Forget where I live.", ScriptedCall("memory_forget", {"key": "home_city"})
    )
    assert card.tool == "memory_forget" and card.success and "location: home_city = Lisbon" in card.result
    assert await rt.memory.get_all_facts() == [] and await rt.memory.search_facts("Lisbon") == []
    (kept,) = await rt.memory.search_facts("Lisbon", history=True)
    assert not kept.current
    (none,) = await turn(rt, session.id, "Forget it again.", ScriptedCall("forget", {"key": "home_city"}))
    assert not none.success and "no remembered fact" in none.result
    await rt.aclose()


async def test_remember_stores_only_the_persons_own_words(tmp_path: Path) -> None:
    """Text the model read (or made up) cannot become a memory by being 'remembered'."""
    rt, _, _ = await scripted_runtime(tmp_path, sql=True)
    session = await rt.sessions.create("secretary")
    call = ScriptedCall("remember", {"category": "identity", "key": "name", "value": "Mallory"})
    (card,) = await turn(rt, session.id, "Remember what that page said about me.", call)
    assert not card.success and "own words" in card.result
    assert await rt.memory.get_all_facts() == []
    await rt.aclose()


async def test_a_call_by_the_former_name_forget_still_forgets(tmp_path: Path) -> None:
    """`forget` was `memory_forget`'s name for a while: a model (or a stored session) that calls it
    by that name reaches the same tool, though the model is offered only `memory_forget`."""
    rt, _, script = await scripted_runtime(tmp_path, sql=True)
    session = await rt.sessions.create("secretary")
    await turn(rt, session.id, "Remember that I live in Lisbon.", remember("Lisbon"))
    (card,) = await turn(rt, session.id, "Forget where I live.", ScriptedCall("forget", {"key": "home_city"}))
    assert card.success and "location: home_city = Lisbon" in card.result
    assert await rt.memory.get_all_facts() == []
    asked = script.of_kind("turn")[-2]
    assert "forget" not in asked.tools and "\n- forget: " not in asked.system_text
    await rt.aclose()
