"""The runner: finds due schedules, claims each due instant in the database, and starts it.

It knows nothing of the agent or the API: whoever builds it hands in `execute(schedule, run)`,
which does the run (the API layer runs it through the agent like a sent message) and records how
it ended. The runner only decides *whether* and *when*:

- Due means `next_run_at <= now`, for schedules neither paused nor done.
- Before anything starts, the due instant is claimed (`ScheduleStore.claim`): `next_run_at` moves
  to the following instant and the run is recorded, atomically. Whoever loses a claim (another
  Navi process on the same PostgreSQL) does nothing; after a restart the instant is gone, so a
  run is never started twice.
- A due instant more than `missed_grace` seconds old was missed (Navi was not running). The
  schedule's policy decides: `skip` records the run as skipped and moves on; `once` runs it now,
  once, however many instants were missed (the next instant is computed from now).
- A failing run is recorded with its error (`execute` raising is caught here too); the schedule
  goes on.

Time comes from an injectable clock: the loop calls `tick(clock.now())` every `poll_seconds`;
tests call `tick(now)` directly with the instants they choose, and `drain()` to wait for the runs
started.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Protocol

import structlog

from navi.llm.messages import utcnow
from navi.schedules import when
from navi.schedules.models import Schedule, ScheduleRun, utc
from navi.schedules.store import ScheduleStore

log = structlog.stdlib.get_logger(__name__)

Execute = Callable[[Schedule, ScheduleRun], Awaitable[None]]


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return utcnow()


class ScheduleRunner:
    def __init__(
        self,
        store: ScheduleStore,
        execute: Execute,
        *,
        clock: Clock | None = None,
        poll_seconds: float = 5.0,
        missed_grace_seconds: float = 60.0,
    ) -> None:
        self.store = store
        self.execute = execute
        self.clock = clock or SystemClock()
        self.poll_seconds = poll_seconds
        self.missed_grace = timedelta(seconds=max(missed_grace_seconds, 3 * poll_seconds))
        self._tasks: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None

    # --- deciding ----------------------------------------------------------------------------------
    async def tick(self, now: datetime | None = None) -> list[ScheduleRun]:
        """Claim and start every run due at `now`; the runs this runner started (or skipped)."""
        now = utc(now or self.clock.now())
        claimed = []
        for schedule in await self.store.due(now):
            assert schedule.next_run_at is not None
            due = schedule.next_run_at
            try:
                following = when.next_run(schedule, now, anchor=due)
            except when.ScheduleError as exc:  # e.g. a zone that vanished from tzdata: say so, stop it
                following = None
                log.warning("schedule.unusable", schedule_id=schedule.id, error=str(exc))
            missed = now - due > self.missed_grace
            if missed and schedule.missed == "skip":
                run = ScheduleRun(
                    schedule_id=schedule.id,
                    owner=schedule.owner,
                    due_at=due,
                    started_at=now,
                    finished_at=now,
                    status="skipped",
                    error=f"missed: Navi was not running at {when.describe(due, schedule.timezone)}",
                )
                if await self.store.claim(due, following, run):
                    claimed.append(run)
                continue
            run = ScheduleRun(schedule_id=schedule.id, owner=schedule.owner, due_at=due, started_at=now)
            if await self.store.claim(due, following, run):
                claimed.append(run)
                self._start(schedule, run)
        return claimed

    async def run_now(self, schedule: Schedule) -> ScheduleRun | None:
        """Start a run of `schedule` at once, outside its timing (None: it was deleted meanwhile)."""
        now = utc(self.clock.now())
        run = ScheduleRun(
            schedule_id=schedule.id, owner=schedule.owner, due_at=now, started_at=now, manual=True
        )
        if not await self.store.add_run(run):
            return None
        self._start(schedule, run)
        return run

    def _start(self, schedule: Schedule, run: ScheduleRun) -> None:
        task = asyncio.create_task(self._execute(schedule, run))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _execute(self, schedule: Schedule, run: ScheduleRun) -> None:
        log.info("schedule.run_started", schedule_id=schedule.id, run_id=run.id, manual=run.manual)
        try:
            await self.execute(schedule, run)
        except Exception as exc:  # recorded; the schedule goes on
            log.exception("schedule.run_crashed", schedule_id=schedule.id, run_id=run.id)
            with contextlib.suppress(Exception):
                await self.store.update_run(
                    run.id,
                    {
                        "status": "error",
                        "error": f"{type(exc).__name__}: {exc}",
                        "finished_at": utc(self.clock.now()),
                    },
                )

    async def drain(self) -> None:
        """Wait for every run this runner started to end."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # --- the loop ----------------------------------------------------------------------------------
    def wake(self) -> None:
        """Look for due runs now rather than at the next poll (a schedule was made or changed)."""
        self._wake.set()

    def start(self) -> None:
        self._stop.clear()
        self._loop = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while not self._stop.is_set():
            try:
                await self.tick()
            except Exception:  # a database hiccup: try again at the next poll
                log.exception("schedule.tick_failed")
            self._wake.clear()
            waits = [asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(self._wake.wait())]
            await asyncio.wait(waits, timeout=self.poll_seconds, return_when=asyncio.FIRST_COMPLETED)
            for waiting in waits:
                waiting.cancel()

    async def stop(self, grace: float = 10.0) -> None:
        """Stop looking for due runs; wait up to `grace` seconds for started ones (whose agent runs
        the run manager stops at shutdown) to record how they ended."""
        self._stop.set()
        if self._loop is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop
            self._loop = None
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
