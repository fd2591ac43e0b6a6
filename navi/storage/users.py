"""The user store in SQLAlchemy Core: users of `navi users add` in the `users` table.

Only a token's SHA-256 digest is kept; a token is found by looking its digest up. The model, the
interface and the in-memory store are in `navi.users.store`.
"""

from __future__ import annotations

from sqlalchemy import Connection, delete, insert, select
from sqlalchemy.exc import IntegrityError

from navi.sessions.models import as_utc
from navi.storage.database import Database
from navi.storage.schema import users
from navi.users.store import User, UserError, UserStore, digest


class SqlUserStore(UserStore):
    """Users in the shared database, which the composition root migrates and disposes."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _add(self, user: User, token_sha256: str) -> None:
        row = user.model_dump() | {"token_sha256": token_sha256}

        def write(conn: Connection) -> None:
            conn.execute(insert(users).values(**row))

        try:
            await self.db.write(write)
        except IntegrityError:
            raise UserError(f"there is already a user {user.name!r}") from None

    async def by_token(self, token: str) -> User | None:
        query = select(users).where(users.c.token_sha256 == digest(token))
        row = await self.db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _user(row)

    async def get(self, name: str) -> User | None:
        query = select(users).where(users.c.name == name)
        row = await self.db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _user(row)

    async def holds(self, name: str, token_sha256: str) -> bool:
        query = select(users.c.name).where((users.c.name == name) & (users.c.token_sha256 == token_sha256))
        return await self.db.read(lambda conn: conn.execute(query).first()) is not None

    async def list(self) -> list[User]:
        query = select(users).order_by(users.c.name)
        return [_user(row) for row in await self.db.read(lambda conn: conn.execute(query).all())]

    async def remove(self, name: str) -> bool:
        statement = delete(users).where(users.c.name == name)
        return bool(await self.db.write(lambda conn: conn.execute(statement).rowcount))


def _user(row: object) -> User:
    return User(name=row.name, role=row.role, created_at=as_utc(row.created_at))  # type: ignore[attr-defined]
