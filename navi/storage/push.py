"""Web Push subscriptions in SQL (`push_subscriptions`, migration 0027). The model and the
interface are in `navi.push`; the id is a digest of the endpoint, so saving one endpoint again
(another user signed in on that browser) replaces its row."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Connection, DateTime, String, Table, Text, delete, select

from navi.push.models import PushStore, PushSubscription, subscription_id
from navi.sessions.models import as_utc
from navi.storage.database import Database
from navi.storage.schema import metadata

push_subscriptions = Table(
    "push_subscriptions",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("endpoint", Text, nullable=False),
    Column("p256dh", String(128), nullable=False),
    Column("auth", String(64), nullable=False),
    Column("user_agent", String(300), nullable=False, default=""),
    Column("created_at", DateTime(timezone=True), nullable=False),
)


def _subscription(row: Any) -> PushSubscription:
    return PushSubscription(
        owner=row.owner,
        endpoint=row.endpoint,
        p256dh=row.p256dh,
        auth=row.auth,
        created_at=as_utc(row.created_at),
        user_agent=row.user_agent,
    )


class SqlPushStore(PushStore):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def save(self, subscription: PushSubscription) -> None:
        values = {
            "id": subscription.id,
            "owner": subscription.owner,
            "endpoint": subscription.endpoint,
            "p256dh": subscription.p256dh,
            "auth": subscription.auth,
            "user_agent": subscription.user_agent,
            "created_at": subscription.created_at,
        }

        def write(conn: Connection) -> None:
            conn.execute(delete(push_subscriptions).where(push_subscriptions.c.id == subscription.id))
            conn.execute(push_subscriptions.insert().values(**values))

        await self.db.write(write)

    async def list(self, owner: str) -> list[PushSubscription]:
        c = push_subscriptions.c
        query = select(push_subscriptions).where(c.owner == owner).order_by(c.created_at)
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return [_subscription(row) for row in rows]

    async def remove(self, owner: str, endpoint: str) -> bool:
        c = push_subscriptions.c
        statement = delete(push_subscriptions).where((c.id == subscription_id(endpoint)) & (c.owner == owner))
        return bool(await self.db.write(lambda conn: conn.execute(statement).rowcount))

    async def drop(self, endpoint: str) -> None:
        statement = delete(push_subscriptions).where(push_subscriptions.c.id == subscription_id(endpoint))
        await self.db.write(lambda conn: conn.execute(statement))
