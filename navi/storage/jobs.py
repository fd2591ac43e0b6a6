"""Background jobs in SQL (`jobs`, migrations 0028, 0030: its `mode`, and 0033: a research job's
`plan`, its sub-questions as a JSON list, and `sources`, how many it read). A claim picks the
oldest queued job, or a running one whose lease ran out, and takes it with an UPDATE that repeats
the condition, so two workers never both take one (PostgreSQL skips a row another worker is
claiming). Leases are on the database's clock. The model and the interface are in `navi.jobs`."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    func,
    select,
    update,
)

from navi.jobs.models import ACTIVE, Job, JobLimit, JobState, JobStore
from navi.llm.messages import utcnow
from navi.sessions.models import as_utc
from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.schema import metadata

jobs = Table(
    "jobs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("owner", String(128), nullable=False),
    Column("title", String(200), nullable=False),
    Column("prompt", Text, nullable=False),
    Column("mode", String(16), nullable=False, server_default="task"),
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("origin_session_id", String(36), nullable=True),
    Column("state", String(16), nullable=False),
    Column("steps", Integer, nullable=False, default=0),
    Column("max_steps", Integer, nullable=False),
    Column("max_seconds", Integer, nullable=False),
    Column("last_step", String(200), nullable=True),
    Column("plan", Text, nullable=True),
    Column("sources", Integer, nullable=False, server_default="0"),
    Column("result", Text, nullable=True),
    Column("error", Text, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("stop_requested", Boolean, nullable=False, default=False),
    Column("lease_worker", String(200), nullable=True),
    Column("lease_until", Float, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("finished_at", DateTime(timezone=True), nullable=True),
)
J = jobs.c
FIELDS = [c for c in jobs.c if c.name not in ("lease_worker", "lease_until")]


def _job(row: Any) -> Job:
    data = {c.name: getattr(row, c.name) for c in FIELDS}
    for name in ("created_at", "started_at", "finished_at"):
        if data[name] is not None:
            data[name] = as_utc(data[name])
    data["plan"] = _plan(data["plan"])
    return Job.model_validate(data)


def _plan(stored: str | None) -> list[str]:
    try:
        found = json.loads(stored) if stored else []
    except ValueError:
        return []
    return [str(q) for q in found] if isinstance(found, list) else []


def _values(changes: dict[str, Any]) -> dict[str, Any]:
    """A job's fields as the row keeps them (the plan as JSON)."""
    if "plan" in changes:
        changes = {**changes, "plan": json.dumps(changes["plan"], ensure_ascii=False)}
    return changes


class SqlJobStore(JobStore):
    def __init__(self, db: Database) -> None:
        self.db = db
        self._now = db_now(db.dialect)

    async def create(self, job: Job, *, limit: int) -> Job:
        values = _values(job.model_dump(exclude={"progress"}))

        def write(conn: Connection) -> None:
            active = (
                select(func.count()).select_from(jobs).where((J.owner == job.owner) & J.state.in_(ACTIVE))
            )
            if conn.execute(active).scalar_one() >= limit:
                raise JobLimit(
                    f"you have {limit} background jobs waiting or running: wait for one to end, or stop one"
                )
            conn.execute(jobs.insert().values(**values))

        await self.db.write(write)
        return job

    async def get(self, job_id: str, *, owner: str | None = None) -> Job | None:
        query = select(*FIELDS).where(J.id == job_id)
        if owner is not None:
            query = query.where(J.owner == owner)
        row = await self.db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _job(row)

    async def list(self, owner: str, *, limit: int = 50) -> list[Job]:
        query = select(*FIELDS).where(J.owner == owner).order_by(J.created_at.desc()).limit(limit)
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return [_job(row) for row in rows]

    async def by_session(self, session_id: str) -> Job | None:
        query = select(*FIELDS).where(J.session_id == session_id).limit(1)
        row = await self.db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _job(row)

    def _claimable(self) -> Any:
        lapsed = (J.state == "running") & ((J.lease_until.is_(None)) | (J.lease_until < self._now))
        return (J.state == "queued") | lapsed

    async def claim(self, worker: str, lease_seconds: float) -> Job | None:
        postgres = self.db.dialect == "postgresql"

        def run(conn: Connection) -> Job | None:
            pick = select(J.id).where(self._claimable()).order_by(J.created_at, J.id).limit(1)
            if postgres:
                pick = pick.with_for_update(skip_locked=True)
            chosen = conn.execute(pick).scalar()
            if chosen is None:
                return None
            taken = conn.execute(
                update(jobs)
                .where((J.id == chosen) & self._claimable())
                .values(
                    state="running",
                    attempts=J.attempts + 1,
                    lease_worker=worker,
                    lease_until=self._now + lease_seconds,
                    started_at=func.coalesce(J.started_at, utcnow()),
                )
            )
            if taken.rowcount != 1:
                return None
            return _job(conn.execute(select(*FIELDS).where(J.id == chosen)).one())

        waiting = select(J.id).where(self._claimable()).limit(1)  # a read first: most polls find none
        if await self.db.read(lambda conn: conn.execute(waiting).scalar()) is None:
            return None
        return await self.db.write(run)

    def _mine(self, job_id: str, worker: str) -> Any:
        return (J.id == job_id) & (J.state == "running") & (J.lease_worker == worker)

    async def heartbeat(
        self, job_id: str, worker: str, lease_seconds: float, changes: dict[str, Any]
    ) -> Job | None:
        statement = (
            update(jobs)
            .where(self._mine(job_id, worker))
            .values(lease_until=self._now + lease_seconds, **_values(changes))
        )

        def write(conn: Connection) -> Job | None:
            if conn.execute(statement).rowcount != 1:
                return None
            return _job(conn.execute(select(*FIELDS).where(J.id == job_id)).one())

        return await self.db.write(write)

    async def finish(
        self,
        job_id: str,
        worker: str,
        state: JobState,
        *,
        result: str | None = None,
        error: str | None = None,
    ) -> bool:
        statement = (
            update(jobs)
            .where(self._mine(job_id, worker))
            .values(
                state=state,
                result=result,
                error=error,
                finished_at=utcnow(),
                lease_worker=None,
                lease_until=None,
            )
        )
        return bool(await self.db.write(lambda conn: conn.execute(statement).rowcount))

    async def request_stop(self, job_id: str, owner: str) -> Job | None:
        mine = (J.id == job_id) & (J.owner == owner)

        def write(conn: Connection) -> None:
            conn.execute(
                update(jobs)
                .where(mine & (J.state == "queued"))
                .values(state="stopped", finished_at=utcnow(), error="stopped before it started")
            )
            conn.execute(update(jobs).where(mine & (J.state == "running")).values(stop_requested=True))

        await self.db.write(write)
        return await self.get(job_id, owner=owner)
