"""Browser sign-ins in SQLAlchemy Core: the `browser_sessions` table behind `navi.api.signins`.

A row is a sign-in's SHA-256 digest (never the cookie value itself), when it was made and expires,
and whom it acts as. The live sign-ins are read once when the server starts; from then on the API
keeps them in memory and writes each new one and each revocation through — or, where several
workers share the database, reads the row on every check (`find`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from sqlalchemy import Connection, delete, insert, select

from navi.sessions.models import as_utc
from navi.storage.database import Database
from navi.storage.schema import browser_sessions


class StoredSignIn(NamedTuple):
    digest: str
    expires: float  # Unix time
    owner: str
    user_token: str | None  # the SHA-256 of a user's token at sign-in (None for the owner)


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class SqlSignInStore:
    """Sign-ins in the shared database, which the composition root migrates and disposes."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(
        self, digest: str, created: float, expires: float, owner: str, user_token: str | None
    ) -> None:
        row = {
            "digest": digest,
            "created_at": _when(created),
            "expires_at": _when(expires),
            "owner": owner,
            "user_token_sha256": user_token,
        }
        await self.db.write(lambda conn: conn.execute(insert(browser_sessions).values(**row)))

    async def find(self, digest: str) -> StoredSignIn | None:
        """The sign-in with this digest (expired or not), where every check reads the table
        (workers sharing the database)."""
        table = browser_sessions.c
        query = select(table.digest, table.expires_at, table.owner, table.user_token_sha256).where(
            table.digest == digest
        )
        row = await self.db.read(lambda conn: conn.execute(query).first())
        if row is None:
            return None
        return StoredSignIn(row.digest, as_utc(row.expires_at).timestamp(), row.owner, row.user_token_sha256)

    async def remove(self, digest: str) -> None:
        statement = delete(browser_sessions).where(browser_sessions.c.digest == digest)
        await self.db.write(lambda conn: conn.execute(statement))

    async def live(self, now: float) -> list[StoredSignIn]:
        """The sign-ins that have not expired at `now` (Unix time), oldest first; the expired ones
        are deleted in the same transaction."""
        moment = _when(now)

        def load(conn: Connection) -> list[StoredSignIn]:
            conn.execute(delete(browser_sessions).where(browser_sessions.c.expires_at <= moment))
            table = browser_sessions.c
            query = select(table.digest, table.expires_at, table.owner, table.user_token_sha256)
            return [
                StoredSignIn(row.digest, as_utc(row.expires_at).timestamp(), row.owner, row.user_token_sha256)
                for row in conn.execute(query.order_by(table.created_at))
            ]

        return await self.db.write(load)
