"""The runner on a controlled clock: `tick(now)` is called with chosen instants, so cron, interval
and one-off schedules are shown firing exactly when they should — across the DST changes of
Europe/Berlin too — and never twice: not after a restart, not with two runners on one PostgreSQL.
Missed runs follow their policy, a failing run is recorded and the schedule goes on, paused
schedules do not fire. The store is the real SQL store; what a run does is a recording stand-in
here (tests/test_schedules_api.py runs them through the agent)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from navi.profiles.base import AgentProfile
from navi.profiles.registry import ProfileRegistry
from navi.schedules import Schedule, ScheduleRun
from navi.schedules.runner import ScheduleRunner
from navi.schedules.service import NewSchedule, ScheduleService
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.schedules import SqlScheduleStore
from navi.storage.sessions import SqlSessionStore

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(*args: int) -> datetime:
    return datetime(*args, tzinfo=BERLIN).astimezone(UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.at = now

    def now(self) -> datetime:
        return self.at


class Recorder:
    """Does a run: records (title, due instant) and marks it ok — or fails, when told to."""

    def __init__(self, store: SqlScheduleStore, fail: bool = False) -> None:
        self.store = store
        self.fail = fail
        self.ran: list[tuple[str, datetime]] = []

    async def __call__(self, schedule: Schedule, run: ScheduleRun) -> None:
        self.ran.append((schedule.title, run.due_at))
        if self.fail:
            raise RuntimeError("the model server is on fire")
        await self.store.update_run(run.id, {"status": "ok", "finished_at": run.started_at})


class World:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.store = SqlScheduleStore(db)
        profiles = ProfileRegistry()
        profiles.register(AgentProfile(id="secretary", name="S", description="", system_prompt=""))
        self.service = ScheduleService(
            self.store,
            sessions=SqlSessionStore(db),
            profiles=profiles,
            zone_name="Europe/Berlin",
            now=clock.now,
        )
        self.did = Recorder(self.store)
        self.runner = self.new_runner()

    def new_runner(self, store: SqlScheduleStore | None = None) -> ScheduleRunner:
        return ScheduleRunner(store or self.store, self.did, clock=self.clock, missed_grace_seconds=60)

    async def tick(self, at: datetime) -> list[ScheduleRun]:
        self.clock.at = at
        runs = await self.runner.tick(at)
        await self.runner.drain()
        return runs

    async def fire_times(self, until: datetime, step: timedelta = timedelta(minutes=1)) -> None:
        """Tick every `step` from the clock's instant to `until`, as the loop would."""
        at = self.clock.at
        while at <= until:
            await self.tick(at)
            at += step


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    db = Database(sqlite_url(tmp_path / "navi.db"))
    await migrate.upgrade(db)
    try:
        yield World(db, Clock(berlin(2026, 3, 28, 12, 0)))
    finally:
        await db.dispose()


async def test_cron_fires_at_its_instants_across_spring_forward(world: World) -> None:
    # 29 March 2026: 02:00 → 03:00 in Berlin. A 02:30 job runs right after the jump, at 03:00.
    await world.service.create("alice", NewSchedule(prompt="p", title="night", cron="30 2 * * *"))
    await world.fire_times(berlin(2026, 3, 31, 3, 0))
    assert [due for _, due in world.did.ran] == [
        berlin(2026, 3, 29, 3, 0),
        berlin(2026, 3, 30, 2, 30),
        berlin(2026, 3, 31, 2, 30),
    ]


async def test_cron_fires_once_in_the_repeated_hour_of_fall_back(world: World) -> None:
    # 25 October 2026: 03:00 → 02:00; 01:30 and 02:30 happen once and twice on the wall clock.
    world.clock.at = berlin(2026, 10, 24, 12, 0)
    await world.service.create("alice", NewSchedule(prompt="p", title="one-thirty", cron="30 1 * * *"))
    await world.service.create("alice", NewSchedule(prompt="p", title="two-thirty", cron="30 2 * * *"))
    await world.fire_times(berlin(2026, 10, 26, 3, 0), step=timedelta(minutes=5))
    ran = [(title, due.isoformat()) for title, due in world.did.ran]
    assert ran == [
        ("one-thirty", "2026-10-24T23:30:00+00:00"),  # 01:30 CEST
        ("two-thirty", "2026-10-25T00:30:00+00:00"),  # 02:30 CEST, the first of two: once
        ("one-thirty", "2026-10-26T00:30:00+00:00"),  # 01:30 CET
        ("two-thirty", "2026-10-26T01:30:00+00:00"),  # 02:30 CET
    ]


async def test_an_interval_counts_elapsed_seconds_across_dst(world: World) -> None:
    world.clock.at = berlin(2026, 10, 25, 0, 10)
    made = await world.service.create("alice", NewSchedule(prompt="p", every_seconds=3600))
    assert made.next_run_at == world.clock.at + timedelta(hours=1)
    await world.fire_times(berlin(2026, 10, 25, 5, 0))
    dues = [due for _, due in world.did.ran]
    assert len(dues) == 5 and all(b - a == timedelta(seconds=3600) for a, b in itertools.pairwise(dues))
    # On the wall clock, 02:10 comes twice that night: an interval runs at both.
    walls = [d.astimezone(BERLIN).strftime("%H:%M") for d in dues]
    assert walls == ["01:10", "02:10", "02:10", "03:10", "04:10"]


