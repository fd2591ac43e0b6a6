"""Sending a notification to every browser a user subscribed, never on the turn's path.

`PushSender.send()` returns at once: the delivery runs as a task of its own. Each subscription
gets the message encrypted for its keys (RFC 8291 `aes128gcm`, pywebpush's encoder) with a VAPID
`Authorization` header (RFC 8292, py_vapid's signer: `aud` the endpoint's origin, `exp` 12 hours
ahead, `sub` the contact Navi gives), posted through the same guarded client the fetching tools
use (`navi/net/`: a subscription cannot make Navi post to a private address unless
NAVI_FETCH_ALLOWED_HOSTS lists it). The push service's answer decides what happens next:

- 2xx: delivered.
- 404 or 410: the subscription is gone (the user unsubscribed, the browser dropped it): removed.
- 429, 5xx, a timeout or a refused connection: tried again after a back-off that doubles each time
  (`Retry-After` when the service gives one, capped), up to `attempts` tries.
- Anything else (400, 401, 403, 413): logged and given up; the subscription is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from navi.logging import get_logger
from navi.net.fetch import web_client
from navi.net.guard import FetchRefused, NetGuard
from navi.push.models import PushMessage, PushStore, PushSubscription
from navi.push.vapid import VapidKeys

log = get_logger(__name__)
Outcome = Literal["sent", "gone", "failed", "refused"]
EXPIRY_SECONDS = 12 * 3600
RETRY_AFTER_MAX = 300.0


@dataclass(frozen=True)
class PushConfig:
    subject: str = "mailto:navi@localhost"  # the VAPID `sub`: who the push service may contact
    attempts: int = 5
    backoff: float = 2.0  # seconds before the first retry; doubled each time
    timeout: float = 10.0
    ttl: int = 24 * 3600  # how long a push service keeps a message for a browser that is offline


class PushSender:
    def __init__(
        self,
        store: PushStore,
        keys: VapidKeys,
        guard: NetGuard,
        config: PushConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], object] = asyncio.sleep,
    ) -> None:
        self.store = store
        self.keys = keys
        self.guard = guard
        self.config = config or PushConfig()
        self.clock = clock
        self._sleep = sleep
        self._tasks: set[asyncio.Task[object]] = set()
        self._client: httpx.AsyncClient | None = None
        self._signer: Any = None

    @property
    def public_key(self) -> str:
        return self.keys.public_key

    async def has_subscriptions(self, owner: str) -> bool:
        return bool(await self.store.list(owner))

    def send(self, owner: str, message: PushMessage) -> None:
        """Deliver `message` to every browser `owner` subscribed, in the background."""
        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(self.deliver(owner, message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def deliver(self, owner: str, message: PushMessage) -> dict[str, Outcome]:
        """Every subscription of `owner` tried (retries included); the outcome per subscription id."""
        subscriptions = await self.store.list(owner)
        data = json.dumps(message.payload(), ensure_ascii=False).encode("utf-8")
        outcomes = await asyncio.gather(*(self._one(s, data, message) for s in subscriptions))
        return {s.id: outcome for s, outcome in zip(subscriptions, outcomes, strict=True)}

    async def settle(self) -> None:
        """Wait for the deliveries under way (tests; shutdown waits for none)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _one(self, subscription: PushSubscription, data: bytes, message: PushMessage) -> Outcome:
        delay = self.config.backoff
        for attempt in range(1, self.config.attempts + 1):
            try:
                response = await self._post(subscription, data, message)
            except FetchRefused as exc:
                log.warning("push.refused", subscription=subscription.id, reason=str(exc))
                return "refused"
            except (httpx.HTTPError, OSError) as exc:
                status, wait = None, delay
                reason = f"{type(exc).__name__}: {exc}"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    log.info("push.sent", subscription=subscription.id, kind=message.kind)
                    return "sent"
                if status in (404, 410):
                    await self.store.drop(subscription.endpoint)
                    log.info("push.gone", subscription=subscription.id, status=status)
                    return "gone"
                reason = f"HTTP {status}: {response.text[:200]}"
                if status != 429 and status < 500:
                    log.warning("push.rejected", subscription=subscription.id, reason=reason)
                    return "failed"
                wait = _retry_after(response.headers.get("retry-after"), delay)
            if attempt == self.config.attempts:
                log.warning("push.failed", subscription=subscription.id, reason=reason, attempts=attempt)
                return "failed"
            log.info("push.retry", subscription=subscription.id, reason=reason, status=status, wait=wait)
            await self._sleep(wait)  # type: ignore[misc]
            delay *= 2
        return "failed"

    async def _post(
        self, subscription: PushSubscription, data: bytes, message: PushMessage
    ) -> httpx.Response:
        from pywebpush import WebPusher

        body = WebPusher(subscription.info).encode(data, "aes128gcm")["body"]
        parts = urlsplit(subscription.endpoint)
        claims = {
            "aud": f"{parts.scheme}://{parts.netloc}",
            "exp": int(self.clock()) + EXPIRY_SECONDS,
            "sub": self.config.subject,
        }
        if self._signer is None:
            self._signer = self.keys.signer()
        headers = {
            **self._signer.sign(claims),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(self.config.ttl),
            "Urgency": message.urgency,
        }
        if self._client is None:
            self._client = web_client(self.guard, self.config.timeout)
        return await self._client.post(subscription.endpoint, content=body, headers=headers)


def _retry_after(value: str | None, default: float) -> float:
    if value is None:
        return default
    try:
        return min(max(float(value), 0.0), RETRY_AFTER_MAX)
    except ValueError:
        return default
