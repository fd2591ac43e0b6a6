"""Per-session state and memory-extraction claims in the shared database, for every worker.

`SqlSessionStateStore` keeps the `SessionStateStore` values (navi/sessions/state.py) in
`session_state`; `SqlExtractionClaims` the `ExtractionClaims` (navi/memory/claims.py) in
`extraction_claims`. A change or a claim is one write transaction that first makes sure the row
exists (`INSERT … ON CONFLICT DO NOTHING`, which waits for a concurrent insert of it) and then reads
it under a row lock (`SELECT … FOR UPDATE` on PostgreSQL; on SQLite `BEGIN IMMEDIATE` already
holds the one write lock): two workers, or two tool calls, never both act on what they read.
Rows go with their session (a foreign key): a session id that is not stored raises
`IntegrityError`.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from navi.llm.messages import utcnow
from navi.memory.claims import LEASE_SECONDS, Claim, ExtractionClaims, worker_id
from navi.sessions.state import Edit, SessionStateStore, encode
from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.schema import extraction_claims, session_state

T = TypeVar("T")
_NOTHING = "null"  # the data of a row made only to be locked


def _ensure(conn: Connection, table: Any, **values: Any) -> None:
    insert = sqlite_insert if conn.dialect.name == "sqlite" else pg_insert
    conn.execute(insert(table).values(**values).on_conflict_do_nothing())


class SqlSessionStateStore(SessionStateStore):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, session_id: str, name: str) -> Any:
        c = session_state.c
        query = select(c.data).where(c.session_id == session_id, c.name == name)
        text = await self.db.read(lambda conn: conn.execute(query).scalar())
        return None if text is None else json.loads(text)

    async def put(self, session_id: str, name: str, value: Any) -> None:
        await self.change(session_id, name, lambda _old: (value, None))

    async def change(self, session_id: str, name: str, edit: Edit[T]) -> T:
        c = session_state.c
        key = (c.session_id == session_id) & (c.name == name)

        def run(conn: Connection) -> T:
            _ensure(conn, session_state, session_id=session_id, name=name, data=_NOTHING, updated_at=utcnow())
            text = conn.execute(select(c.data).where(key).with_for_update()).scalar()
            value, result = edit(None if text is None else json.loads(text))
            if value is None:
                conn.execute(delete(session_state).where(key))
            else:
                conn.execute(update(session_state).where(key).values(data=encode(value), updated_at=utcnow()))
            return result

        return await self.db.write(run)

    async def forget(self, session_id: str) -> None:
        statement = delete(session_state).where(session_state.c.session_id == session_id)
        await self.db.write(lambda conn: conn.execute(statement))


class SqlExtractionClaims(ExtractionClaims):
    """Claims of this process (`worker`), held `lease` seconds by the database's clock."""

    def __init__(self, db: Database, *, lease: float = LEASE_SECONDS, worker: str | None = None) -> None:
        self.db = db
        self.lease = lease
        self.worker = worker or worker_id()
        self._now = db_now(db.dialect)

    async def claim(self, session_id: str, upto: int) -> Claim | None:
        c = extraction_claims.c
        mine = c.session_id == session_id

        def run(conn: Connection) -> Claim | None:
            _ensure(conn, extraction_claims, session_id=session_id, through=0)
            row = conn.execute(
                select(c.through, c.worker, c.until, self._now.label("now")).where(mine).with_for_update()
            ).one()
            held = row.worker is not None and row.until is not None and row.until > row.now
            if held or upto <= row.through:
                return None
            conn.execute(
                update(extraction_claims).where(mine).values(worker=self.worker, until=row.now + self.lease)
            )
            return Claim(session_id, row.through, upto)

        return await self.db.write(run)

    async def done(self, claim: Claim) -> None:
        await self._end(claim, through=claim.upto)

    async def release(self, claim: Claim) -> None:
        await self._end(claim)

    async def _end(self, claim: Claim, **values: Any) -> None:
        c = extraction_claims.c
        statement = (
            update(extraction_claims)
            .where(c.session_id == claim.session_id, c.worker == self.worker)
            .values(worker=None, until=None, **values)
        )
        await self.db.write(lambda conn: conn.execute(statement))
