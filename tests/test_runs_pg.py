"""Runs across workers on PostgreSQL (navi/runs/pg.py), two workers in one test process.

Two runtimes on one PostgreSQL database, each with its run manager on the PostgreSQL bus, are two
workers: a run started through A is followed live through B and replayed from any sequence number;
stop and an approval's answer sent through B reach the run on A; a frame too large for NOTIFY
still arrives (read from its row). `tests/test_runs_workers.py` does the same with real processes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import asyncpg
import pytest

from navi.agent.gate import ApprovalNotFound
from navi.compose import Runtime
from navi.runs import RunManager, Subscriber
from navi.runs.bus import Handlers
from navi.runs.follow import Watch
from navi.runs.leases import SqlLeases
from navi.runs.pg import PgBus, asyncpg_dsn
from navi.storage import migrate
from navi.storage.database import Database, postgres_url
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import scripted_runtime

pytestmark = pytest.mark.postgres
LEASE = 2.0  # RUN_LEASE_SECONDS of the test of a stalled worker


@dataclass
class Worker:
    runtime: Runtime
    runs: RunManager

    @classmethod
    async def start(cls, rt: Runtime, leases: SqlLeases | None = None, **options: Any) -> Worker:
        """A worker on `rt`'s PostgreSQL database: its leases (its own unless given), bus and runs."""
        assert rt.db is not None
        leases = leases or SqlLeases(rt.db)
        runs = RunManager(rt.agent, leases, PgBus(rt.db, leases.worker), **options)
        await runs.open()
        return cls(rt, runs)

    async def stop(self) -> None:
        await self.runs.shutdown()
        await self.runtime.aclose()


@pytest.fixture
async def workers(tmp_path: Path, pg_url: str) -> AsyncIterator[tuple[Worker, Worker, AgentScript]]:
    script = AgentScript()
    made = []
    for _ in range(2):
        rt, _, _ = await scripted_runtime(
            tmp_path,
            script,
            sql=True,
            database_url=pg_url,
            planning_enabled=False,
            navi_approval_mode="smart",
        )
        made.append(await Worker.start(rt))
    try:
        yield made[0], made[1], script
    finally:
        for worker in made:
            await worker.stop()


async def frames(sub: Subscriber, until: str, within: float = 10.0) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    async with asyncio.timeout(within):
        while True:
            item = await sub.queue.get()
            if item is sub:
                return got
            got.append(item)
            if item["type"] == until:
                return got


async def heard(watch: Watch) -> list[Subscriber]:
    """The runs a watch on the session was handed as they started, each followed from its start."""
    for _ in range(300):
        if watch.subs:
            break
        await asyncio.sleep(0.02)
    return list(watch.subs.values())


async def test_a_run_on_one_worker_is_followed_and_replayed_on_another(
    workers: tuple[Worker, Worker, AgentScript],
) -> None:
    a, b, script = workers
    release = asyncio.Event()
    big = "x" * 12_000  # beyond NOTIFY's 8,000 bytes: announced without the frame, read from its row
    script.turn(
        Reply(text=f"First part. {big} Second part.", chunk_chars=4_000, wait_for=release, wait_after=2)
    )
    session = await a.runtime.sessions.create("secretary")
    watch = await b.runs.followers.watch(session.id, asyncio.Queue())
    run = await a.runs.start(session.id, "tell me")
    seen = await heard(watch)
    assert seen and seen[0].run_id == run.run_id  # B heard of the run as it started
    live = seen[0]
    early = await frames(live, "stream_delta")
    release.set()
    later = await frames(live, "stream_end")
    assert await frames(live, "never") == []  # then the run's frames end, with its last one
    got = early + later
    await asyncio.wait_for(run.finished.wait(), 10)
    assert got == run.frames  # every frame, in order, the same run_id and seq
    assert [f["seq"] for f in got] == list(range(1, len(run.frames) + 1))
    assert (
        "".join(f["delta"] for f in got if f["type"] == "stream_delta") == f"First part. {big} Second part."
    )
    await b.runs.followers.unwatch(watch)


