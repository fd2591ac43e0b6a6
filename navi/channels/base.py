"""What one channel is. A future channel (Matrix, Telegram…) is one module with one `Channel`
subclass: how it listens, how it sends, how it splits a long answer, how it checks its login.

Everything else — the allowlist, sessions, runs, approvals, `!stop`, schedules' deliveries — is
the worker's (`worker.py`), the same for every channel.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass
class Attachment:
    """A file carried by a message, either way."""

    name: str
    data: bytes
    media_type: str = "application/octet-stream"


@dataclass
class Incoming:
    """One message that arrived in a channel.

    `sender`: the address the allowlist names (normalised by the channel). `key`: this message's
    own id in the channel (an email's Message-ID); `thread`: the ids of the messages it answers,
    nearest first (empty: it starts a conversation). `refused`: why the channel's own checks refuse
    it (a mail its receiving server did not authenticate), or None. `context`: what the channel
    needs to answer it in place (a subject, a room), opaque to the worker.
    """

    channel: str
    sender: str
    text: str
    key: str
    thread: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    refused: str | None = None
    title: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    conversation: str = ""  # a key naming the whole conversation (a Matrix room), linked like `key`


@dataclass
class Outgoing:
    """One message Navi sends: to `to`, answering `reply` when set (threaded in its conversation),
    else a conversation of its own titled `title`."""

    to: str
    text: str
    attachments: list[Attachment] = field(default_factory=list)
    reply: Incoming | None = None
    title: str = ""


class NotPrivate(Exception):
    """A destination that people besides its members can read (a public Matrix room): a
    schedule's answer is never sent there. The message says why."""


Deliver = Callable[[Incoming], Awaitable[None]]
Listed = Callable[[str], Awaitable[bool]]  # whether an address is on the channel's allowlist


class Channel(ABC):
    """`name`: the channel's name in the allowlist, the settings and schedules' `deliver`.
    `can_ask`: a person can answer an approval by replying (else approvals are denied at once).
    `answers_by_reply`: an approval is answered only by a reply to the question itself (its keys
    in the answer's `thread`) from the address it was asked of — for a channel whose senders can
    be forged, where only the question's real reader knows its key (an email's Message-ID)."""

    name: ClassVar[str]
    can_ask: ClassVar[bool] = True
    answers_by_reply: ClassVar[bool] = False
    # Set by the worker before `listen`: asks the allowlist (a channel that is invited somewhere,
    # as Matrix is to rooms, accepts only listed people). None: nobody is listed.
    listed: Listed | None = None

    @abstractmethod
    async def listen(self, deliver: Deliver) -> None:
        """Receive messages and hand each to `deliver`, until cancelled; reconnect on failures."""

    @abstractmethod
    async def send(self, message: Outgoing) -> list[str]:
        """Send one message (already split); the keys it was sent under, so answers to it are
        found in their session."""

    @abstractmethod
    async def check(self) -> list[str]:
        """Log in as `listen` and `send` would; what failed (empty: all is well). `navi doctor`."""

    @classmethod
    def normalize(cls, address: str) -> str:
        """An address as the allowlist keeps it."""
        return address.strip()

    def split(self, text: str) -> list[str]:
        """A long answer as this channel sends it: the parts, in order."""
        return [text]

    async def working(self, message: Incoming, on: bool) -> None:
        """Navi started (`on`) or stopped working on an answer to `message`: a typing indicator
        where the channel has one. Default: nothing."""
        return None

    async def stopped(self) -> None:
        """The worker has stopped (its listening too, even while it waited to start it again after a
        failure): let go of what the channel still holds open. Default: nothing."""
        return None

    async def recipients(self, to: str) -> list[str]:
        """The addresses a message sent to `to` reaches (a schedule delivers only where each is
        listed for its owner): `to` itself by default; a Matrix room's joined and invited members.
        Raises `NotPrivate` when more people than those can read it."""
        return [self.normalize(to)]

    async def is_listed(self, address: str) -> bool:
        return self.listed is not None and await self.listed(address)


def split_text(text: str, limit: int) -> list[str]:
    """`text` in parts of at most `limit` characters, cut at a paragraph, else a line, else a space."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), -1)
        if cut < limit // 2:
            cut = window.rfind("\n")
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut <= 0:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest or not parts:
        parts.append(rest)
    return parts
