"""Conversations' browser cookies and storage in the shared database (`browser_states`, migration
0039): the `BrowserStates` of navi/tools/builtin/browser/states.py, one row a session, read and
written only by the browser pool, by the session's id and its user. The row goes with its session
(a foreign key); it is a secret, like a named sign-in, and no export or API reads it."""

from __future__ import annotations

import json

from sqlalchemy import Column, Connection, DateTime, ForeignKey, Integer, String, Table, Text, delete, select

from navi.llm.messages import utcnow
from navi.storage.database import Database
from navi.storage.schema import metadata
from navi.tools.builtin.browser.states import MAX_BYTES, BrowserStates, SavedState

browser_states = Table(
    "browser_states",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("owner", String(128), nullable=False),
    Column("data", Text, nullable=False),  # the storage state's JSON
    Column("version", Integer, nullable=False),
    Column("profile", String(40), nullable=True),
    Column("url", Text, nullable=False, default=""),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


class SqlBrowserStates(BrowserStates):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def load(self, session_id: str, owner: str) -> SavedState | None:
        c = browser_states.c
        query = select(c.data, c.version, c.profile, c.url).where(
            c.session_id == session_id, c.owner == owner
        )
        row = await self.db.read(lambda conn: conn.execute(query).first())
        if row is None:
            return None
        try:
            state = json.loads(row.data)
        except ValueError:
            return None
        return SavedState(state, int(row.version), row.profile, row.url or "")

    async def version(self, session_id: str, owner: str) -> int:
        c = browser_states.c
        query = select(c.version).where(c.session_id == session_id, c.owner == owner)
        found = await self.db.read(lambda conn: conn.execute(query).scalar())
        return int(found or 0)

    async def save(self, session_id: str, owner: str, saved: SavedState) -> None:
        data = json.dumps(saved.state, ensure_ascii=False)
        if len(data) > MAX_BYTES:
            raise ValueError(f"the browser's state is over {MAX_BYTES:,} bytes; not kept")
        row = {
            "session_id": session_id,
            "owner": owner,
            "data": data,
            "version": saved.version,
            "profile": saved.profile,
            "url": saved.url[:4000],
            "updated_at": utcnow(),
        }

        def write(conn: Connection) -> None:
            conn.execute(delete(browser_states).where(browser_states.c.session_id == session_id))
            conn.execute(browser_states.insert().values(**row))

        await self.db.write(write)

    async def forget(self, session_id: str, owner: str | None = None) -> None:
        c = browser_states.c
        statement = delete(browser_states).where(c.session_id == session_id)
        if owner is not None:
            statement = statement.where(c.owner == owner)
        await self.db.write(lambda conn: conn.execute(statement))
