"""The grant store in SQLAlchemy Core: remembered "always allow" answers in `approval_grants`.

The model, the interface and the in-memory store are in `navi.agent.grants`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from navi.agent.grants import Grant, GrantStore
from navi.llm.messages import utcnow
from navi.sessions.models import as_utc
from navi.storage.database import Database
from navi.storage.schema import approval_grants


def _grant(row: Any) -> Grant:
    return Grant(owner=row.owner, tool=row.tool, subject=row.subject, created_at=as_utc(row.created_at))


def _key(owner: str, tool: str, subject: str) -> ColumnElement[bool]:
    c = approval_grants.c
    return (c.owner == owner) & (c.tool == tool) & (c.subject == subject)


def _insert(conn: Connection, owner: str, tool: str, subject: str) -> None:
    insert = sqlite_insert if conn.dialect.name == "sqlite" else pg_insert
    values = {"owner": owner, "tool": tool, "subject": subject, "created_at": utcnow()}
    conn.execute(insert(approval_grants).values(**values).on_conflict_do_nothing())


class SqlGrantStore(GrantStore):
    """Grants in the shared database, which the composition root migrates and disposes."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def is_granted(self, owner: str, tool: str, subject: str) -> bool:
        query = select(approval_grants.c.owner).where(_key(owner, tool, subject))
        return await self.db.read(lambda conn: conn.execute(query).first() is not None)

    async def grant(self, owner: str, tool: str, subject: str) -> None:
        await self.db.write(lambda conn: _insert(conn, owner, tool, subject))

    async def grants(self, owner: str) -> list[Grant]:
        c = approval_grants.c
        query = select(approval_grants).where(c.owner == owner).order_by(c.tool, c.subject)
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return [_grant(row) for row in rows]

    async def revoke(self, owner: str, tool: str, subject: str) -> bool:
        statement = delete(approval_grants).where(_key(owner, tool, subject))
        count = await self.db.write(lambda conn: conn.execute(statement).rowcount)
        return bool(count)
