"""Failed sign-ins counted in the database, for workers that share it (PostgreSQL): a client's
guesses add up whichever worker or machine they reach (`navi.api.security`'s throttle).

Times are the database's clock, so workers whose clocks disagree count the same window. A client's
rows older than the window are deleted as its new ones are added.
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, delete, insert, select

from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.schema import signin_failures


class SqlFailures:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._now = db_now(db.dialect)

    async def recent(self, key: str, window: float) -> list[float]:
        table = signin_failures.c
        age = (self._now - table.at).label("age")
        query = select(age).where(and_(table.client == key, table.at > self._now - window)).order_by(table.at)
        return await self.db.read(lambda conn: [float(a) for a in conn.execute(query).scalars()])

    async def add(self, key: str, window: float) -> None:
        table = signin_failures.c
        old = delete(signin_failures).where(and_(table.client == key, table.at < self._now - window))
        new = insert(signin_failures).values(client=key, at=self._now)

        def add(conn: Connection) -> None:
            conn.execute(old)
            conn.execute(new)

        await self.db.write(add)
