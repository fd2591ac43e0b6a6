"""The jobs store on SQLite and PostgreSQL (through two `Database`s, as two workers) and in memory:
a job is claimed by one worker however many ask at once, oldest first; its lease is renewed only by
its worker and, once run out, lets another worker claim it again (`attempts` counted); a stop
stops a queued job at once and marks a running one; the per-user limit; each user's own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from navi.jobs import InMemoryJobStore, Job, JobLimit, JobStore
from navi.sessions.models import new_session_id
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.jobs import SqlJobStore
from navi.storage.sessions import SqlSessionStore

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[JobStore, JobStore, list[str]]]:
    if request.param == "memory":
        one = InMemoryJobStore()
        yield one, one, [new_session_id() for _ in range(4)]
        return
    url = (
        postgres_url(request.getfixturevalue("pg_url"))
        if request.param == "postgres"
        else sqlite_url(tmp_path / "navi.db")
    )
    a, b = Database(url), Database(url)
    await migrate.upgrade(a)
    sessions = SqlSessionStore(a, str(tmp_path / "files"))
    made = [(await sessions.create("secretary", owner="owner")).id for _ in range(4)]
    try:
        yield SqlJobStore(a), SqlJobStore(b), made
    finally:
        await a.dispose()
        await b.dispose()


def job(n: int, session: str, owner: str = "owner") -> Job:
    return Job(
        id=f"{n:032d}",
        owner=owner,
        title=f"Job {n}",
        prompt=f"do {n}",
        session_id=session,
        created_at=T0 + timedelta(minutes=n),
    )


async def test_claims_leases_and_stops(stores: tuple[JobStore, JobStore, list[str]]) -> None:
    a, b, sessions = stores
    for n in range(3):
        await a.create(job(n, sessions[n]), limit=3)
    with pytest.raises(JobLimit, match="3 background jobs"):
        await a.create(job(3, sessions[3]), limit=3)
    await b.create(job(3, sessions[3], owner="ann"), limit=3)  # another user's count is their own
    assert [j.id for j in await b.list("owner")] == [f"{n:032d}" for n in (2, 1, 0)]
    assert await b.get(f"{0:032d}", owner="ann") is None and await b.by_session(sessions[1]) is not None

    # Two workers ask at once: each job goes to one of them, oldest first.
    got = await asyncio.gather(a.claim("w1", 30), b.claim("w2", 30))
    claimed = sorted(j.id for j in got if j is not None)
    assert claimed == [f"{0:032d}", f"{1:032d}"] and all(j is not None and j.attempts == 1 for j in got)
    first = next(j for j in got if j is not None and j.id == f"{0:032d}")
    holder, other = ("w1", "w2") if first is got[0] else ("w2", "w1")
    assert await b.heartbeat(first.id, other, 30, {"steps": 9}) is None  # not its worker's
    beat = await b.heartbeat(first.id, holder, 30, {"steps": 2, "last_step": "web_view"})
    assert beat is not None and (beat.steps, beat.last_step, beat.state) == (2, "web_view", "running")
    # A research job's progress: its sub-questions (any text) and the sources read, kept as given.
    plan = ["Kestrel 7 “range”, in km?", 'weight "with" battery', "ποιο βάρος;"]
    beat = await b.heartbeat(first.id, holder, 30, {"plan": plan, "sources": 3})
    assert beat is not None and (beat.plan, beat.sources) == (plan, 3)
    listed = next(j for j in await a.list("owner") if j.id == first.id)
    assert (listed.plan, listed.sources, listed.steps) == (plan, 3, 2)

    # Stop: a running job is marked (its worker stops it), a queued one stops at once.
    marked = await b.request_stop(first.id, "owner")
    assert marked is not None and marked.state == "running" and marked.stop_requested
    assert await b.request_stop(first.id, "ann") is None
    queued = await b.request_stop(f"{2:032d}", "owner")
    assert queued is not None and queued.state == "stopped" and queued.error == "stopped before it started"
    assert not await a.finish(first.id, other, "done", result="x")
    assert await a.finish(first.id, holder, "stopped", error="stopped by you")
    ended = await b.get(first.id)
    assert ended is not None and ended.state == "stopped" and ended.finished_at is not None

    # A worker that died: its lease runs out and another worker claims the job again.
    second = next(j for j in got if j is not None and j.id == f"{1:032d}")
    dead = "w1" if second is got[0] else "w2"
    assert await a.heartbeat(second.id, dead, 0.0, {}) is not None  # renewed with no time left
    await asyncio.sleep(0.05)
    again = await b.claim("w3", 30)
    assert again is not None and again.id == second.id and again.attempts == 2 and again.steps == 0
    assert await a.heartbeat(second.id, dead, 30, {}) is None  # the dead one has lost it
    assert await a.finish(second.id, "w3", "done", result="All read.")
    assert (await b.get(second.id)).result == "All read."  # type: ignore[union-attr]
    extra = await a.claim("w1", 30)
    assert extra is not None and extra.owner == "ann"  # the only one left
    assert await a.claim("w1", 30) is None
