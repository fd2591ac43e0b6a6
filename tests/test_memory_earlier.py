"""Earlier sessions as memory: `memory_search` finds what was said only in an earlier session's
summary, with the session's name, the day it was said and a link (session and message ids) that
`recall` reads; and a fact's source message (navi/memory/earlier.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from navi import runctx
from navi.llm.messages import Message
from navi.memory.base import Fact
from navi.memory.earlier import fact_source, search_summaries
from navi.memory.in_memory import InMemoryMemoryStore
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.models import Session, new_session_id
from navi.sessions.store import SessionStore
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.sessions import SqlSessionStore
from navi.tools.builtin.memory import MemorySearchTool
from navi.tools.builtin.recall import RecallTool

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
SAID = datetime(2026, 3, 3, 18, 30, tzinfo=UTC)
SUMMARISED = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)


@pytest.fixture(params=STORES)
async def sessions(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    if request.param == "memory":
        store: SessionStore = InMemorySessionStore()
    elif request.param == "sqlite":
        store = SqlSessionStore.at(sqlite_url(tmp_path / "s.db"))
    else:
        store = SqlSessionStore.at(postgres_url(request.getfixturevalue("pg_url")))
    await store.open()
    try:
        yield store
    finally:
        await store.aclose()


def compressed(name: str, said: str, summary: str, *, owner: str = "local") -> tuple[Session, Message]:
    """A session whose context holds only a summary; the display history keeps what was said."""
    spoken = Message.user(said, created_at=SAID)
    answer = Message.assistant("Noted, enjoy the trip.", created_at=SAID)
    marker = Message.assistant("Context compressed.", is_compression=True, created_at=SUMMARISED)
    note = Message.user(
        f"[Summary of the earlier conversation]\n{summary}", is_summary=True, created_at=SUMMARISED
    )
    session = Session(
        id=new_session_id(),
        owner=owner,
        profile_id="general",
        name=name,
        messages=[spoken, answer, marker],
        context=[note],
        created_at=SAID,
        last_active=SUMMARISED,
    )
    return session, spoken


async def test_memory_search_finds_what_only_an_earlier_summary_holds(sessions: SessionStore) -> None:
    session, spoken = compressed(
        "Trip to Porto",
        "We land in Porto on Friday; book the table at Cantinho do Avillez for the two of us.",
        "- The user travels to Porto on Friday.\n- Table booked at Cantinho do Avillez for two.",
    )
    await sessions.insert(session)
    # Another user's summary says the same words: never found for this one.
    theirs, _ = compressed(
        "Their trip", "Cantinho do Avillez, Porto", "- Cantinho do Avillez in Porto.", owner="bob"
    )
    await sessions.insert(theirs)
    current = Session(id=new_session_id(), profile_id="general", name="Now")
    await sessions.insert(current)
    tool = MemorySearchTool(InMemoryMemoryStore(), sessions)  # no fact about it at all
    with runctx.using(runctx.RunContext(session_id=current.id)):
        found = await tool.execute({"query": "which restaurant in Porto"})
        assert found.success
        assert "remembered fact" not in found.output
        assert (
            "in the session 'Trip to Porto' on 3 March 2026 you said: “We land in Porto on Friday; book the "
            "table at Cantinho do Avillez for the two of us.” — its summary: "
        ) in found.output
        assert "Table booked at Cantinho do Avillez for two." in found.output
        assert f"session {session.id}, message {spoken.id}" in found.output
        assert theirs.id not in found.output
        # The link's key reads the message itself.
        recall = RecallTool(sessions)
        recalled = await recall.execute({"key": f"msg_{spoken.id}"})
        assert recalled.success and "book the table at Cantinho do Avillez" in recalled.output
        # And the whole summary, under the session's key.
        assert f"recall key session_{session.id}" in found.output
        whole = await recall.execute({"key": f"session_{session.id}"})
        assert whole.success
        assert (
            "In the session 'Trip to Porto' (3 March 2026 to 9 March 2026), what was said, summarised:\n"
            in (whole.output)
        )
        assert "- The user travels to Porto on Friday." in whole.output
        assert "[Summary of" not in whole.output
        for key in (f"session_{theirs.id}", f"session_{current.id}", "session_not-an-id"):
            assert not (await recall.execute({"key": key})).success, key  # bob's; never compressed; no id
        nothing = await tool.execute({"query": "bicycle"})
        assert "Nothing remembered" in nothing.output
    # The session a run works in is not an "earlier" one.
    with runctx.using(runctx.RunContext(session_id=session.id)):
        assert "Trip to Porto" not in (await tool.execute({"query": "Cantinho Porto"})).output


async def test_a_summary_without_a_matching_message_links_its_compression(sessions: SessionStore) -> None:
    session, _ = compressed(
        "Plans", "Let us talk about next week.", "- The user's sister Ana visits on Monday."
    )
    await sessions.insert(session)
    hits = await search_summaries(sessions, "sister Ana", owner="local")
    assert [(h.session_name, h.message_id, h.day) for h in hits] == [
        ("Plans", session.messages[-1].id, SUMMARISED)
    ]
    assert hits[0].said is None  # nothing the person said matches: no "you said"
    assert (
        hits[0]
        .line()
        .startswith(
            "- in the session 'Plans' (summarised on 9 March 2026), its summary: "
            "- The user's sister Ana visits"
        )
    )
    assert await search_summaries(sessions, "sister Ana", owner="bob") == []


async def test_a_facts_source_is_the_message_that_said_it(sessions: SessionStore) -> None:
    session, spoken = compressed("Trip to Porto", "I moved to Porto last spring.", "- Lives in Porto.")
    await sessions.insert(session)
    fact = Fact(id=1, category="location", key="home_city", value="Porto", session_id=session.id)
    source = await fact_source(sessions, fact, owner="local")
    assert source is not None
    assert (source.session_name, source.message_id, source.created_at) == ("Trip to Porto", spoken.id, SAID)
    assert source.text == "I moved to Porto last spring."
    assert await fact_source(sessions, fact, owner="bob") is None  # another user's session
    assert await fact_source(sessions, fact.model_copy(update={"session_id": None}), owner="local") is None
    unsaid = await fact_source(sessions, fact.model_copy(update={"value": "Lisbon"}), owner="local")
    assert unsaid is not None and unsaid.message_id is None and unsaid.session_id == session.id


async def test_the_store_gives_each_sessions_newest_summary(sessions: SessionStore) -> None:
    older, _ = compressed("Older", "one", "- the first summary")
    older.context.append(Message.user("[Summary of the earlier conversation]\n- the second", is_summary=True))
    older.last_active = datetime(2026, 3, 10, tzinfo=UTC)
    newer, _ = compressed("Newer", "two", "- the newer session's summary")
    newer.last_active = datetime(2026, 3, 11, tzinfo=UTC)
    # A message that only talks about the flag is no summary; another user's summary is not theirs.
    lookalike = Session(
        id=new_session_id(), profile_id="general", context=[Message.user('{"is_summary":true} is JSON')]
    )
    theirs, _ = compressed("Theirs", "three", "- bob's", owner="bob")
    for session in (older, newer, lookalike, theirs):
        await sessions.insert(session)
    got = await sessions.summaries(owner="local", limit=10)
    assert [(info.name, (msg.content or "").split("\n")[-1]) for info, msg in got] == [
        ("Newer", "- the newer session's summary"),
        ("Older", "- the second"),
    ]
    assert [info.name for info, _ in await sessions.summaries(owner="local", limit=1)] == ["Newer"]
    assert [info.name for info, _ in await sessions.summaries(owner="bob", limit=10)] == ["Theirs"]


async def test_through_the_agent_a_new_session_finds_what_a_compressed_one_said(tmp_path: Path) -> None:
    """The runtime's memory_search reads its session store: after a real compression, a new
    session's turn finds the earlier session's summary with its name and a link."""
    from navi.testing.script import Reply, ScriptedCall
    from tests.agent_helpers import collect, scripted_runtime

    rt, _, script = await scripted_runtime(tmp_path, sql=True, ollama_num_ctx=16384, context_keep_recent=2)
    trip = await rt.sessions.create("secretary", name="Trip to Porto")
    old: list[Message] = []
    for i in range(8):
        said = "Book us a table at Cantinho do Avillez in Porto." if i == 0 else f"Question {i} on topic {i}?"
        old += [Message.user(said), Message.assistant(f"Answer {i}.")]
    await rt.sessions.append(trip.id, display=old, context=old, context_token_count=15000)
    script.summary("- A table for two was booked at Cantinho do Avillez in Porto.")
    script.extract("")
    script.turn(Reply(text="Noted."))
    await collect(rt.agent.run_stream(trip.id, "And topic 9?"))
    await rt.agent.settle()
    assert await rt.memory.get_all_facts() == []  # no fact: only the summary holds it

    now = await rt.sessions.create("secretary", name="Dinner")
    script.turn(
        Reply(tool_calls=[ScriptedCall("memory_search", {"query": "Avillez restaurant"})]),
        Reply(text="Cantinho do Avillez."),
    )
    await collect(rt.agent.run_stream(now.id, "Where did I book dinner in Porto?"))
    stored = await rt.sessions.get(now.id)
    assert stored is not None
    (result,) = [m.content or "" for m in stored.messages if m.role == "tool"]
    day = old[0].created_at
    assert f"in the session 'Trip to Porto' on {day.day} {day:%B %Y} you said: “{old[0].content}”" in result
    assert "A table for two was booked at Cantinho do Avillez in Porto." in result
    assert f"session {trip.id}, message {old[0].id}" in result
    await rt.aclose()
