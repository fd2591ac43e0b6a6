"""Session leases: which run holds a session, as a database row every Navi process sees.

At most one turn runs in a session at a time, whichever process accepted it: `navi serve`,
`navi mcp` and the workers of a PostgreSQL deployment all take the session's row in `run_leases`
before a run starts, and a second taker gets `None` (the caller answers `busy`). The row names the
run, the worker that runs it, whether the turn has answered already (only post-turn work left,
which a new message may stop) and when the lease expires.

Its worker renews every lease it holds every `0.15 × seconds`; a lease not renewed for
`0.5 × seconds` has expired (three renewals missed), so whoever checks next (every `0.15 × seconds`)
finds it within `0.65 × seconds` of the worker's end, the rest of `seconds` being the margin for
the clean-up itself. Such a worker is gone (killed, its machine down), and `expired()` hands the
lease to whoever cleans up after it (`navi/runs/slots.py`: the turn is marked failed with
`worker_lost`). A worker on this same machine that no longer exists (its process id is gone or now
belongs to another process) has lost its leases at once, without waiting for them to expire — a
`navi serve` killed and started again finds its sessions free.

Times are the database's own clock (`clock_timestamp()` on PostgreSQL, `julianday('now')` on
SQLite), as seconds since the epoch, so workers on machines whose clocks disagree still agree on
when a lease expires. `MemoryLeases` is the same for one process without a database (tests).
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from dataclasses import dataclass
from typing import Literal, Protocol

from sqlalchemy import Connection, and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.schema import run_leases

LeaseKind = Literal["turn", "store"]  # a turn of the agent, or messages stored without an answer
EXPIRY = 0.5  # a lease expires this share of RUN_LEASE_SECONDS after its last renewal
BEAT = 0.15  # … and is renewed (and others' checked) every this share of it


@dataclass(frozen=True)
class Lease:
    session_id: str
    run_id: str
    worker: str
    kind: LeaseKind = "turn"
    answered: bool = False


def _start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc), or None when there is no
    such process, it is a zombie, or this system has no /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "-"


def worker_name() -> str:
    """This process as a lease holder: machine, PID namespace, process id and start time (so a
    process id used again by another process is not taken for this one), and a random part."""
    pid = os.getpid()
    return f"{socket.gethostname()}/{_pid_namespace()}/{pid}/{_start_time(pid) or '-'}/{uuid.uuid4().hex[:6]}"


def gone_here(worker: str) -> bool:
    """True when `worker` was a process of this machine (same host name and PID namespace) that
    no longer runs. False whenever that cannot be known for sure: only expiry tells then."""
    parts = worker.split("/")
    if len(parts) != 5 or parts[3] == "-":
        return False
    host, namespace, pid, started, _nonce = parts
    if host != socket.gethostname() or namespace != _pid_namespace() or not pid.isdigit():
        return False
    if not os.path.isdir("/proc/self"):
        return False
    return _start_time(int(pid)) != started


class Leases(Protocol):
    """Where session leases live. `worker` is this process's name in them."""

    worker: str
    seconds: float

    async def acquire(
        self, session_id: str, run_id: str, kind: LeaseKind = "turn", *, replacing: str | None = None
    ) -> Lease | None:
        """Take the session for `run_id`; None when another run holds it. `replacing`: a run of this
        worker that holds it and may hand it over (an answered turn the new one stopped)."""
        ...

    async def holder(self, session_id: str) -> Lease | None: ...

    async def held(self) -> list[Lease]:
        """Every lease, of every worker (the sessions with a run going)."""
        ...

    async def answered(self, session_id: str, run_id: str) -> None:
        """The turn has answered: a new message may stop what is left of it."""
        ...

    async def release(self, session_id: str, run_id: str) -> None: ...

    async def renew(self) -> set[str]:
        """Extend every lease this worker holds; the runs that still hold one."""
        ...

    async def expired(self) -> list[Lease]:
        """Leases of other workers that are gone: expired, or of a dead process of this machine."""
        ...

    async def take(self, lease: Lease) -> bool:
        """Delete an expired lease, once: True for the one caller that did (it cleans up)."""
        ...


