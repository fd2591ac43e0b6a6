"""Browser sign-ins: the cookie holds a random id that Navi looks up, so signing out revokes it.

A cookie that was only a function of the token (as before) stayed valid as long as the token did:
a copied cookie outlived /logout. Now `/login` makes a random id (256 bits), the cookie carries
it, and Navi keeps only its SHA-256 digest — computed together with the access token, so a new
token signs every browser out — with the moment it expires. `POST /logout` deletes it.

Digests live in memory for the checks every request makes, and in the `browser_sessions` table
when the runtime has a database, so sign-ins survive a restart. Without a database (or before the
lifespan attached it) they are in memory only and a restart signs browsers out.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import UTC, datetime

from sqlalchemy import Connection, delete, insert, select

from navi.sessions.models import as_utc
from navi.storage.database import Database
from navi.storage.schema import browser_sessions

MAX_AGE = 30 * 24 * 3600  # seconds; the cookie's Max-Age too
MAX_SIGN_INS = 1000  # the oldest are forgotten beyond this (every sign-in needs the token anyway)


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class SignIns:
    def __init__(self, token: str, *, max_age: float = MAX_AGE) -> None:
        self._token = token
        self.max_age = max_age
        self._expiry: dict[str, float] = {}  # digest → expiry (Unix time), oldest first
        self._db: Database | None = None

    def _digest(self, sign_in: str) -> str:
        return hashlib.sha256(f"{self._token}\0{sign_in}".encode()).hexdigest()

    def _remember(self, digest: str, expires: float) -> None:
        self._expiry[digest] = expires
        while len(self._expiry) > MAX_SIGN_INS:
            del self._expiry[next(iter(self._expiry))]

    def mint(self) -> str:
        """A new sign-in, in memory only (tests; callers that persist it use `open`)."""
        sign_in = secrets.token_urlsafe(32)
        self._remember(self._digest(sign_in), time.time() + self.max_age)
        return sign_in

    async def open(self) -> str:
        """A new sign-in, kept in the database too when there is one."""
        sign_in = self.mint()
        if self._db is not None:
            digest = self._digest(sign_in)
            row = {
                "digest": digest,
                "created_at": _when(time.time()),
                "expires_at": _when(self._expiry[digest]),
            }
            await self._db.write(lambda conn: conn.execute(insert(browser_sessions).values(**row)))
        return sign_in

    def valid(self, sign_in: str) -> bool:
        if not self._token or not sign_in:
            return False
        expires = self._expiry.get(self._digest(sign_in))
        return expires is not None and expires > time.time()

    async def revoke(self, sign_in: str) -> bool:
        """Forget a sign-in (POST /logout); False when it was not one."""
        digest = self._digest(sign_in)
        known = self._expiry.pop(digest, None) is not None
        if self._db is not None:
            statement = delete(browser_sessions).where(browser_sessions.c.digest == digest)
            await self._db.write(lambda conn: conn.execute(statement))
        return known

    async def attach(self, db: Database) -> None:
        """Keep sign-ins in `db` from now on: load the live ones, delete the expired."""
        now = _when(time.time())

        def load(conn: Connection) -> list[tuple[str, datetime]]:
            conn.execute(delete(browser_sessions).where(browser_sessions.c.expires_at <= now))
            query = select(browser_sessions.c.digest, browser_sessions.c.expires_at).order_by(
                browser_sessions.c.created_at
            )
            return [(row.digest, row.expires_at) for row in conn.execute(query)]

        for digest, expires in await db.write(load):
            self._remember(digest, as_utc(expires).timestamp())
        self._db = db

    def detach(self) -> None:
        """Stop writing to the database (it is about to be disposed); memory keeps working."""
        self._db = None
