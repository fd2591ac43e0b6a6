"""Which pages are visible (`page_presence`) and each user's notification settings
(`notify_settings`), migration 0027. A page's row carries the database's clock (`seen_at`), so
workers on several machines agree on which pages are fresh."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Connection, Float, String, Table, Text, delete, select

from navi.push.prefs import NotifySettings, NotifySettingsStore, parse
from navi.push.presence import FRESH_SECONDS, Presence
from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.schema import metadata

page_presence = Table(
    "page_presence",
    metadata,
    Column("page_id", String(64), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("visible", Boolean, nullable=False),
    Column("seen_at", Float, nullable=False),
)
notify_settings = Table(
    "notify_settings",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("data", Text, nullable=False),
)


class SqlPresence(Presence):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def seen(self, page_id: str, owner: str, visible: bool) -> None:
        now = db_now(self.db.dialect)

        def write(conn: Connection) -> None:
            c = page_presence.c
            changed = conn.execute(
                page_presence.update()
                .where(c.page_id == page_id)
                .values(owner=owner, visible=visible, seen_at=now)
            ).rowcount
            if not changed:
                conn.execute(
                    page_presence.insert().values(page_id=page_id, owner=owner, visible=visible, seen_at=now)
                )

        await self.db.write(write)

    async def gone(self, page_id: str) -> None:
        statement = delete(page_presence).where(page_presence.c.page_id == page_id)
        await self.db.write(lambda conn: conn.execute(statement))

    async def visible(self, owner: str) -> bool:
        c = page_presence.c
        fresh = db_now(self.db.dialect) - FRESH_SECONDS
        query = (
            select(c.page_id).where((c.owner == owner) & c.visible.is_(True) & (c.seen_at >= fresh)).limit(1)
        )
        return await self.db.read(lambda conn: conn.execute(query).first() is not None)


class SqlNotifySettings(NotifySettingsStore):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, owner: str) -> NotifySettings:
        query = select(notify_settings.c.data).where(notify_settings.c.owner == owner)
        raw = await self.db.read(lambda conn: conn.execute(query).scalar())
        return parse(raw)

    async def put(self, owner: str, settings: NotifySettings) -> None:
        data = settings.model_dump_json()

        def write(conn: Connection) -> None:
            conn.execute(delete(notify_settings).where(notify_settings.c.owner == owner))
            conn.execute(notify_settings.insert().values(owner=owner, data=data))

        await self.db.write(write)
