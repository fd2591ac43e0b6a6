"""The channel store in SQLAlchemy Core: the allowlist (`channel_allow`) and the messages that name
a session (`channel_threads`), tables of navi/storage/schema.py. The interface and its rules are
navi/channels/store.py."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from sqlalchemy import Connection, delete, insert, select

from navi.channels.store import Allowed, ChannelStore, check_entry, thread_key
from navi.llm.messages import utcnow
from navi.sessions.models import as_utc
from navi.storage.database import Database
from navi.storage.schema import channel_allow, channel_threads


class SqlChannelStore(ChannelStore):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def allow(self, channel: str, address: str, user: str) -> Allowed:
        channel, address = check_entry(channel, address)
        entry = Allowed(channel=channel, address=address, user=user)

        def write(conn: Connection) -> None:
            conn.execute(
                delete(channel_allow).where(
                    (channel_allow.c.channel == channel) & (channel_allow.c.address == address)
                )
            )
            conn.execute(insert(channel_allow).values(**entry.model_dump()))

        await self.db.write(write)
        return entry

    async def deny(self, channel: str, address: str) -> bool:
        statement = delete(channel_allow).where(
            (channel_allow.c.channel == channel) & (channel_allow.c.address == address)
        )
        return bool(await self.db.write(lambda conn: conn.execute(statement).rowcount))

    async def allowed(self, channel: str | None = None) -> builtins.list[Allowed]:
        query = select(channel_allow).order_by(channel_allow.c.channel, channel_allow.c.address)
        if channel is not None:
            query = query.where(channel_allow.c.channel == channel)
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return [
            Allowed(channel=r.channel, address=r.address, user=r.user, created_at=as_utc(r.created_at))
            for r in rows
        ]

    async def user_of(self, channel: str, address: str) -> str | None:
        query = select(channel_allow.c.user).where(
            (channel_allow.c.channel == channel) & (channel_allow.c.address == address)
        )
        row = await self.db.read(lambda conn: conn.execute(query).first())
        return None if row is None else str(row.user)

    async def link(self, channel: str, keys: Sequence[str], session_id: str, owner: str) -> None:
        now = utcnow()
        stored = list(dict.fromkeys(thread_key(k) for k in keys))

        def write(conn: Connection) -> None:
            known = select(channel_threads.c.key).where(
                (channel_threads.c.channel == channel) & channel_threads.c.key.in_(stored)
            )
            have = {r.key for r in conn.execute(known)}  # known already: its first session keeps it
            rows = [
                {"channel": channel, "key": k, "session_id": session_id, "owner": owner, "created_at": now}
                for k in stored
                if k not in have
            ]
            if rows:
                conn.execute(insert(channel_threads), rows)

        await self.db.write(write)

    async def session_of(self, channel: str, keys: Sequence[str], owner: str) -> str | None:
        stored = [thread_key(k) for k in keys]
        if not stored:
            return None
        query = select(channel_threads.c.key, channel_threads.c.session_id).where(
            (channel_threads.c.channel == channel)
            & (channel_threads.c.owner == owner)
            & channel_threads.c.key.in_(stored)
        )
        rows = {r.key: r.session_id for r in await self.db.read(lambda conn: conn.execute(query).all())}
        for key in stored:
            if key in rows:
                return str(rows[key])
        return None
