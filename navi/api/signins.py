"""Browser sign-ins: the cookie holds a random id that Navi looks up, so signing out revokes it.

A cookie that was only a function of the token (as before) stayed valid as long as the token did:
a copied cookie outlived /logout. Now `/login` makes a random id (256 bits), the cookie carries
it, and Navi keeps only its SHA-256 digest — computed together with the access token, so a new
token signs every browser out — with the moment it expires. `POST /logout` deletes it.

Digests live in memory for the checks every request makes, and in the `browser_sessions` table
when the runtime has a database, so sign-ins survive a restart. Without a database (or before the
lifespan attached it) they are in memory only and a restart signs browsers out. Where several
workers share the database (PostgreSQL), each check reads the table instead of memory: a sign-in
made through one worker is good on every other, and signing out through any of them revokes it
everywhere at once.

A sign-in remembers whom it acts as: the owner, or a user of `navi users add` together with the
digest of the token they signed in with. Whether that user still holds that token is not this
module's to know (it is the user store's, asked on every request by `navi.api.security`): a user
removed — or whose name was given a new token — loses their sign-ins with the next request.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, delete, insert, select

from navi.sessions.models import DEFAULT_OWNER, as_utc
from navi.storage.database import Database
from navi.storage.schema import browser_sessions

MAX_AGE = 30 * 24 * 3600  # seconds; the cookie's Max-Age too
MAX_SIGN_INS = 1000  # the oldest are forgotten beyond this (every sign-in needs the token anyway)


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


@dataclass(frozen=True)
class SignIn:
    """A live sign-in: when it expires (Unix time) and whom it acts as. `user_token` is the
    SHA-256 of the user's token at sign-in (None for the owner, whose sign-ins hang on the access
    token through their digest instead)."""

    expires: float
    owner: str = DEFAULT_OWNER
    user_token: str | None = None


class SignIns:
    def __init__(self, token: str, *, max_age: float = MAX_AGE) -> None:
        self._token = token
        self.max_age = max_age
        self._live: dict[str, SignIn] = {}  # digest → sign-in, oldest first
        self._db: Database | None = None
        self._shared = False  # the database is the only truth (several workers): no memory copy

    def _digest(self, sign_in: str) -> str:
        return hashlib.sha256(f"{self._token}\0{sign_in}".encode()).hexdigest()

    def _remember(self, digest: str, sign_in: SignIn) -> None:
        self._live[digest] = sign_in
        while len(self._live) > MAX_SIGN_INS:
            del self._live[next(iter(self._live))]

    def mint(self, owner: str = DEFAULT_OWNER, user_token: str | None = None) -> str:
        """A new sign-in, in memory only (tests; callers that persist it use `open`)."""
        sign_in = secrets.token_urlsafe(32)
        self._remember(self._digest(sign_in), SignIn(time.time() + self.max_age, owner, user_token))
        return sign_in

    async def open(self, owner: str = DEFAULT_OWNER, user_token: str | None = None) -> str:
        """A new sign-in acting as `owner` (a user's also needs `user_token`, the digest of the
        token they signed in with), kept in the database too when there is one."""
        sign_in = self.mint(owner, user_token)
        if self._db is not None:
            digest = self._digest(sign_in)
            expires = self._live.pop(digest) if self._shared else self._live[digest]
            row = {
                "digest": digest,
                "created_at": _when(time.time()),
                "expires_at": _when(expires.expires),
                "owner": owner,
                "user_token_sha256": user_token,
            }
            await self._db.write(lambda conn: conn.execute(insert(browser_sessions).values(**row)))
        return sign_in

    async def find(self, sign_in: str) -> SignIn | None:
        """The live sign-in this cookie value names, or None (unknown, expired, no token)."""
        if not self._token or not sign_in:
            return None
        digest = self._digest(sign_in)
        found = self._live.get(digest)
        if found is None and self._shared and self._db is not None:
            table = browser_sessions.c
            query = select(table.expires_at, table.owner, table.user_token_sha256).where(
                table.digest == digest
            )
            row = await self._db.read(lambda conn: conn.execute(query).first())
            if row is not None:
                found = SignIn(as_utc(row.expires_at).timestamp(), row.owner, row.user_token_sha256)
        return found if found is not None and found.expires > time.time() else None

    async def revoke(self, sign_in: str) -> bool:
        """Forget a sign-in (POST /logout, a removed user's cookie); False when it was not one."""
        digest = self._digest(sign_in)
        known = self._live.pop(digest, None) is not None
        if self._db is not None:
            statement = delete(browser_sessions).where(browser_sessions.c.digest == digest)
            await self._db.write(lambda conn: conn.execute(statement))
        return known

    async def attach(self, db: Database, *, shared: bool = False) -> None:
        """Keep sign-ins in `db` from now on: delete the expired, and load the live ones — unless
        the database is `shared` by several workers, where every check reads it."""
        now = _when(time.time())

        def load(conn: Connection) -> list[tuple[str, SignIn]]:
            conn.execute(delete(browser_sessions).where(browser_sessions.c.expires_at <= now))
            table = browser_sessions.c
            query = select(table.digest, table.expires_at, table.owner, table.user_token_sha256)
            return [
                (row.digest, SignIn(as_utc(row.expires_at).timestamp(), row.owner, row.user_token_sha256))
                for row in conn.execute(query.order_by(table.created_at))
            ]

        for digest, sign_in in await db.write(load):
            if not shared:
                self._remember(digest, sign_in)
        self._db = db
        self._shared = shared

    def detach(self) -> None:
        """Stop writing to the database (it is about to be disposed); memory keeps working."""
        self._db = None
        self._shared = False
