"""Session leases: one run per session for every process on a database (navi/runs/leases.py).

The lease store is exercised on SQLite and PostgreSQL alike (two stores on one database are two
workers); two run managers on one SQLite file then show the rule end to end: the second start in a
session is `busy`, whichever manager holds it.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from navi.agent.turns import Retry
from navi.llm.messages import Message
from navi.protocol import StreamEnd
from navi.runs import RunActive, RunManager
from navi.runs.leases import SqlLeases, gone_here, worker_name
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.testing.script import Reply
from tests.agent_helpers import scripted_runtime


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "postgres":
        url = postgres_url(request.getfixturevalue("pg_url"))
    else:
        url = sqlite_url(tmp_path / "navi.db")
    database = Database(url)
    await migrate.upgrade(database)
    try:
        yield database
    finally:
        await database.dispose()


def dead_worker() -> str:
    """The lease name of a process of this machine that has exited."""
    child = subprocess.Popen(["sleep", "0"])
    child.wait()
    name = worker_name().split("/")
    name[2], name[3] = str(child.pid), "1"
    return "/".join(name)


async def test_a_session_is_held_by_one_run_at_a_time(db: Database) -> None:
    a = SqlLeases(db, worker="host-a/1/1/1/a")
    b = SqlLeases(db, worker="host-b/1/1/1/b")
    first = await a.acquire("s1", "run-1")
    assert first is not None and first.worker == "host-a/1/1/1/a"
    assert await b.acquire("s1", "run-2") is None  # another worker: busy
    assert await a.acquire("s1", "run-3") is None  # the same worker, without handing over: busy too
    assert await b.acquire("s1", "run-2", replacing="run-1") is None  # only its own worker hands over
    holder = await b.holder("s1")
    assert holder is not None and (holder.run_id, holder.answered) == ("run-1", False)
    await a.answered("s1", "run-1")
    holder = await b.holder("s1")
    assert holder is not None and holder.answered
    assert await a.acquire("s1", "run-4", replacing="run-1") is not None  # an answered turn hands over
    await a.release("s1", "run-1")  # the old run ending lets go of nothing that is not its own
    holder = await b.holder("s1")
    assert holder is not None and (holder.run_id, holder.answered) == ("run-4", False)
    assert [x.session_id for x in await b.held()] == ["s1"]
    await a.release("s1", "run-4")
    assert await b.holder("s1") is None
    assert await b.acquire("s1", "run-5", "store") is not None


async def test_a_lease_nobody_renews_expires_and_is_taken_once(db: Database) -> None:
    gone = SqlLeases(db, worker="elsewhere/1/1/1/x", seconds=1.0)  # expires 0.5 s after a renewal
    alive = SqlLeases(db, worker="elsewhere/1/1/1/y", seconds=60)
    here = SqlLeases(db, seconds=0.5)
    assert await gone.acquire("s1", "run-1") is not None
    assert await alive.acquire("s2", "run-2") is not None
    assert await here.expired() == []
    await asyncio.sleep(0.3)
    assert await gone.renew() == {"run-1"}  # renewed: not expired
    assert await here.expired() == []
    await asyncio.sleep(0.7)  # then `gone` stops renewing
    assert await alive.renew() == {"run-2"}
    lost = await here.expired()
    assert [(x.session_id, x.run_id) for x in lost] == [("s1", "run-1")]
    assert await here.take(lost[0]) is True
    assert await here.take(lost[0]) is False  # once: a second cleaner finds nothing
    assert await here.holder("s1") is None
    assert await here.holder("s2") is not None
    renewed = await here.acquire("s1", "run-3")
    assert renewed is not None and await here.expired() == []  # never its own leases


async def test_a_dead_process_of_this_machine_loses_its_leases_at_once(db: Database) -> None:
    dead = dead_worker()
    assert gone_here(dead) and not gone_here(worker_name())
    assert not gone_here("another-machine/1/1/1/x") and not gone_here("not a worker name")
    gone = SqlLeases(db, worker=dead, seconds=3600)  # far from expiring
    assert await gone.acquire("s1", "run-1") is not None
    here = SqlLeases(db, seconds=3600)
    assert [x.run_id for x in await here.expired()] == ["run-1"]
    assert await here.take((await here.expired())[0])


async def test_two_managers_on_one_database_run_one_turn_per_session(tmp_path: Path) -> None:
    """Two runtimes on one SQLite file are two Navi processes: a turn started through one makes
    the other's start `busy` until it has ended; then the other runs the next."""
    rt_a, _, script = await scripted_runtime(tmp_path, sql=True, planning_enabled=False)
    rt_b, _, _ = await scripted_runtime(tmp_path, script, sql=True, planning_enabled=False)
    assert rt_a.db is not None and rt_b.db is not None
    a = RunManager(rt_a.agent, SqlLeases(rt_a.db))
    b = RunManager(rt_b.agent, SqlLeases(rt_b.db))
    try:
        release = asyncio.Event()
        script.turn(Reply(text="A long answer.", wait_for=release, wait_after=1))
        script.turn("The second answer.")
        session = await rt_a.sessions.create("secretary")
        run = await a.start(session.id, "first, through A")
        await asyncio.wait_for(run.subscribe().queue.get(), 5)  # stream_start: A holds the session
        with pytest.raises(RunActive):
            await b.start(session.id, "second, through B")
        with pytest.raises(RunActive):
            await b.append(session.id, [])
        assert b.slots.get(session.id) is None  # B refused it without keeping anything
        release.set()
        await asyncio.wait_for(run.finished.wait(), 10)
        await a.controls.wait(session.id, limit=10)  # A's lease follows the end of its run
        second = await b.start(session.id, "second, through B")
        await asyncio.wait_for(second.settled.wait(), 10)
        assert isinstance(second.result, StreamEnd) and second.result.content == "The second answer."
        await second.finished.wait()
        stored = await rt_b.sessions.get(session.id)
        assert stored is not None
        assert [(m.role, m.content) for m in stored.messages] == [
            ("user", "first, through A"),
            ("assistant", "A long answer."),
            ("user", "second, through B"),
            ("assistant", "The second answer."),
        ]
        await b.controls.wait(session.id, limit=10)  # B's lease, too, is let go after its run has ended
        # Both managers are one worker here (one process): no lease of it is left.
        assert await a.slots.leases.held() == []
    finally:
        await a.shutdown()
        await b.shutdown()
        await rt_a.aclose()
        await rt_b.aclose()


