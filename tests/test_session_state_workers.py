"""A session moved between two workers on one PostgreSQL database continues exactly, and memory
extraction triggered on both at once runs once.

Two runtimes on one PostgreSQL database are two workers: each has its own agent, tools, compressor
and extractor, and shares nothing with the other but the database. A turn on A sets the session's
todo list and scratchpad and takes its memory snapshot; the owner's memory summary is then
rewritten (as extraction on a third worker would); B's next turn reads back what A wrote, and its
model request (recorded by the script both workers' model answers from) carries the same system
message, byte for byte — the snapshot A took, not the summary as it is now.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from navi.agent.compression.summary import note
from navi.llm.messages import utcnow
from navi.storage.schema import session_memory_state
from navi.storage.schema import sessions as sessions_table
from navi.storage.sessions import SqlSessionStore
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import collect, scripted_runtime

pytestmark = pytest.mark.postgres

PLAN = "Friday at 19:00, four people, the Thai place"


@pytest.fixture
async def two(tmp_path: Path, pg_url: str) -> AsyncIterator[tuple[Any, Any, AgentScript]]:
    script = AgentScript()
    made = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        rt, _, _ = await scripted_runtime(
            tmp_path / name, script, sql=True, database_url=pg_url, planning_enabled=False
        )
        assert rt.db is not None and rt.db.dialect == "postgresql"
        made.append(rt)
    try:
        yield made[0], made[1], script
    finally:
        for rt in made:
            await rt.aclose()


async def idle(rt: Any, session_id: str, minutes: int = 45) -> None:
    """Pretend the session has been idle for a while."""
    store = rt.sessions
    assert isinstance(store, SqlSessionStore)
    when = utcnow() - timedelta(minutes=minutes)
    statement = update(sessions_table).where(sessions_table.c.id == session_id).values(last_active=when)
    await store.db.write(lambda conn: conn.execute(statement))


async def test_todo_scratchpad_and_memory_snapshot_written_on_a_are_what_b_sees(
    two: tuple[Any, Any, AgentScript],
) -> None:
    a, b, script = two
    session = await a.sessions.create("secretary")
    await a.memory.set_summary("The user's cat is called Miso.", owner=session.owner)
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall("todo", {"action": "set", "tasks": ["book the table", "order a taxi"]}),
                ScriptedCall("scratchpad", {"action": "write", "section": "plan", "content": PLAN}),
            ]
        ),
        "Noted: two tasks.",
        Reply(
            tool_calls=[
                ScriptedCall("todo", {"action": "update", "index": 1, "status": "done"}),
                ScriptedCall("scratchpad", {"action": "read"}),
            ]
        ),
        "The table is booked; the taxi is next.",
    )
    await collect(a.agent.run_stream(session.id, "Plan dinner on Friday"))
    # Memory is rewritten meanwhile (extraction, elsewhere): the session's prompt keeps its snapshot.
    await b.memory.set_summary("The user's cat is called Rex.", owner=session.owner)
    await collect(b.agent.run_stream(session.id, "I booked it. What is left?"))

    on_a, _, on_b, after_tools = script.of_kind("turn")
    assert on_a.messages[0].role == on_b.messages[0].role == "system"
    assert on_b.messages[0].content == on_a.messages[0].content  # the same bytes: the cache holds
    assert "Miso" in (on_b.messages[0].content or "") and "Rex" not in (on_b.messages[0].content or "")
    results = [m.content or "" for m in after_tools.messages if m.role == "tool"][-2:]
    assert results == [
        "1. [x] book the table\n2. [ ] order a taxi\n(1/2 done)",  # A's list, updated on B
        f"## plan\n{PLAN}",  # A's notes, read on B
    ]
    # What B's turn left is what A's next one reads: the state is the session's, not a worker's.
    assert await a.state.shared.get(session.id, "todo") == [
        {"title": "book the table", "status": "done"},
        {"title": "order a taxi", "status": "pending"},
    ]
    # So is what compression learnt about the session (here: its model writes no usable summary).
    assert not await b.agent.compressor.unsummarisable(session.id)
    await note(a.agent.compressor.state.shared, session.id, unsummarisable=True)
    assert await b.agent.compressor.unsummarisable(session.id)
    # The state goes with the session.
    assert await b.sessions.delete(session.id)
    assert await a.state.shared.get(session.id, "scratchpad") is None


async def test_extraction_triggered_on_both_workers_at_once_runs_once(
    two: tuple[Any, Any, AgentScript],
) -> None:
    a, b, script = two
    script.turn("Nice to meet Miso!", "A dog too!")
    session = await a.sessions.create("secretary")
    await collect(a.agent.run_stream(session.id, "My cat is called Miso."))
    await idle(a, session.id)
    release = asyncio.Event()
    script.extract(Reply(text="pets: cat = Miso", wait_for=release))

    async def hold_the_first_extraction() -> None:
        for _ in range(500):  # one worker's extraction is under way (and waits for `release`)
            if script.of_kind("extract"):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # the other worker's pass runs meanwhile
        release.set()

    on_a, on_b, _ = await asyncio.gather(
        a.extractor.run_pending(), b.extractor.run_pending(), hold_the_first_extraction()
    )
    assert sorted([on_a.sessions, on_b.sessions]) == [0, 1] and on_a.failed == on_b.failed == []
    assert len(script.of_kind("extract")) == 1
    (fact,) = await a.memory.get_all_facts(owner=session.owner)
    assert (fact.key, fact.value, fact.confirmations) == ("cat", "Miso", 1)

    # Due again (as after a clock or activity change), but no message is new: nobody reads it.
    long_ago = utcnow() - timedelta(days=1)
    statement = (
        update(session_memory_state)
        .where(session_memory_state.c.session_id == session.id)
        .values(extracted_at=long_ago)
    )
    await a.db.write(lambda conn: conn.execute(statement))
    again = await asyncio.gather(a.extractor.run_pending(), b.extractor.run_pending())
    assert [r.sessions for r in again] == [0, 0] and len(script.of_kind("extract")) == 1

    # A new message, on B: only it is read, by one of them.
    await collect(b.agent.run_stream(session.id, "I also have a dog called Bamse."))
    await idle(b, session.id)
    script.extract("pets: dog = Bamse")
    later = await asyncio.gather(a.extractor.run_pending(), b.extractor.run_pending())
    assert sorted(r.sessions for r in later) == [0, 1]
    read = script.of_kind("extract")[-1].last_user_text
    assert "Bamse" in read and "My cat is called Miso." not in read
    assert len(script.of_kind("extract")) == 2
    facts = {f.key: f.confirmations for f in await b.memory.get_all_facts(owner=session.owner)}
    assert facts == {"cat": 1, "dog": 1}  # Miso was not read twice, so not "confirmed" by it
