"""The schedule store's contract, one suite on memory, SQLite and PostgreSQL: owners see only their
own, edits, deletes with runs, due schedules, the claim that only one claimer wins, runs newest
first, unread marks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from navi.schedules import InMemoryScheduleStore, Schedule, ScheduleRun, ScheduleStore
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.schedules import SqlScheduleStore
from navi.storage.sessions import SqlSessionStore

T0 = datetime(2026, 11, 26, 8, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[ScheduleStore, str]]:
    """A schedule store and the id of a real session of "alice" (unread marks need one)."""
    if request.param == "memory":
        yield InMemoryScheduleStore(), "6f1c1f3e-0000-4000-8000-000000000000"
        return
    url = (
        sqlite_url(tmp_path / "s.db")
        if request.param == "sqlite"
        else postgres_url(request.getfixturevalue("pg_url"))
    )
    db = Database(url)
    await migrate.upgrade(db)
    try:
        session = await SqlSessionStore(db).create("secretary", owner="alice")
        yield SqlScheduleStore(db), session.id
    finally:
        await db.dispose()


def _schedule(owner: str = "alice", **kw: object) -> Schedule:
    base: dict[str, object] = {
        "owner": owner,
        "title": "t",
        "prompt": "p",
        "profile_id": "secretary",
        "kind": "interval",
        "every_seconds": 60,
        "next_run_at": T0,
    }
    base.update(kw)
    return Schedule.model_validate(base)


async def test_schedule_store_contract(stores: tuple[ScheduleStore, str]) -> None:
    store, session_id = stores
    a = await store.create(_schedule())
    b = await store.create(
        _schedule("bob", kind="at", every_seconds=None, at=T0, next_run_at=T0 + timedelta(hours=1))
    )
    got = await store.get(a.id)
    assert got is not None and got.next_run_at == T0 and got.next_run_at.tzinfo is not None
    assert await store.get(a.id, owner="bob") is None
    assert [s.id for s in await store.list(owner="alice")] == [a.id]
    assert {s.id for s in await store.list()} == {a.id, b.id}

    changed = await store.update(a.id, {"paused": True, "title": "new"}, owner="alice")
    assert changed is not None and changed.paused and changed.title == "new"
    assert await store.update(a.id, {"paused": False}, owner="bob") is None
    with pytest.raises(ValueError, match="not an editable field"):
        await store.update(a.id, {"owner": "bob"})
    assert [s.id for s in await store.due(T0 + timedelta(hours=2))] == [b.id]  # a is paused
    await store.update(a.id, {"paused": False})
    assert [s.id for s in await store.due(T0 + timedelta(hours=2))] == [a.id, b.id]  # earliest first
    assert [s.id for s in await store.due(T0)] == [a.id]  # due at exactly its instant
    assert await store.due(T0 - timedelta(microseconds=1)) == []

    # The claim: only from the expected instant, once; the run is recorded with it.
    first = ScheduleRun(schedule_id=a.id, owner="alice", due_at=T0, started_at=T0)
    assert await store.claim(T0, T0 + timedelta(seconds=60), first)
    again = ScheduleRun(schedule_id=a.id, owner="alice", due_at=T0, started_at=T0)
    assert not await store.claim(T0, T0 + timedelta(seconds=60), again)
    moved = await store.get(a.id)
    assert moved is not None and moved.next_run_at == T0 + timedelta(seconds=60) and moved.last_run_at == T0
    assert [r.id for r in await store.runs(a.id)] == [first.id]
    # A one-off claimed with no next instant is done, and no longer due.
    one = ScheduleRun(
        schedule_id=b.id, owner="bob", due_at=T0 + timedelta(hours=1), started_at=T0 + timedelta(hours=1)
    )
    assert await store.claim(T0 + timedelta(hours=1), None, one)
    done = await store.get(b.id)
    assert done is not None and done.done and done.next_run_at is None
    assert [s.id for s in await store.due(T0 + timedelta(days=9))] == [a.id]
    # A paused schedule cannot be claimed.
    await store.update(a.id, {"paused": True})
    later = T0 + timedelta(seconds=60)
    assert not await store.claim(
        later, later + timedelta(seconds=60), ScheduleRun(schedule_id=a.id, due_at=later, started_at=later)
    )

    manual = ScheduleRun(
        schedule_id=a.id,
        owner="alice",
        due_at=T0 + timedelta(minutes=5),
        started_at=T0 + timedelta(minutes=5),
        manual=True,
    )
    assert await store.add_run(manual)
    assert not await store.add_run(ScheduleRun(schedule_id="gone", due_at=T0, started_at=T0))
    await store.update_run(
        manual.id, {"status": "error", "error": "boom", "finished_at": T0 + timedelta(minutes=6)}
    )
    runs = await store.runs(a.id)
    assert [r.id for r in runs] == [manual.id, first.id]  # newest first
    assert runs[0].status == "error" and runs[0].error == "boom" and runs[0].manual
    assert [r.id for r in await store.runs(a.id, limit=1)] == [manual.id]

    assert not await store.delete(a.id, owner="bob")
    assert await store.delete(a.id, owner="alice") and await store.get(a.id) is None
    assert await store.runs(a.id) == []
    assert not await store.delete(a.id)

    await store.mark_unread(session_id, "alice")
    await store.mark_unread(session_id, "alice")  # twice is once
    assert await store.unread(owner="alice") == {session_id} and await store.unread(owner="bob") == set()
    assert not await store.mark_read(session_id, owner="bob")
    assert await store.mark_read(session_id, owner="alice") and not await store.mark_read(session_id)
    assert await store.unread() == set()
