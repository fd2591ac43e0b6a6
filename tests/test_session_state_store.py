"""Per-session state (navi/sessions/state.py) and memory-extraction claims (navi/memory/claims.py),
the same in memory, on SQLite and on PostgreSQL: values kept as JSON per session and name, edits
that never lose one another, rows that go with their session, and a claim that one worker gets
while it holds, and nobody gets for messages read already.

On the databases "two workers" are two `Database` engines on one file or one PostgreSQL database,
each with its own claims (its own worker id).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from navi.memory.claims import Claim, ExtractionClaims, InMemoryExtractionClaims
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.state import (
    InMemorySessionStateStore,
    SessionState,
    SessionStateStore,
)
from navi.sessions.store import SessionStore
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.session_state import SqlExtractionClaims, SqlSessionStateStore
from navi.storage.sessions import SqlSessionStore


@dataclass
class Two:
    """One store seen through two workers (the same object twice in memory: one process)."""

    sessions: SessionStore
    a: SessionStateStore
    b: SessionStateStore
    claims_a: ExtractionClaims
    claims_b: ExtractionClaims
    sql: bool


SQL = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=["memory", *SQL])
async def two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Two]:
    async for made in _two(request, tmp_path):
        yield made


@pytest.fixture(params=SQL)
async def sql_two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Two]:
    """The same on the databases only (in memory, a deleted session's state is dropped by
    `SessionState.forget`, not by the store)."""
    async for made in _two(request, tmp_path):
        yield made


async def _two(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Two]:
    if request.param == "memory":
        state, claims = InMemorySessionStateStore(), InMemoryExtractionClaims()
        yield Two(InMemorySessionStore(str(tmp_path / "files")), state, state, claims, claims, sql=False)
        return
    if request.param == "postgres":
        url = postgres_url(request.getfixturevalue("pg_url"))
    else:
        url = sqlite_url(tmp_path / "navi.db")
    db_a, db_b = Database(url), Database(url)
    await migrate.upgrade(db_a)
    try:
        yield Two(
            SqlSessionStore(db_a),
            SqlSessionStateStore(db_a),
            SqlSessionStateStore(db_b),
            SqlExtractionClaims(db_a),
            SqlExtractionClaims(db_b),
            sql=True,
        )
    finally:
        await db_a.dispose()
        await db_b.dispose()


async def test_values_are_kept_per_session_and_name_and_seen_by_the_other_worker(two: Two) -> None:
    s1 = (await two.sessions.create("secretary")).id
    s2 = (await two.sessions.create("secretary")).id
    assert await two.b.get(s1, "todo") is None
    tasks = [{"title": "buy milk \u00e6\u00f8\u00e5 \u2603", "status": "pending"}]
    await two.a.put(s1, "todo", tasks)
    await two.a.put(s1, "scratchpad", {"plan": "first\nsecond", "z": "", "a": "x"})
    await two.a.put(s2, "todo", [])
    assert await two.b.get(s1, "todo") == tasks
    pad = await two.b.get(s1, "scratchpad")
    assert pad == {"plan": "first\nsecond", "z": "", "a": "x"} and list(pad) == [
        "plan",
        "z",
        "a",
    ]  # order kept
    assert await two.b.get(s2, "todo") == [] and await two.b.get(s2, "scratchpad") is None
    # A value read is a copy: changing it changes nothing stored.
    got = await two.b.get(s1, "todo")
    got[0]["status"] = "done"
    assert (await two.a.get(s1, "todo"))[0]["status"] == "pending"
    await two.b.put(s1, "todo", None)  # None deletes
    assert await two.a.get(s1, "todo") is None and await two.a.get(s1, "scratchpad") is not None
    await two.a.forget(s1)
    assert await two.b.get(s1, "scratchpad") is None and await two.b.get(s2, "todo") == []


async def test_edits_at_once_through_both_workers_lose_nothing(two: Two) -> None:
    sid = (await two.sessions.create("secretary")).id

    def add(word: str):
        def edit(notes: list[str] | None) -> tuple[list[str], int]:
            notes = [*(notes or []), word]
            return notes, len(notes)

        return edit

    counts = await asyncio.gather(
        *(store.change(sid, "notes", add(f"w{i}")) for i, store in enumerate([two.a, two.b] * 10))
    )
    assert sorted(counts) == list(range(1, 21))  # each edit read what the one before wrote
    assert sorted(await two.a.get(sid, "notes")) == sorted(f"w{i}" for i in range(20))
    # An edit that returns None deletes the value, and `change` returns what the edit said.
    assert await two.b.change(sid, "notes", lambda notes: (None, len(notes))) == 20
    assert await two.a.get(sid, "notes") is None


async def test_rows_go_with_their_session_and_need_one(sql_two: Two) -> None:
    two = sql_two
    sid = (await two.sessions.create("secretary")).id
    await two.a.put(sid, "todo", [{"title": "x", "status": "done"}])
    claim = await two.claims_a.claim(sid, 3)
    assert claim is not None
    assert await two.sessions.delete(sid)
    assert await two.b.get(sid, "todo") is None
    # No stored session, no state: a session id the database does not hold is refused.
    with pytest.raises(IntegrityError):
        await two.a.put(sid, "todo", [])
    with pytest.raises(IntegrityError):
        await two.claims_b.claim(sid, 3)


async def test_the_router_keeps_runs_that_store_nothing_in_the_process(two: Two) -> None:
    sid = (await two.sessions.create("secretary")).id
    state = SessionState(two.a)
    await state.of(True).put(sid, "todo", ["stored"])
    await state.of(False).put("subagent_1", "todo", ["mine"])
    assert state.sessions() == ["subagent_1"]
    assert await two.b.get(sid, "todo") == ["stored"]
    assert await two.b.get("subagent_1", "todo") is None
    await state.forget("subagent_1")
    assert state.sessions() == [] and await two.b.get(sid, "todo") == ["stored"]


async def test_one_worker_claims_and_the_same_messages_are_never_claimed_again(two: Two) -> None:
    sid = (await two.sessions.create("secretary")).id
    first = await two.claims_a.claim(sid, 1)  # the session's row exists: the claims below race on it
    assert first == Claim(sid, 0, 1)
    await two.claims_a.release(first)
    claims = await asyncio.gather(
        *(c.claim(sid, 4) for c in [two.claims_a, two.claims_b, two.claims_a, two.claims_b])
    )
    won = [c for c in claims if c is not None]
    assert won == [Claim(sid, 0, 4)]  # triggered on both at once: one claim
    holder = two.claims_a if claims[0] is not None or claims[2] is not None else two.claims_b
    other = two.claims_b if holder is two.claims_a else two.claims_a
    assert await other.claim(sid, 6) is None  # held: not even for newer messages
    await holder.done(won[0])
    assert await other.claim(sid, 4) is None and await holder.claim(sid, 3) is None  # read already
    newer = await other.claim(sid, 6)
    assert newer == Claim(sid, 4, 6)  # only the messages written since
    await other.release(newer)  # the model failed: nothing recorded, and the claim is free
    again = await holder.claim(sid, 6)
    assert again == Claim(sid, 4, 6)
    await holder.done(again)
    assert await other.claim(sid, 6) is None


async def test_a_claim_of_a_worker_that_is_gone_lapses(tmp_path: Path) -> None:
    db = Database(sqlite_url(tmp_path / "navi.db"))
    await migrate.upgrade(db)
    try:
        sid = (await SqlSessionStore(db).create("secretary")).id
        gone, alive = SqlExtractionClaims(db, lease=0.0), SqlExtractionClaims(db)
        assert await gone.claim(sid, 2) == Claim(sid, 0, 2)  # and never done
        taken = await alive.claim(sid, 2)
        assert taken == Claim(sid, 0, 2)
        await gone.done(Claim(sid, 0, 2))  # too late: the claim is no longer its own
        assert await alive.claim(sid, 2) is None  # held by `alive`
        await alive.done(taken)
        assert await gone.claim(sid, 2) is None
    finally:
        await db.dispose()