async def test_a_turn_whose_process_died_is_recorded_lost_and_its_session_freed(tmp_path: Path) -> None:
    """A lease left by a process of this machine that is gone: the next start recovers it — the
    unanswered turn gets the `worker_lost` record under its message (Retry offers it) — and runs."""
    rt, _, script = await scripted_runtime(tmp_path, sql=True, planning_enabled=False)
    assert rt.db is not None
    runs = RunManager(rt.agent, SqlLeases(rt.db))
    try:
        session = await rt.sessions.create("secretary")
        orphan = await rt.sessions.create("secretary")
        for sid in (session.id, orphan.id):  # the dead process stored the message, then died
            user = Message.user("lost question")
            await rt.sessions.append(sid, display=[user], context=[user])
        dead = SqlLeases(rt.db, worker=dead_worker())
        assert await dead.acquire(session.id, "run-dead") is not None
        assert await dead.acquire(orphan.id, "run-orphan") is not None
        script.turn("Answered after all.")
        run = await runs.start(session.id, Retry())
        await asyncio.wait_for(run.finished.wait(), 10)
        assert (
            run.frames[0]["type"] == "stream_start" and run.frames[0]["message"]["content"] == "lost question"
        )
        assert isinstance(run.result, StreamEnd) and run.result.content == "Answered after all."
        # The other session is recovered by the lease keeper, without anyone starting a turn there.
        await runs.open()
        assert await runs.slots.leases.holder(orphan.id) is None
        stored = await rt.sessions.get(orphan.id)
        assert stored is not None
        last = stored.messages[-1]
        assert last.metadata["error"]["code"] == "worker_lost"
        assert last.metadata["failed_turn"] == stored.messages[0].id
        # Both sessions taken over from the dead worker, each counted once (GET /metrics).
        takeovers = runs.telemetry.metrics.registry.get_sample_value(
            "navi_lease_takeovers_total", {"kind": "turn"}
        )
        assert takeovers == 2
    finally:
        await runs.shutdown()
        await rt.aclose()
