"""Browser sign-ins: the cookie holds a random id that Navi looks up, so signing out revokes it.

A cookie that was only a function of the token (as before) stayed valid as long as the token did:
a copied cookie outlived /logout. Now `/login` makes a random id (256 bits), the cookie carries
it, and Navi keeps only its SHA-256 digest — computed together with the access token, so a new
token signs every browser out — with the moment it expires. `POST /logout` deletes it.

Digests live in memory for the checks every request makes, and in the `browser_sessions` table
(`navi.storage.signins`) when the runtime has a database, so sign-ins survive a restart. Without a
database (or before the lifespan attached it) they are in memory only and a restart signs browsers
out. Where several workers share the database (PostgreSQL), each check reads the table instead of
memory: a sign-in made through one worker is good on every other, and signing out through any of
them revokes it everywhere at once.

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

from navi.sessions.models import DEFAULT_OWNER
from navi.storage.database import Database
from navi.storage.signins import SqlSignInStore

MAX_AGE = 30 * 24 * 3600  # seconds; the cookie's Max-Age too
MAX_SIGN_INS = 1000  # the oldest are forgotten beyond this (every sign-in needs the token anyway)


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
        self._store: SqlSignInStore | None = None
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
        if self._store is not None:
            digest = self._digest(sign_in)
            expires = self._live.pop(digest) if self._shared else self._live[digest]
            await self._store.add(digest, time.time(), expires.expires, owner, user_token)
        return sign_in

    async def find(self, sign_in: str) -> SignIn | None:
        """The live sign-in this cookie value names, or None (unknown, expired, no token)."""
        if not self._token or not sign_in:
            return None
        digest = self._digest(sign_in)
        found = self._live.get(digest)
        if found is None and self._shared and self._store is not None:
            row = await self._store.find(digest)
            if row is not None:
                found = SignIn(row.expires, row.owner, row.user_token)
        return found if found is not None and found.expires > time.time() else None

    async def revoke(self, sign_in: str) -> bool:
        """Forget a sign-in (POST /logout, a removed user's cookie); False when it was not one."""
        digest = self._digest(sign_in)
        known = self._live.pop(digest, None) is not None
        if self._store is not None:
            await self._store.remove(digest)
        return known

    async def attach(self, db: Database, *, shared: bool = False) -> None:
        """Keep sign-ins in `db` from now on: delete the expired, and load the live ones — unless
        the database is `shared` by several workers, where every check reads it."""
        store = SqlSignInStore(db)
        for row in await store.live(time.time()):
            if not shared:
                self._remember(row.digest, SignIn(row.expires, row.owner, row.user_token))
        self._store = store
        self._shared = shared

    def detach(self) -> None:
        """Stop writing to the database (it is about to be disposed); memory keeps working."""
        self._store = None
        self._shared = False