async def test_a_reconnect_on_another_worker_replays_from_its_seq(
    workers: tuple[Worker, Worker, AgentScript],
) -> None:
    a, b, script = workers
    release = asyncio.Event()
    script.turn(Reply(text="one two three four five six", chunk_chars=4, wait_for=release, wait_after=3))
    session = await a.runtime.sessions.create("secretary")
    run = await a.runs.start(session.id, "count")
    for _ in range(200):
        if len(run.frames) >= 4:
            break
        await asyncio.sleep(0.02)
    await b.runs.followers.watch(session.id, asyncio.Queue())
    replay = await b.runs.followers.follow(session.id, since=2)  # what a socket opening on B follows
    assert replay is not None and replay.run_id == run.run_id
    release.set()
    got = await frames(replay, "stream_end")
    await asyncio.wait_for(run.finished.wait(), 10)
    assert got == run.frames[2:]


async def test_stop_and_approvals_sent_to_another_worker_reach_the_run(
    workers: tuple[Worker, Worker, AgentScript],
    tmp_path: Path,
) -> None:
    a, b, script = workers
    marker = tmp_path / "made"
    script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]),
        Reply(text="I did not make it."),
    )
    session = await a.runtime.sessions.create("secretary")
    run = await a.runs.start(session.id, "make the file")
    sub = run.subscribe()
    asked = (await frames(sub, "approval_required"))[-1]
    # B lists what A's run waits for. A's own subscriber sees the frame as it is published, a moment
    # before A's writer has stored the question (a client following on B gets the frame only after).
    for _ in range(200):
        if waiting := await b.runs.controls.waiting(session.id):
            break
        await asyncio.sleep(0.05)
    assert waiting == [{k: v for k, v in asked.items() if k not in ("type", "run_id", "seq")}]
    await b.runs.controls.approve(session.id, asked["call_id"], "deny")
    with pytest.raises(ApprovalNotFound):  # the first answer counts
        await b.runs.controls.approve(session.id, asked["call_id"], "allow")
    resolved = (await frames(sub, "approval_resolved"))[-1]
    assert (resolved["decision"], resolved["by"]) == ("deny", "user")
    assert (await frames(sub, "stream_end"))[-1]["content"] == "I did not make it."
    await asyncio.wait_for(run.finished.wait(), 10)
    assert not marker.exists() and await b.runs.controls.waiting(session.id) == []

    release = asyncio.Event()
    script.turn(Reply(text="a long answer " * 10, chunk_chars=4, wait_for=release, wait_after=1))
    second = await a.runs.start(session.id, "talk")
    sub = second.subscribe()
    await frames(sub, "stream_delta")
    assert await b.runs.controls.stop(session.id) is True  # through B: A's run stops
    assert (await frames(sub, "stream_stopped"))[-1]["type"] == "stream_stopped"
    await b.runs.controls.wait(session.id, limit=10)
    assert session.id not in await b.runs.slots.busy(session.id)
    release.set()


async def test_a_worker_that_stops_renewing_loses_its_turn_within_the_lease(
    tmp_path: Path, pg_url: str
) -> None:
    """Worker A is on another machine (its process cannot be looked at from here) and stalls: it
    stops renewing its leases. Within RUN_LEASE_SECONDS, B ends A's turn for everyone following it
    (`worker_lost`) and records it under the message; when A wakes, it finds its lease gone and
    stops the turn instead of writing on."""
    script = AgentScript()
    made = []
    for worker in ("elsewhere/1/1/1/a", None):
        rt, _, _ = await scripted_runtime(
            tmp_path, script, sql=True, database_url=pg_url, planning_enabled=False
        )
        assert rt.db is not None
        made.append(await Worker.start(rt, SqlLeases(rt.db, worker=worker, seconds=LEASE)))
    a, b = made
    try:
        release = asyncio.Event()
        script.turn(Reply(text="never finished " * 5, chunk_chars=4, wait_for=release, wait_after=1))
        session = await a.runtime.sessions.create("secretary")
        watch = await b.runs.followers.watch(session.id, asyncio.Queue())
        run = await a.runs.start(session.id, "hello")
        sub = (await heard(watch))[0]
        followed = await frames(sub, "stream_delta")
        assert a.runs.slots._keeper is not None and a.runs.slots._heartbeat is not None
        a.runs.slots._keeper.cancel()  # A stalls: no more renewals
        a.runs.slots._heartbeat.stop()
        stalled = asyncio.get_running_loop().time()
        got = await frames(sub, "error")
        took = asyncio.get_running_loop().time() - stalled
        assert got[-1]["code"] == "worker_lost" and got[-1]["run_id"] == run.run_id
        assert got[-1]["seq"] == (followed + got)[-2]["seq"] + 1
        assert took <= LEASE, f"declared lost after {took:.2f} s"
        stored = await b.runtime.sessions.get(session.id)
        assert stored is not None and stored.messages[-1].metadata["error"]["code"] == "worker_lost"
        await a.runs.slots.tend()  # A wakes up: its lease is gone, so its turn stops
        await asyncio.wait_for(run.finished.wait(), 5)
        assert run.frames[-1]["type"] == "stream_stopped"
    finally:
        for each in made:
            await each.stop()


