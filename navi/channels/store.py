"""Who may talk to Navi through a channel, and which outside message belongs to which session.

The allowlist maps (channel, address) to a Navi user: only listed addresses get answers, as that
user. A thread is remembered by the keys of its messages (an email's Message-ID, incoming and
Navi's own replies), each naming its session, so a reply to any of them continues that session.
The SQL store is `sqlstore.py`; this module has the interface and the in-memory store.
"""

from __future__ import annotations

import builtins
import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from navi.llm.messages import utcnow

CHANNEL_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
MAX_ADDRESS = 320
MAX_KEY = 512


class ChannelError(ValueError):
    """Bad input to the allowlist (a name, an address): the message says what."""


class Allowed(BaseModel):
    channel: str
    address: str
    user: str
    created_at: datetime = Field(default_factory=utcnow)


def check_entry(channel: str, address: str) -> tuple[str, str]:
    channel = channel.strip().lower()
    address = address.strip()
    if not CHANNEL_NAME.match(channel):
        raise ChannelError(f"{channel!r} is not a channel name (e.g. email)")
    if not address or len(address) > MAX_ADDRESS or not address.isprintable() or " " in address:
        raise ChannelError(f"{address!r} is not an address")
    return channel, address


def thread_key(key: str) -> str:
    """A key as stored: as it is when short, else its SHA-256 (a hostile header can be long)."""
    return key if len(key) <= MAX_KEY - 8 else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class ChannelStore(ABC):
    @abstractmethod
    async def allow(self, channel: str, address: str, user: str) -> Allowed:
        """List `address` (replacing an earlier entry for it)."""

    @abstractmethod
    async def deny(self, channel: str, address: str) -> bool: ...

    @abstractmethod
    async def allowed(self, channel: str | None = None) -> builtins.list[Allowed]: ...

    @abstractmethod
    async def user_of(self, channel: str, address: str) -> str | None: ...

    @abstractmethod
    async def link(self, channel: str, keys: Sequence[str], session_id: str, owner: str) -> None:
        """Remember that messages `keys` belong to the session."""

    @abstractmethod
    async def session_of(self, channel: str, keys: Sequence[str], owner: str) -> str | None:
        """The session of the first of `keys` that is known and belongs to `owner`."""


class InMemoryChannelStore(ChannelStore):
    def __init__(self) -> None:
        self._allowed: dict[tuple[str, str], Allowed] = {}
        self._threads: dict[tuple[str, str], tuple[str, str]] = {}

    async def allow(self, channel: str, address: str, user: str) -> Allowed:
        channel, address = check_entry(channel, address)
        entry = Allowed(channel=channel, address=address, user=user)
        self._allowed[(channel, address)] = entry
        return entry

    async def deny(self, channel: str, address: str) -> bool:
        return self._allowed.pop((channel, address), None) is not None

    async def allowed(self, channel: str | None = None) -> list[Allowed]:
        entries = [a for a in self._allowed.values() if channel is None or a.channel == channel]
        return sorted(entries, key=lambda a: (a.channel, a.address))

    async def user_of(self, channel: str, address: str) -> str | None:
        entry = self._allowed.get((channel, address))
        return None if entry is None else entry.user

    async def link(self, channel: str, keys: Sequence[str], session_id: str, owner: str) -> None:
        for key in keys:
            self._threads.setdefault((channel, thread_key(key)), (session_id, owner))

    async def session_of(self, channel: str, keys: Sequence[str], owner: str) -> str | None:
        for key in keys:
            found = self._threads.get((channel, thread_key(key)))
            if found is not None and found[1] == owner:
                return found[0]
        return None