class MemoryLeases:
    """Leases of one process, in memory (no database: tests, read-only runtimes)."""

    def __init__(self, worker: str | None = None, seconds: float = 10.0) -> None:
        self.worker = worker or worker_name()
        self.seconds = seconds
        self._leases: dict[str, Lease] = {}

    async def acquire(
        self, session_id: str, run_id: str, kind: LeaseKind = "turn", *, replacing: str | None = None
    ) -> Lease | None:
        held = self._leases.get(session_id)
        if held is not None and held.run_id != replacing:
            return None
        lease = Lease(session_id, run_id, self.worker, kind)
        self._leases[session_id] = lease
        return lease

    async def holder(self, session_id: str) -> Lease | None:
        return self._leases.get(session_id)

    async def held(self) -> list[Lease]:
        return list(self._leases.values())

    async def answered(self, session_id: str, run_id: str) -> None:
        held = self._leases.get(session_id)
        if held is not None and held.run_id == run_id:
            self._leases[session_id] = Lease(session_id, run_id, held.worker, held.kind, answered=True)

    async def release(self, session_id: str, run_id: str) -> None:
        held = self._leases.get(session_id)
        if held is not None and held.run_id == run_id:
            del self._leases[session_id]

    async def renew(self) -> set[str]:
        return {lease.run_id for lease in self._leases.values()}

    async def expired(self) -> list[Lease]:
        return []

    async def take(self, lease: Lease) -> bool:
        return False


def _lease(row: object) -> Lease:
    return Lease(
        session_id=row.session_id,  # type: ignore[attr-defined]
        run_id=row.run_id,  # type: ignore[attr-defined]
        worker=row.worker,  # type: ignore[attr-defined]
        kind=row.kind,  # type: ignore[attr-defined]
        answered=bool(row.answered),  # type: ignore[attr-defined]
    )


class SqlLeases:
    """Leases as rows of `run_leases`, on SQLite or PostgreSQL."""

    def __init__(self, db: Database, *, worker: str | None = None, seconds: float = 10.0) -> None:
        self.db = db
        self.worker = worker or worker_name()
        self.seconds = seconds
        self._now = db_now(db.dialect)

    @property
    def _until(self) -> ColumnElement[float]:
        return self._now + self.seconds * EXPIRY

    async def acquire(
        self, session_id: str, run_id: str, kind: LeaseKind = "turn", *, replacing: str | None = None
    ) -> Lease | None:
        table = run_leases.c
        row = {
            "run_id": run_id,
            "worker": self.worker,
            "kind": kind,
            "answered": False,
            "expires_at": self._until,
            "started_at": self._now,
        }

        def take(conn: Connection) -> bool:
            if replacing is not None:
                handed = conn.execute(
                    update(run_leases)
                    .where(
                        and_(
                            table.session_id == session_id,
                            table.run_id == replacing,
                            table.worker == self.worker,
                        )
                    )
                    .values(**row)
                )
                if handed.rowcount:
                    return True
            found = conn.execute(select(table.run_id).where(table.session_id == session_id)).first()
            if found is not None:
                return False
            conn.execute(insert(run_leases).values(session_id=session_id, **row))
            return True

        try:
            taken = await self.db.write(take)
        except IntegrityError:  # another worker inserted it between our look and our insert
            return None
        return Lease(session_id, run_id, self.worker, kind) if taken else None

    async def holder(self, session_id: str) -> Lease | None:
        query = select(run_leases).where(run_leases.c.session_id == session_id)
        found = await self.db.read(lambda conn: conn.execute(query).first())
        return None if found is None else _lease(found)

    async def held(self) -> list[Lease]:
        return await self.db.read(lambda conn: [_lease(r) for r in conn.execute(select(run_leases))])

    async def answered(self, session_id: str, run_id: str) -> None:
        table = run_leases.c
        statement = (
            update(run_leases)
            .where(and_(table.session_id == session_id, table.run_id == run_id))
            .values(answered=True)
        )
        await self.db.write(lambda conn: conn.execute(statement))

    async def release(self, session_id: str, run_id: str) -> None:
        table = run_leases.c
        statement = delete(run_leases).where(and_(table.session_id == session_id, table.run_id == run_id))
        await self.db.write(lambda conn: conn.execute(statement))

    async def renew(self) -> set[str]:
        statement = (
            update(run_leases)
            .where(run_leases.c.worker == self.worker)
            .values(expires_at=self._until)
            .returning(run_leases.c.run_id)
        )
        return await self.db.write(lambda conn: set(conn.execute(statement).scalars()))

    async def expired(self) -> list[Lease]:
        table = run_leases.c
        query = select(run_leases, (table.expires_at < self._now).label("late")).where(
            table.worker != self.worker
        )
        rows = await self.db.read(lambda conn: list(conn.execute(query)))
        return [_lease(r) for r in rows if r.late or gone_here(r.worker)]

    async def take(self, lease: Lease) -> bool:
        table = run_leases.c
        which = and_(table.session_id == lease.session_id, table.run_id == lease.run_id)
        if not gone_here(lease.worker):
            which = and_(which, table.expires_at < self._now)
        statement = delete(run_leases).where(which)
        return bool(await self.db.write(lambda conn: conn.execute(statement).rowcount))


async def sleep_beat(leases: Leases) -> None:
    await asyncio.sleep(max(0.05, leases.seconds * BEAT))
