"""A push subscription (one browser of one user), a notification as the service worker reads it,
and the store interface. A subscription is checked when it arrives: an http(s) endpoint of sane
length, a P-256 public key (65 bytes, uncompressed) and a 16-byte auth secret, all base64url."""

from __future__ import annotations

import base64
import binascii
import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

ENDPOINT_MAX = 2048
TITLE_MAX = 120
BODY_MAX = 400
Kind = Literal["answer", "approval", "reminder", "job", "notify"]
KINDS: tuple[Kind, ...] = ("answer", "approval", "reminder", "job", "notify")


class SubscriptionError(ValueError):
    """A subscription the browser could not have made: the sentence says what is wrong."""


def b64url_decode(text: str) -> bytes:
    """Strict base64url (padding optional): a character outside the alphabet is an error."""
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def subscription_id(endpoint: str) -> str:
    return hashlib.sha256(endpoint.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class PushSubscription:
    owner: str
    endpoint: str
    p256dh: str  # the browser's public key, base64url (65 bytes)
    auth: str  # the shared auth secret, base64url (16 bytes)
    created_at: datetime
    user_agent: str = ""

    @property
    def id(self) -> str:
        return subscription_id(self.endpoint)

    @property
    def info(self) -> dict[str, Any]:
        """As the browser's `PushSubscription.toJSON()` gives it (what pywebpush takes)."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


def checked(
    owner: str, endpoint: str, p256dh: str, auth: str, created_at: datetime, user_agent: str = ""
) -> PushSubscription:
    """A subscription from what a page sent, or `SubscriptionError` saying what is wrong."""
    endpoint = endpoint.strip()
    if len(endpoint) > ENDPOINT_MAX:
        raise SubscriptionError(f"the endpoint is longer than {ENDPOINT_MAX} characters")
    parts = urlsplit(endpoint)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise SubscriptionError("the endpoint must be an http(s) URL with a host")
    if parts.username or parts.password:
        raise SubscriptionError("the endpoint must not carry a user name or password")
    key = _decoded(p256dh, "keys.p256dh")
    if len(key) != 65 or key[0] != 4:
        raise SubscriptionError("keys.p256dh must be an uncompressed P-256 public key (65 bytes)")
    secret = _decoded(auth, "keys.auth")
    if len(secret) != 16:
        raise SubscriptionError("keys.auth must be 16 bytes")
    _check_point(key)
    return PushSubscription(owner, endpoint, b64url(key), b64url(secret), created_at, user_agent[:300])


def _decoded(text: str, name: str) -> bytes:
    try:
        return b64url_decode(text.strip())
    except (binascii.Error, ValueError):
        raise SubscriptionError(f"{name} is not base64url") from None


def _check_point(key: bytes) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)
    except ValueError:
        raise SubscriptionError("keys.p256dh is not a point on P-256") from None


@dataclass(frozen=True)
class Action:
    action: str  # what the service worker does when it is clicked ("allow", "deny")
    title: str


@dataclass(frozen=True)
class PushMessage:
    """What the service worker gets (as JSON, encrypted): it shows `title` and `body`, and a click
    opens `url` (the conversation) — or, for an action, answers `approval_id` with `action`."""

    kind: Kind
    title: str
    body: str
    session_id: str | None = None
    message_id: str | None = None
    approval_id: str | None = None
    actions: tuple[Action, ...] = ()
    tag: str | None = None  # a later notification with the same tag replaces this one
    urgency: Literal["very-low", "low", "normal", "high"] = "normal"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        if not self.session_id:
            return "/"
        return f"/#/s/{self.session_id}" + (f"?m={self.message_id}" if self.message_id else "")

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "title": self.title[:TITLE_MAX] or "Navi",
            "body": self.body[:BODY_MAX],
            "url": self.url,
            "session_id": self.session_id,
            "tag": self.tag or (f"navi-{self.session_id}" if self.session_id else "navi"),
        }
        if self.message_id:
            out["message_id"] = self.message_id
        if self.approval_id:
            out["approval_id"] = self.approval_id
        if self.actions:
            out["actions"] = [{"action": a.action, "title": a.title} for a in self.actions]
        out.update(self.extra)
        return out


class PushStore(ABC):
    """Subscriptions, per user. An endpoint is one browser's: subscribing it again (another user
    signed in there) moves it to whoever subscribed last."""

    @abstractmethod
    async def save(self, subscription: PushSubscription) -> None: ...

    @abstractmethod
    async def list(self, owner: str) -> list[PushSubscription]: ...

    @abstractmethod
    async def remove(self, owner: str, endpoint: str) -> bool:
        """The owner's subscription at `endpoint` removed; False when they have none there."""

    @abstractmethod
    async def drop(self, endpoint: str) -> None:
        """The subscription at `endpoint` removed, whoever's it was (its push service said gone)."""
