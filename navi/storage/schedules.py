"""The schedule store in SQLAlchemy Core, on SQLite or PostgreSQL through `Database`.

Instants are written as UTC and read back as aware UTC datetimes (SQLite keeps them as text
without an offset, so everything written must already be UTC for comparisons to hold). A claim is
one write transaction: an `UPDATE … WHERE next_run_at = :expected` that only one claimer can
match — PostgreSQL re-checks the condition after waiting for a competing update of the row, SQLite
serialises writers (`BEGIN IMMEDIATE`) — followed by the run's insert, whose (schedule, due
instant) key is unique besides.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from navi.llm.messages import utcnow
from navi.schedules.models import Schedule, ScheduleRun, utc
from navi.schedules.store import EDITABLE, RUN_FIELDS, ScheduleStore, _check
from navi.storage.database import Database
from navi.storage.schema import schedule_runs, schedules, session_unread

_INSTANTS = (
    "at",
    "next_run_at",
    "last_run_at",
    "created_at",
    "updated_at",
    "due_at",
    "started_at",
    "finished_at",
)


def _utc_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values as stored: instants in UTC, a schedule's `deliver` as JSON text."""
    return {
        k: utc(v)
        if k in _INSTANTS and isinstance(v, datetime)
        else (json.dumps(v) if k == "deliver" and isinstance(v, dict) else v)
        for k, v in values.items()
    }


def _schedule(row: Any) -> Schedule:
    values = _utc_fields(row._mapping)
    if isinstance(values.get("deliver"), str):
        values["deliver"] = json.loads(values["deliver"])
    return Schedule.model_validate(values)


def _run(row: Any) -> ScheduleRun:
    return ScheduleRun.model_validate(_utc_fields(row._mapping))


def _owned(query: Any, owner: str | None) -> Any:
    return query if owner is None else query.where(schedules.c.owner == owner)


class SqlScheduleStore(ScheduleStore):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, schedule: Schedule) -> Schedule:
        values = _utc_fields(schedule.model_dump())
        await self.db.write(lambda conn: conn.execute(insert(schedules).values(**values)))
        return schedule

    async def get(self, schedule_id: str, *, owner: str | None = None) -> Schedule | None:
        def run(conn: Connection) -> Schedule | None:
            row = conn.execute(_owned(select(schedules).where(schedules.c.id == schedule_id), owner)).first()
            return _schedule(row) if row is not None else None

        return await self.db.read(run)

    async def list(self, *, owner: str | None = None) -> list[Schedule]:
        query = _owned(select(schedules), owner).order_by(schedules.c.created_at, schedules.c.id)
        return await self.db.read(lambda conn: [_schedule(r) for r in conn.execute(query)])

    async def update(
        self, schedule_id: str, fields: Mapping[str, Any], *, owner: str | None = None
    ) -> Schedule | None:
        _check(fields, EDITABLE)
        values = _utc_fields({**fields, "updated_at": utcnow()})

        def run(conn: Connection) -> Schedule | None:
            stmt = _owned(update(schedules).where(schedules.c.id == schedule_id), owner).values(**values)
            if conn.execute(stmt).rowcount != 1:
                return None
            row = conn.execute(select(schedules).where(schedules.c.id == schedule_id)).first()
            return _schedule(row)

        return await self.db.write(run)

    async def delete(self, schedule_id: str, *, owner: str | None = None) -> bool:
        def run(conn: Connection) -> bool:
            # Runs first: SQLite enforces the cascade only with foreign keys on, which Navi sets,
            # but a database opened by another tool may not.
            if conn.execute(
                _owned(select(schedules.c.id).where(schedules.c.id == schedule_id), owner)
            ).first():
                conn.execute(delete(schedule_runs).where(schedule_runs.c.schedule_id == schedule_id))
                conn.execute(delete(schedules).where(schedules.c.id == schedule_id))
                return True
            return False

        return await self.db.write(run)

    async def due(self, now: datetime) -> builtins.list[Schedule]:
        query = (
            select(schedules)
            .where(
                schedules.c.next_run_at.is_not(None),
                schedules.c.next_run_at <= utc(now),
                schedules.c.paused.is_(False),
                schedules.c.done.is_(False),
            )
            .order_by(schedules.c.next_run_at, schedules.c.id)
        )
        return await self.db.read(lambda conn: [_schedule(r) for r in conn.execute(query)])

    async def claim(self, expected: datetime, next_at: datetime | None, run: ScheduleRun) -> bool:
        values = _utc_fields(run.model_dump())

        def work(conn: Connection) -> bool:
            kind = conn.execute(select(schedules.c.kind).where(schedules.c.id == run.schedule_id)).scalar()
            moved = conn.execute(
                update(schedules)
                .where(
                    schedules.c.id == run.schedule_id,
                    schedules.c.next_run_at == utc(expected),
                    schedules.c.paused.is_(False),
                    schedules.c.done.is_(False),
                )
                .values(
                    next_run_at=utc(next_at) if next_at else None,
                    last_run_at=utc(expected),
                    done=next_at is None and kind == "at",
                )
            )
            if moved.rowcount != 1:
                return False
            conn.execute(insert(schedule_runs).values(**values))
            return True

        try:
            return await self.db.write(work)
        except IntegrityError:  # this due instant was claimed before (the unique key): never twice
            return False

    async def add_run(self, run: ScheduleRun) -> bool:
        values = _utc_fields(run.model_dump())

        def work(conn: Connection) -> bool:
            if conn.execute(select(schedules.c.id).where(schedules.c.id == run.schedule_id)).first() is None:
                return False
            conn.execute(insert(schedule_runs).values(**values))
            return True

        try:
            return await self.db.write(work)
        except IntegrityError:
            return False

    async def update_run(self, run_id: str, fields: Mapping[str, Any]) -> None:
        _check(fields, RUN_FIELDS)
        values = _utc_fields(fields)
        await self.db.write(
            lambda conn: conn.execute(
                update(schedule_runs).where(schedule_runs.c.id == run_id).values(**values)
            )
        )

    async def runs(self, schedule_id: str, *, limit: int = 20) -> builtins.list[ScheduleRun]:
        query = (
            select(schedule_runs)
            .where(schedule_runs.c.schedule_id == schedule_id)
            .order_by(schedule_runs.c.started_at.desc(), schedule_runs.c.due_at.desc())
            .limit(limit)
        )
        return await self.db.read(lambda conn: [_run(r) for r in conn.execute(query)])

    async def mark_unread(self, session_id: str, owner: str) -> None:
        def work(conn: Connection) -> None:
            conn.execute(delete(session_unread).where(session_unread.c.session_id == session_id))
            conn.execute(
                insert(session_unread).values(session_id=session_id, owner=owner, marked_at=utcnow())
            )

        try:
            await self.db.write(work)
        except IntegrityError:  # the session was deleted meanwhile: nothing to mark
            pass

    async def mark_read(self, session_id: str, *, owner: str | None = None) -> bool:
        stmt = delete(session_unread).where(session_unread.c.session_id == session_id)
        if owner is not None:
            stmt = stmt.where(session_unread.c.owner == owner)
        return bool(await self.db.write(lambda conn: conn.execute(stmt).rowcount))

    async def unread(self, *, owner: str | None = None) -> set[str]:
        query = select(session_unread.c.session_id)
        if owner is not None:
            query = query.where(session_unread.c.owner == owner)
        return await self.db.read(lambda conn: {r.session_id for r in conn.execute(query)})
