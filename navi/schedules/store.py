"""Where schedules, their runs and the sessions' unread marks are kept.

`ScheduleStore` is the interface; `InMemoryScheduleStore` (tests, runtimes without a database)
and `SqlScheduleStore` (SQLite, PostgreSQL; navi/storage/schedules.py) pass one contract suite
(tests/test_schedule_store.py).
`owner=None` means any owner; passing one restricts a call to that owner's schedules, so another
user's schedule is not found, exactly like one that does not exist.

`claim` is what keeps a run from happening twice: it moves a schedule's `next_run_at` from the
instant it was due to the next one, and records the run, in one transaction — and only when
`next_run_at` still is that instant. Two runners (two Navi processes on one PostgreSQL) that see
the same due schedule both try; one moves it, the other's condition no longer holds. A restart
finds `next_run_at` already moved, so a started run is never started again.
"""

from __future__ import annotations

import asyncio
import builtins
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from navi.llm.messages import utcnow
from navi.schedules.models import Schedule, ScheduleRun, utc

# Fields a PATCH may change (the runner's own fields are written through `claim`).
EDITABLE = frozenset(
    {
        "title",
        "prompt",
        "profile_id",
        "session_id",
        "deliver",
        "kind",
        "cron",
        "every_seconds",
        "at",
        "timezone",
        "missed",
        "paused",
        "done",
        "next_run_at",
    }
)
RUN_FIELDS = frozenset({"status", "finished_at", "session_id", "preview", "error"})


def _check(fields: Mapping[str, Any], allowed: frozenset[str]) -> None:
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"not an editable field: {', '.join(sorted(unknown))}")


class ScheduleStore(ABC):
    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare storage. The SQL store's tables come from the migrations run at start."""

    @abstractmethod
    async def create(self, schedule: Schedule) -> Schedule: ...

    @abstractmethod
    async def get(self, schedule_id: str, *, owner: str | None = None) -> Schedule | None: ...

    @abstractmethod
    async def list(self, *, owner: str | None = None) -> list[Schedule]:
        """Oldest first."""

    @abstractmethod
    async def update(
        self, schedule_id: str, fields: Mapping[str, Any], *, owner: str | None = None
    ) -> Schedule | None:
        """Change `fields` (names in `EDITABLE`) and `updated_at`; the schedule after, or None."""

    @abstractmethod
    async def delete(self, schedule_id: str, *, owner: str | None = None) -> bool:
        """Delete a schedule and its runs."""

    @abstractmethod
    async def due(self, now: datetime) -> builtins.list[Schedule]:
        """Schedules whose `next_run_at` has come, not paused, not done; earliest first."""

    @abstractmethod
    async def claim(self, expected: datetime, next_at: datetime | None, run: ScheduleRun) -> bool:
        """Move schedule `run.schedule_id` from `next_run_at == expected` to `next_at` (None: a
        one-off, now done) and record `run`, atomically; False when another claim came first,
        or the schedule was paused, re-timed or deleted meanwhile."""

    @abstractmethod
    async def add_run(self, run: ScheduleRun) -> bool:
        """Record a run started by hand ("run now"); False when the schedule is gone."""

    @abstractmethod
    async def update_run(self, run_id: str, fields: Mapping[str, Any]) -> None: ...

    @abstractmethod
    async def runs(self, schedule_id: str, *, limit: int = 20) -> builtins.list[ScheduleRun]:
        """The schedule's latest runs, newest first."""

    # --- unread marks: a scheduled run answered in a session nobody has looked at since ----------
    @abstractmethod
    async def mark_unread(self, session_id: str, owner: str) -> None: ...

    @abstractmethod
    async def mark_read(self, session_id: str, *, owner: str | None = None) -> bool:
        """Clear the mark; True when there was one."""

    @abstractmethod
    async def unread(self, *, owner: str | None = None) -> set[str]: ...