async def test_a_one_off_fires_once_and_stays_listed_done(world: World) -> None:
    made = await world.service.create("alice", NewSchedule(prompt="call Anna", at="2026-03-29T09:00"))
    assert made.at == berlin(2026, 3, 29, 9, 0) and made.missed == "once"
    assert await world.tick(berlin(2026, 3, 29, 8, 59, 59)) == []
    assert len(await world.tick(berlin(2026, 3, 29, 9, 0))) == 1
    assert await world.tick(berlin(2026, 3, 29, 9, 1)) == []
    listed = await world.store.list()
    assert [s.id for s in listed] == [made.id] and listed[0].done and listed[0].next_run_at is None
    assert [r.status for r in await world.store.runs(made.id)] == ["ok"]


async def test_a_restart_does_not_run_a_claimed_instant_again(world: World, tmp_path: Path) -> None:
    await world.service.create("alice", NewSchedule(prompt="p", cron="0 9 * * *"))
    nine = berlin(2026, 3, 29, 9, 0)
    assert len(await world.tick(nine)) == 1
    # A new process: its own database connection and runner, at the same instant and a bit later.
    db = Database(sqlite_url(tmp_path / "navi.db"))
    try:
        again = world.new_runner(SqlScheduleStore(db))
        assert await again.tick(nine) == [] and await again.tick(nine + timedelta(seconds=30)) == []
        await again.drain()
    finally:
        await db.dispose()
    assert len(world.did.ran) == 1


@pytest.mark.postgres
async def test_two_runners_on_one_postgres_run_each_instant_once(pg_url: str) -> None:
    dbs = [Database(postgres_url(pg_url)) for _ in range(2)]
    await migrate.upgrade(dbs[0])
    try:
        clock = Clock(berlin(2026, 3, 28, 12, 0))
        one, two = World(dbs[0], clock), World(dbs[1], clock)
        for n in range(5):
            await one.service.create("alice", NewSchedule(prompt="p", title=f"s{n}", every_seconds=60))
        for minute in range(1, 4):
            at = clock.at + timedelta(minutes=1)
            clock.at = at
            await asyncio.gather(one.runner.tick(at), two.runner.tick(at))
            await asyncio.gather(one.runner.drain(), two.runner.drain())
            ran = sorted(one.did.ran + two.did.ran)
            assert len(ran) == 5 * minute and len(set(ran)) == len(ran)  # each instant once
    finally:
        for db in dbs:
            await db.dispose()


async def test_missed_runs_follow_their_policy(world: World) -> None:
    skip = await world.service.create(
        "alice", NewSchedule(prompt="p", title="skip", cron="0 * * * *", missed="skip")
    )
    once = await world.service.create(
        "alice", NewSchedule(prompt="p", title="once", cron="0 * * * *", missed="once")
    )
    # Navi was down from 12:00 to 17:20: five instants of each were missed.
    back = berlin(2026, 3, 28, 17, 20)
    await world.tick(back)
    assert world.did.ran == [("once", berlin(2026, 3, 28, 13, 0))]  # once, for the first missed instant
    skipped = await world.store.runs(skip.id)
    assert [r.status for r in skipped] == ["skipped"] and "missed: Navi was not running" in (
        skipped[0].error or ""
    )
    for s in (skip, once):  # both go on from now, with no burst
        current = await world.store.get(s.id)
        assert current is not None and current.next_run_at == berlin(2026, 3, 28, 18, 0)
    # Just late (within the grace) is not missed: it runs.
    await world.tick(berlin(2026, 3, 28, 18, 0, 30))
    assert sorted(t for t, _ in world.did.ran[1:]) == ["once", "skip"]


async def test_a_failing_run_is_recorded_and_the_schedule_goes_on(world: World) -> None:
    made = await world.service.create("alice", NewSchedule(prompt="p", every_seconds=60))
    world.did.fail = True
    await world.tick(world.clock.at + timedelta(seconds=60))
    failed = await world.store.runs(made.id)
    assert failed[0].status == "error" and failed[0].error == "RuntimeError: the model server is on fire"
    world.did.fail = False
    await world.tick(world.clock.at + timedelta(seconds=60))
    assert [r.status for r in await world.store.runs(made.id)] == ["ok", "error"]


async def test_paused_schedules_do_not_fire_and_resume_from_now(world: World) -> None:
    made = await world.service.create("alice", NewSchedule(prompt="p", every_seconds=60, paused=True))
    await world.fire_times(world.clock.at + timedelta(minutes=10))
    assert world.did.ran == []
    resumed = await world.service.edit(made.id, "alice", {"paused": False})
    assert resumed is not None and resumed.next_run_at == world.clock.at + timedelta(seconds=60)
    await world.tick(world.clock.at + timedelta(seconds=60))
    assert len(world.did.ran) == 1


async def test_the_loop_starts_a_due_run_within_its_poll(world: World) -> None:
    """The real loop on the real clock, polling every 0.1 s: a run due now starts promptly."""
    runner = ScheduleRunner(world.store, world.did, poll_seconds=0.1)
    world.clock.at = datetime.now(UTC)  # the service checks "not in the past" on the loop's clock
    await world.service.create(
        "alice",
        NewSchedule(prompt="p", title="now", at=(world.clock.at + timedelta(seconds=0.3)).isoformat()),
    )
    runner.start()
    try:
        for _ in range(200):
            if world.did.ran:
                break
            await asyncio.sleep(0.05)
    finally:
        await runner.stop()
    assert [t for t, _ in world.did.ran] == ["now"]
