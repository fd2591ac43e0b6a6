"""The model endpoints' circuit breaker in the database (navi/llm/breaker.py): every worker on it
skips an endpoint another worker found failing, and tries it again at the same time.

One row per tripped endpoint; a success deletes it. Times are the callers' clock (seconds since
the epoch), as the chain hands them in.
"""

from __future__ import annotations

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from navi.llm.breaker import Trip, next_trip
from navi.storage.database import Database
from navi.storage.schema import model_breakers


class SqlBreaker:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def trips(self) -> dict[str, Trip]:
        t = model_breakers.c
        query = select(t.endpoint, t.failures, t.until, t.reason)

        def read(conn: Connection) -> dict[str, Trip]:
            return {row[0]: Trip(row[0], int(row[1]), float(row[2]), row[3]) for row in conn.execute(query)}

        return await self.db.read(read)

    async def failed(self, endpoint: str, reason: str, now: float, cooldown: float) -> Trip:
        t = model_breakers.c

        def trip(conn: Connection) -> Trip:
            row = conn.execute(
                select(t.failures, t.until, t.reason).where(t.endpoint == endpoint).with_for_update()
            ).first()
            previous = None if row is None else Trip(endpoint, int(row[0]), float(row[1]), row[2])
            new = next_trip(previous, endpoint, reason, now, cooldown)
            values = {"failures": new.failures, "until": new.until, "reason": new.reason}
            if row is None:
                conn.execute(insert(model_breakers).values(endpoint=endpoint, **values))
            else:
                conn.execute(update(model_breakers).where(t.endpoint == endpoint).values(**values))
            return new

        try:
            return await self.db.write(trip)
        except IntegrityError:  # another worker tripped it between the read and the insert
            return await self.db.write(trip)

    async def cleared(self, endpoint: str) -> None:
        await self.db.write(
            lambda conn: conn.execute(delete(model_breakers).where(model_breakers.c.endpoint == endpoint))
        )
