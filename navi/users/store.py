"""Users besides the owner: who a token belongs to.

The owner — whoever holds `NAVI_API_TOKEN` or Navi's own token file — is the user `DEFAULT_OWNER`
and is not stored here. Every other user has a name (the `owner` of their sessions, memory facts
and remembered approvals), a role, and a token Navi shows once at `add` and keeps only as its
SHA-256 digest. A token is found by looking its digest up, so no token is ever compared byte by
byte. Nothing is cached: a removed user's token stops working with the next request, even when
`navi users remove` ran while the server was up.

Roles: `user` acts as itself; `proxy` is a trusted reverse proxy that may name the user it
forwards for (the `X-User-Id` header, see navi/api/security.py).

`SqlUserStore` (navi/storage/users.py) keeps users in the `users` table; `InMemoryUserStore` is
for runtimes without a database. Both pass one contract suite (tests/test_users.py).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from abc import ABC, abstractmethod
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from navi.llm.messages import utcnow
from navi.sessions.models import DEFAULT_OWNER

Role = Literal["user", "proxy"]
ROLES: tuple[Role, ...] = ("user", "proxy")
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
NAME_RULE = "1-64 characters: lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"
RESERVED = frozenset({DEFAULT_OWNER})


class UserError(ValueError):
    """A name that cannot be a user, or one that is taken or unknown (the message says which)."""


class User(BaseModel):
    name: str
    role: Role = "user"
    created_at: datetime = Field(default_factory=utcnow)


def check_name(name: str) -> str:
    """`name` if it can name a user, else `UserError` saying why."""
    if not NAME_PATTERN.fullmatch(name):
        raise UserError(f"{name!r} cannot be a user name: {NAME_RULE}")
    if name in RESERVED:
        raise UserError(f"{name!r} is the owner's name (the NAVI_API_TOKEN user); choose another")
    return name


def valid_name(name: str) -> bool:
    try:
        check_name(name)
    except UserError:
        return False
    return True


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


class UserStore(ABC):
    async def add(self, name: str, role: Role = "user") -> tuple[User, str]:
        """A new user and their token (shown once: only its digest is kept)."""
        check_name(name)
        if role not in ROLES:
            raise UserError(f"role must be one of {', '.join(ROLES)}")
        user, token = User(name=name, role=role), new_token()
        await self._add(user, digest(token))
        return user, token

    @abstractmethod
    async def _add(self, user: User, token_sha256: str) -> None:
        """Store the user; `UserError` when the name is taken."""

    @abstractmethod
    async def by_token(self, token: str) -> User | None:
        """The user whose token this is, or None."""

    @abstractmethod
    async def get(self, name: str) -> User | None:
        """The user of this name, or None."""

    @abstractmethod
    async def holds(self, name: str, token_sha256: str) -> bool:
        """Whether `name` is a user whose token has this digest now: a browser sign-in made with
        the token stays good exactly as long (a removed user, or the name's new token, ends it)."""

    @abstractmethod
    async def list(self) -> list[User]:
        """Every user, by name."""

    @abstractmethod
    async def remove(self, name: str) -> bool:
        """Forget a user (their token stops working); False when there was none. Their sessions,
        memory and grants stay: adding the name again gives them back to a new token."""


class InMemoryUserStore(UserStore):
    def __init__(self) -> None:
        self._users: dict[str, tuple[User, str]] = {}

    async def _add(self, user: User, token_sha256: str) -> None:
        if user.name in self._users:
            raise UserError(f"there is already a user {user.name!r}")
        self._users[user.name] = (user, token_sha256)

    async def by_token(self, token: str) -> User | None:
        wanted = digest(token)
        return next((u.model_copy() for u, d in self._users.values() if d == wanted), None)

    async def get(self, name: str) -> User | None:
        found = self._users.get(name)
        return None if found is None else found[0].model_copy()

    async def holds(self, name: str, token_sha256: str) -> bool:
        found = self._users.get(name)
        return found is not None and found[1] == token_sha256

    async def list(self) -> list[User]:
        return [u.model_copy() for _, (u, _d) in sorted(self._users.items())]

    async def remove(self, name: str) -> bool:
        return self._users.pop(name, None) is not None