async def test_many_sessions_watched_at_once_are_all_followed(
    workers: tuple[Worker, Worker, AgentScript], caplog: pytest.LogCaptureFixture
) -> None:
    """Connections opening together on B: each session's channel is listened to (one command at a
    time on B's listening connection, none failing), and every run on A reaches its follower on B."""
    a, b, script = workers
    caplog.set_level(logging.WARNING)
    sessions = [await a.runtime.sessions.create("secretary") for _ in range(12)]
    watches = await asyncio.gather(*(b.runs.followers.watch(s.id, asyncio.Queue()) for s in sessions))
    for n, _ in enumerate(sessions):
        script.turn(f"answer {n}")
    runs = [await a.runs.start(s.id, "hi") for s in sessions]
    seen = {watch.session_id: await heard(watch) for watch in watches}
    ends = [(await frames(seen[s.id][0], "stream_end"))[-1] for s in sessions]
    assert sorted(e["content"] for e in ends) == sorted(f"answer {n}" for n in range(12))
    assert [e["run_id"] for e in ends] == [r.run_id for r in runs]
    assert not [r for r in caplog.records if "listen_failed" in r.getMessage()]


async def test_a_bus_closed_while_its_write_hangs_leaves_no_connection_behind(pg_url: str) -> None:
    """A close waits `close_wait` for what is queued, then cancels the writer: the connection it was
    writing on is closed with it, not left open for the garbage collector to find (a
    ResourceWarning in whatever runs then) and its server process waiting on for ever."""
    db = Database(postgres_url(pg_url))
    await migrate.upgrade(db)
    # One connection holds a lock the writer's statement waits on; another watches the server's
    # processes (a transaction sees the same snapshot of them throughout).
    blocker, watcher = await asyncpg.connect(asyncpg_dsn(db)), await asyncpg.connect(asyncpg_dsn(db))
    bus = PgBus(db, "w-hung")
    bus.close_wait = 0.5
    try:
        await bus.open(cast(Handlers, SimpleNamespace(resync=lambda: None)))
        holding = blocker.transaction()
        await holding.start()
        await blocker.execute("LOCK TABLE run_events IN ACCESS EXCLUSIVE MODE")
        bus._put(bus._frame_item("s-hung", "r-hung", 1, {"type": "stream_start", "seq": 1}))
        waiting = "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> $1"
        pid = None
        for _ in range(100):  # the writer connects, then waits on the lock
            pid = await watcher.fetchval(waiting, blocker.get_server_pid())
            if pid is not None:
                break
            await asyncio.sleep(0.05)
        assert pid is not None
        await bus.close()
        await holding.rollback()  # the write goes through, and its answer finds the socket closed
        alive = "SELECT count(*) FROM pg_stat_activity WHERE pid = $1"
        for _ in range(100):  # the server notices the closed socket
            if await watcher.fetchval(alive, pid) == 0:
                break
            await asyncio.sleep(0.05)
        assert await watcher.fetchval(alive, pid) == 0
    finally:
        await blocker.close()
        await watcher.close()
        await bus.close()
        await db.dispose()