class InMemoryScheduleStore(ScheduleStore):
    def __init__(self) -> None:
        self._schedules: dict[str, Schedule] = {}
        self._runs: dict[str, ScheduleRun] = {}
        self._unread: dict[str, str] = {}  # session id → owner
        self._lock = asyncio.Lock()

    def _owned(self, schedule_id: str, owner: str | None) -> Schedule | None:
        found = self._schedules.get(schedule_id)
        return found if found is not None and owner in (None, found.owner) else None

    async def create(self, schedule: Schedule) -> Schedule:
        if schedule.id in self._schedules:
            raise ValueError(f"schedule {schedule.id} exists")
        self._schedules[schedule.id] = schedule.model_copy(deep=True)
        return schedule

    async def get(self, schedule_id: str, *, owner: str | None = None) -> Schedule | None:
        found = self._owned(schedule_id, owner)
        return found.model_copy(deep=True) if found else None

    async def list(self, *, owner: str | None = None) -> list[Schedule]:
        found = [s for s in self._schedules.values() if owner in (None, s.owner)]
        return [s.model_copy(deep=True) for s in sorted(found, key=lambda s: (s.created_at, s.id))]

    async def update(
        self, schedule_id: str, fields: Mapping[str, Any], *, owner: str | None = None
    ) -> Schedule | None:
        _check(fields, EDITABLE)
        found = self._owned(schedule_id, owner)
        if found is None:
            return None
        changed = Schedule.model_validate({**found.model_dump(), **fields, "updated_at": utcnow()})
        self._schedules[schedule_id] = changed
        return changed.model_copy(deep=True)

    async def delete(self, schedule_id: str, *, owner: str | None = None) -> bool:
        if self._owned(schedule_id, owner) is None:
            return False
        del self._schedules[schedule_id]
        for run_id in [r.id for r in self._runs.values() if r.schedule_id == schedule_id]:
            del self._runs[run_id]
        return True

    async def due(self, now: datetime) -> builtins.list[Schedule]:
        found = [
            s
            for s in self._schedules.values()
            if not s.paused and not s.done and s.next_run_at is not None and s.next_run_at <= utc(now)
        ]
        return [s.model_copy(deep=True) for s in sorted(found, key=lambda s: (s.next_run_at, s.id))]

    async def claim(self, expected: datetime, next_at: datetime | None, run: ScheduleRun) -> bool:
        async with self._lock:
            found = self._schedules.get(run.schedule_id)
            if found is None or found.paused or found.done or found.next_run_at != utc(expected):
                return False
            if any(r.schedule_id == run.schedule_id and r.due_at == run.due_at for r in self._runs.values()):
                return False
            self._schedules[found.id] = found.model_copy(
                update={
                    "next_run_at": next_at,
                    "last_run_at": utc(expected),
                    "done": next_at is None and found.kind == "at",
                }
            )
            self._runs[run.id] = run.model_copy(deep=True)
            return True

    async def add_run(self, run: ScheduleRun) -> bool:
        if run.schedule_id not in self._schedules:
            return False
        self._runs[run.id] = run.model_copy(deep=True)
        return True

    async def update_run(self, run_id: str, fields: Mapping[str, Any]) -> None:
        _check(fields, RUN_FIELDS)
        found = self._runs.get(run_id)
        if found is not None:
            self._runs[run_id] = found.model_copy(update=dict(fields))

    async def runs(self, schedule_id: str, *, limit: int = 20) -> builtins.list[ScheduleRun]:
        found = [r for r in self._runs.values() if r.schedule_id == schedule_id]
        found.sort(key=lambda r: (r.started_at, r.due_at), reverse=True)
        return [r.model_copy(deep=True) for r in found[:limit]]

    async def mark_unread(self, session_id: str, owner: str) -> None:
        self._unread[session_id] = owner

    async def mark_read(self, session_id: str, *, owner: str | None = None) -> bool:
        if self._unread.get(session_id) is None or owner not in (None, self._unread[session_id]):
            return False
        del self._unread[session_id]
        return True

    async def unread(self, *, owner: str | None = None) -> set[str]:
        return {sid for sid, who in self._unread.items() if owner in (None, who)}
