"""One contract, three stores: in memory, SQLite and a real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import event

from navi.llm.messages import Message, ToolCall
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.models import Session, new_session_id
from navi.sessions.store import SessionChange, SessionExists, SessionNotFound, SessionStore
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.sessions import SqlSessionStore

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=STORES)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    files = tmp_path / "files"
    kind = request.param
    if kind == "memory":
        s: SessionStore = InMemorySessionStore(files_dir=str(files))
    elif kind == "sqlite":
        s = SqlSessionStore.at(sqlite_url(tmp_path / "navi.db"), str(files))
    else:
        s = SqlSessionStore.at(postgres_url(request.getfixturevalue("pg_url")), str(files))
    await s.open()
    try:
        yield s
    finally:
        await s.aclose()


def rich_messages() -> list[Message]:
    call = ToolCall(name="web_search", arguments={"query": "ß & ünïcode ✓"})
    bad = ToolCall.from_raw("todo", "{oops")
    return [
        Message.user("Look at this", images=["iVBORw0KGgo="]),
        Message.assistant(
            "Planning", is_plan=True, thinking="first think", thinking_signature="sig", tool_calls=[call, bad]
        ),
        Message.tool(
            "results…", tool_call_id=call.id, name="web_search", metadata={"status": "ok", "duration_ms": 12}
        ),
        Message.user("Summary of earlier turns", is_summary=True),
        Message.assistant("[context compressed]", is_compression=True, stopped=True),
    ]


async def test_create_and_get(store: SessionStore) -> None:
    created = await store.create("secretary")
    got = await store.get(created.id)
    assert got is not None
    assert got.id == created.id and got.profile_id == "secretary" and got.owner == "local"
    assert got.messages == [] and got.context == [] and got.planning_logs == []
    assert got.pinned is False and got.name is None and got.context_token_count == 0
    assert got.created_at.tzinfo is not None and got.created_at.utcoffset() == timedelta(0)
    assert abs((got.created_at - created.created_at).total_seconds()) < 1


async def test_create_with_a_chosen_id(store: SessionStore) -> None:
    chosen = "0a1b2c3d-0000-4000-8000-00000000beef"
    made = await store.create("smart_home", owner="alice", session_id=chosen)
    assert made.id == chosen
    got = await store.get(chosen, owner="alice")
    assert got is not None and (got.owner, got.profile_id, got.messages) == ("alice", "smart_home", [])
    for owner in ("alice", "bob"):  # a taken id is never created again, whoever asks
        with pytest.raises(SessionExists):
            await store.create("secretary", owner=owner, session_id=chosen)
    assert (await store.get(chosen)).owner == "alice"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="not a session id"):
        await store.create("secretary", session_id="../etc")
    assert [s.id for s in await store.list()] == [chosen]


async def test_messages_round_trip_exactly(store: SessionStore) -> None:
    session = await store.create("secretary")
    msgs = rich_messages()
    await store.append(session.id, display=msgs, context=msgs[:3], context_token_count=321)
    got = await store.get(session.id)
    assert got is not None
    assert got.messages == msgs
    assert got.context == msgs[:3]
    assert got.context_token_count == 321
    assert got.message_count == 5
    assert got.messages[1].created_at.tzinfo is not None


async def test_buffers_append_independently_and_in_order(store: SessionStore) -> None:
    session = await store.create("secretary")
    await store.append(session.id, display=[Message.user("u1")], context=[Message.user("u1")])
    await store.append(session.id, context=[Message.user("[image for the model]", images=["abc"])])
    await store.append(session.id, display=[Message.assistant("a1"), Message.assistant("a2")])
    got = await store.get(session.id)
    assert got is not None
    assert [m.content for m in got.messages] == ["u1", "a1", "a2"]
    assert [m.content for m in got.context] == ["u1", "[image for the model]"]
    lean = await store.get(session.id, display=False)
    assert lean is not None and lean.messages == [] and len(lean.context) == 2


async def test_unknown_sessions(store: SessionStore) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    assert await store.get(missing) is None
    assert await store.get("../../etc/passwd") is None
    with pytest.raises(SessionNotFound):
        await store.append(missing, display=[Message.user("x")])
    with pytest.raises(SessionNotFound):
        await store.replace_context(missing, [], context_token_count=0)
    with pytest.raises(SessionNotFound):
        await store.add_planning_log(missing, {"raw": "x"})
    with pytest.raises(SessionNotFound):
        await store.set_context_tokens(missing, 5)
    assert await store.set_pinned(missing, True) is False
    assert await store.set_name(missing, "x") is False
    assert await store.set_profile(missing, "smart_home") is False
    assert await store.delete(missing) is False


async def test_listing_order(store: SessionStore) -> None:
    a = await store.create("secretary", name="a")
    b = await store.create("secretary", name="b")
    await store.create("secretary", name="c")
    await asyncio.sleep(0.01)
    await store.append(a.id, display=[Message.user("newest activity")])
    assert [s.name for s in await store.list()] == ["a", "c", "b"]
    assert await store.set_pinned(b.id, True)
    listed = await store.list()
    assert [s.name for s in listed] == ["b", "a", "c"]
    assert listed[0].pinned is True
    assert listed[1].message_count == 1


async def test_rename_pin_and_profile(store: SessionStore) -> None:
    s = await store.create("secretary")
    assert await store.set_name(s.id, "Trip to Oslo")
    assert await store.set_pinned(s.id, True)
    assert await store.set_profile(s.id, "server_admin")
    got = await store.get(s.id)
    assert got is not None and (got.name, got.pinned, got.profile_id) == (
        "Trip to Oslo",
        True,
        "server_admin",
    )
    assert await store.set_name(s.id, None)
    assert await store.set_pinned(s.id, False)
    got = await store.get(s.id)
    assert got is not None and got.name is None and got.pinned is False


async def test_an_automatic_title_never_replaces_the_users_name(store: SessionStore) -> None:
    """The naming call's title lands only on a session still unnamed, in one step (CI found a
    `/rename` typed while the title was being written replaced by it)."""
    s = await store.create("secretary")
    assert await store.name_if_unnamed(s.id, "Scripted title")
    assert await store.set_name(s.id, "Typed ahead")
    assert await store.name_if_unnamed(s.id, "A later title") is False
    got = await store.get(s.id)
    assert got is not None and got.name == "Typed ahead"
    assert await store.name_if_unnamed("0" * 32, "x") is False


async def test_metadata_changes_reach_listeners(store: SessionStore) -> None:
    changes: list[SessionChange] = []
    store.on_change(changes.append)
    s = await store.create("secretary")
    await store.set_name(s.id, "Oslo")
    await store.set_pinned(s.id, True)
    await store.set_profile(s.id, "server_admin")
    await store.append(s.id, display=[Message.user("hi")], context=[Message.user("hi")])  # not metadata
    assert not await store.set_name("s_" + "0" * 32, "nobody")  # nothing changed: no call
    copy = (await store.get(s.id)) or s
    await store.delete(s.id)
    await store.insert(copy)
    assert changes == [SessionChange(s.id)] * 4 + [SessionChange(s.id, deleted=True), SessionChange(s.id)]


async def test_replace_context_leaves_display_alone(store: SessionStore) -> None:
    s = await store.create("secretary")
    turns = [Message.user(f"q{i}") for i in range(6)]
    await store.append(s.id, display=turns, context=turns, context_token_count=5000)
    summary = Message.user("Summary: q0..q3", is_summary=True)
    await store.replace_context(s.id, [summary, *turns[4:]], context_token_count=0)
    await store.append(s.id, display=[Message.user("q6")], context=[Message.user("q6")])
    got = await store.get(s.id)
    assert got is not None
    assert [m.content for m in got.messages] == [f"q{i}" for i in range(7)]
    assert [m.content for m in got.context] == ["Summary: q0..q3", "q4", "q5", "q6"]
    assert got.context[0].is_summary and got.context_token_count == 0
    await store.set_context_tokens(s.id, 77)
    again = await store.get(s.id)
    assert again is not None and again.context_token_count == 77


async def test_planning_logs(store: SessionStore) -> None:
    s = await store.create("secretary")
    await store.add_planning_log(s.id, {"raw": "DIRECT", "plan": None})
    await store.add_planning_log(s.id, {"raw": "1. a\n2. b", "plan": "1. a\n2. b"})
    got = await store.get(s.id)
    assert got is not None
    assert [e["raw"] for e in got.planning_logs] == ["DIRECT", "1. a\n2. b"]


async def test_delete_removes_messages_and_files(store: SessionStore) -> None:
    s = await store.create("secretary")
    await store.append(s.id, display=[Message.user("x")], context=[Message.user("x")])
    await store.add_planning_log(s.id, {"raw": "DIRECT"})
    assert store.files_dir is not None
    folder = store.files_dir / s.id
    folder.mkdir(parents=True)
    (folder / "report.pdf").write_bytes(b"%PDF")
    other = await store.create("secretary")
    (store.files_dir / other.id).mkdir()
    assert await store.delete(s.id) is True
    assert await store.get(s.id) is None
    assert not folder.exists()
    assert (store.files_dir / other.id).exists()
    assert [x.id for x in await store.list()] == [other.id]
    assert await store.delete(s.id) is False


async def test_owners_are_isolated(store: SessionStore) -> None:
    alice = await store.create("secretary", owner="alice")
    bob = await store.create("secretary", owner="bob")
    assert [s.id for s in await store.list(owner="alice")] == [alice.id]
    assert await store.get(alice.id, owner="bob") is None
    assert await store.set_pinned(alice.id, True, owner="bob") is False
    assert await store.set_name(alice.id, "stolen", owner="bob") is False
    assert await store.delete(alice.id, owner="bob") is False
    assert await store.get(alice.id, owner="alice") is not None
    assert {s.id for s in await store.list()} == {alice.id, bob.id}


async def test_find_message_by_id_within_one_owner(store: SessionStore) -> None:
    """Recall keys name messages by id: found in any of the owner's sessions, never another's."""
    alice = await store.create("secretary", owner="alice")
    alice_other = await store.create("secretary", owner="alice")
    bob = await store.create("secretary", owner="bob")
    mine, theirs = Message.user("alice's long text"), Message.user("bob's secret text")
    only_context = Message.user("a summary", is_summary=True)
    await store.append(alice.id, display=[mine], context=[mine, only_context])
    await store.append(bob.id, display=[theirs], context=[theirs])
    found = await store.find_message(mine.id, owner="alice")
    assert found is not None and found.content == "alice's long text" and found.id == mine.id
    assert await store.find_message(theirs.id, owner="alice") is None
    assert await store.find_message(mine.id, owner="bob") is None
    assert await store.find_message(only_context.id, owner="alice") is None  # the display history only
    assert await store.find_message("no-such-id", owner="alice") is None
    assert await store.find_message("x" * 500, owner="alice") is None
    # The same id in two of the owner's sessions (an archive imported twice): the preferred one wins.
    twin = mine.model_copy(update={"content": "the imported copy"})
    await store.append(alice_other.id, display=[twin])
    preferred = await store.find_message(mine.id, owner="alice", prefer=alice.id)
    assert preferred is not None and preferred.content == "alice's long text"
    other = await store.find_message(mine.id, owner="alice", prefer=alice_other.id)
    assert other is not None and other.content == "the imported copy"


async def test_concurrent_appends_lose_nothing(store: SessionStore) -> None:
    s = await store.create("secretary")

    async def turn(i: int) -> None:
        await store.append(
            s.id, display=[Message.user(f"m{i}"), Message.assistant(f"r{i}")], context=[Message.user(f"m{i}")]
        )

    await asyncio.gather(*(turn(i) for i in range(20)))
    got = await store.get(s.id)
    assert got is not None
    assert len(got.messages) == 40 and len(got.context) == 20
    assert sorted(m.content or "" for m in got.context) == sorted(f"m{i}" for i in range(20))
    for i in range(0, 40, 2):  # each turn's pair stays together
        assert got.messages[i].content and got.messages[i + 1].content
        assert got.messages[i].content[1:] == got.messages[i + 1].content[1:]


async def test_insert_whole_session(store: SessionStore) -> None:
    msgs = rich_messages()
    session = Session(
        id="11111111-2222-4333-8444-555555555555",
        profile_id="smart_home",
        owner="local",
        name="Imported",
        pinned=True,
        context_token_count=99,
        messages=msgs,
        context=msgs[2:],
        planning_logs=[{"raw": "1. x"}],
    )
    await store.insert(session)
    got = await store.get(session.id)
    assert got is not None
    assert got.messages == msgs and got.context == msgs[2:]
    assert (got.name, got.pinned, got.profile_id, got.context_token_count) == (
        "Imported",
        True,
        "smart_home",
        99,
    )
    assert got.planning_logs == [{"raw": "1. x"}]
    assert abs((got.created_at - session.created_at).total_seconds()) < 0.001
    with pytest.raises(Exception):  # noqa: B017 - duplicate ids are refused by every store
        await store.insert(session)


SUMMARY = {"created_at": "2026-01-02T03:04:05Z", "text": "- Disk at 91% ✓", "focus": None, "metrics": {}}
FACTS = {"simple_triples": [["the NAS", "is", "91% full"]], "statistics": {"relationships_count": 1}}


async def test_analysis_parts_are_kept_and_replaced_one_by_one(store: SessionStore) -> None:
    s = await store.create("secretary")
    before = await store.get(s.id)
    assert before is not None and before.analysis == {} and before.custom == {}
    assert await store.set_analysis(s.id, {"summary": SUMMARY, "facts": FACTS}) is True
    newer = {**SUMMARY, "text": "- Disk at 95%", "focus": "disks"}
    assert await store.set_analysis(s.id, {"summary": newer}) is True
    got = await store.get(s.id)
    assert got is not None
    assert got.analysis == {"summary": newer, "facts": FACTS}
    assert got.last_active == before.last_active  # nobody talked
    assert (await store.get(s.id, display=False) or got).analysis == {}  # a turn's read skips them
    with pytest.raises(ValueError, match="not an analysis part"):
        await store.set_analysis(s.id, {"custom": {"x": 1}})
    assert await store.set_analysis("00000000-0000-4000-8000-000000000000", {"facts": FACTS}) is False
    assert await store.set_analysis("not-a-session-id", {"facts": FACTS}) is False


async def test_analysis_belongs_to_the_owner_and_goes_with_the_session(store: SessionStore) -> None:
    alice = await store.create("secretary", owner="alice")
    assert await store.set_analysis(alice.id, {"facts": FACTS}, owner="bob") is False
    assert (await store.get(alice.id) or alice).analysis == {}
    assert await store.set_analysis(alice.id, {"facts": FACTS}, owner="alice") is True
    assert await store.delete(alice.id) is True
    again = Session(id=alice.id, profile_id="secretary", owner="alice")
    await store.insert(again)  # the same id again: nothing of the deleted session's analysis is left
    assert (await store.get(alice.id) or again).analysis == {}


async def test_insert_keeps_analysis_and_custom_fields(store: SessionStore) -> None:
    session = Session(
        id="22222222-3333-4444-8555-666666666666",
        profile_id="secretary",
        messages=[Message.user("x")],
        analysis={"summary": SUMMARY, "facts": FACTS},
        custom={"project": {"name": "garden", "tags": ["tomatoes", 3]}},
    )
    await store.insert(session)
    got = await store.get(session.id)
    assert got is not None
    assert got.analysis == session.analysis and got.custom == session.custom


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_turn_writes_only_new_rows(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = (
        sqlite_url(tmp_path / "n.db") if kind == "sqlite" else postgres_url(request.getfixturevalue("pg_url"))
    )
    store = SqlSessionStore.at(url)
    await store.open()
    try:
        s = await store.create("secretary")
        history = [Message.user(f"old {i}") for i in range(200)]
        await store.append(s.id, display=history, context=history)
        statements: list[tuple[str, int]] = []

        def record(conn, cursor, statement, parameters, context, executemany) -> None:
            rows = len(parameters) if executemany and isinstance(parameters, list | tuple) else 1
            statements.append((statement.split()[0].upper(), rows))

        event.listen(store.db.sync_engine, "before_cursor_execute", record)
        await store.append(
            s.id, display=[Message.user("new"), Message.assistant("reply")], context=[Message.user("new")]
        )
        event.remove(store.db.sync_engine, "before_cursor_execute", record)
        inserted = sum(rows for verb, rows in statements if verb == "INSERT")
        updated = sum(rows for verb, rows in statements if verb == "UPDATE")
        deleted = [verb for verb, _ in statements if verb == "DELETE"]
        assert inserted == 3, statements
        assert updated == 1 and not deleted, statements
    finally:
        await store.aclose()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_cached_contexts_stay_correct(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        sqlite_url(tmp_path / "c.db") if kind == "sqlite" else postgres_url(request.getfixturevalue("pg_url"))
    )
    first, second = SqlSessionStore.at(url), SqlSessionStore.at(url)
    await first.open()
    await second.open()
    try:
        s = await first.create("secretary")
        await first.append(s.id, display=[Message.user("a")], context=[Message.user("a")])
        assert [m.content for m in (await first.get(s.id, display=False)).context] == ["a"]
        reads: list[str] = []

        def record(conn, cursor, statement, parameters, context, executemany) -> None:
            reads.append(statement)

        event.listen(first.db.sync_engine, "before_cursor_execute", record)
        again = await first.get(s.id, display=False)
        assert [m.content for m in again.context] == ["a"]
        assert not any("session_context" in r for r in reads)  # served from the cache
        # Another writer (another process, say) changes the context: the revision gives it away.
        await second.append(s.id, context=[Message.user("b")])
        assert [m.content for m in (await first.get(s.id, display=False)).context] == ["a", "b"]
        await second.replace_context(s.id, [Message.user("summary", is_summary=True)], context_token_count=1)
        assert [m.content for m in (await first.get(s.id, display=False)).context] == ["summary"]
        await first.append(s.id, display=[Message.user("display only")])
        assert [m.content for m in (await first.get(s.id)).context] == ["summary"]
        event.remove(first.db.sync_engine, "before_cursor_execute", record)
    finally:
        await first.aclose()
        await second.aclose()


async def test_an_imported_sessions_own_system_prompt_and_message_senders_are_kept(
    store: SessionStore,
) -> None:
    """Migration 0021's `sessions.system_prompt`, read by a run (no display) and with the history;
    a message's name, location and metadata stay in its stored document."""
    alice = Message.user("Hello", name="alice")
    alice.metadata.location = "Paris"
    alice.metadata.custom = {"device": "phone"}
    session = Session(
        id=new_session_id(),
        profile_id="secretary",
        messages=[alice],
        context=[alice],
        system_prompt="Answer like a pirate.",
    )
    await store.insert(session)
    for display in (True, False):
        got = await store.get(session.id, display=display)
        assert got is not None and got.system_prompt == "Answer like a pirate.", display
    got = await store.get(session.id)
    assert got is not None
    (stored,) = got.messages
    assert (stored.name, stored.metadata.location, stored.metadata.custom) == (
        "alice",
        "Paris",
        {"device": "phone"},
    )
    plain = await store.get((await store.create("secretary")).id)
    assert plain is not None and plain.system_prompt is None
