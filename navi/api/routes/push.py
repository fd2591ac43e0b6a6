"""Web Push: `GET /push/key` (the VAPID public key a page subscribes with), `GET /push/subscriptions`
(this user's browsers), `POST /push/subscriptions` (the browser's `PushSubscription.toJSON()`),
`DELETE /push/subscriptions` (by endpoint), and `GET|PUT /push/settings` (which kinds notify, quiet
hours). Each user sees and removes only their own: another
user's endpoint answers 404 like one that was never subscribed. See docs/notifications.md."""

from __future__ import annotations

from datetime import datetime

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import NotFound, Unavailable
from navi.api.routing import api_router
from navi.compose.runtime import Runtime
from navi.llm.messages import utcnow
from navi.push.models import ENDPOINT_MAX, checked
from navi.push.prefs import NotifySettings
from navi.push.sender import PushSender

router = api_router(prefix="/push", tags=["notifications"])


class PublicKey(BaseModel):
    public_key: str = Field(description="The VAPID public key (base64url): the page's applicationServerKey")


class Keys(BaseModel):
    model_config = ConfigDict(extra="ignore")

    p256dh: str = Field(..., max_length=200)
    auth: str = Field(..., max_length=100)


class Subscribe(BaseModel):
    """What the browser's `PushSubscription.toJSON()` gives (`expirationTime` is ignored)."""

    model_config = ConfigDict(extra="ignore")

    endpoint: str = Field(..., min_length=8, max_length=ENDPOINT_MAX)
    keys: Keys


class Unsubscribe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    endpoint: str = Field(..., min_length=1, max_length=ENDPOINT_MAX)


class SubscriptionView(BaseModel):
    id: str
    endpoint: str
    user_agent: str
    created_at: datetime


class Removed(BaseModel):
    ok: bool = True


def _sender(runtime: Runtime) -> PushSender:
    if runtime.push is None:
        raise Unavailable("Web Push is not set up on this Navi")
    return runtime.push


@router.get("/key", response_model=PublicKey, summary="The VAPID public key to subscribe with")
async def public_key(runtime: RuntimeDep) -> PublicKey:
    return PublicKey(public_key=_sender(runtime).public_key)


@router.get("/subscriptions", response_model=list[SubscriptionView], summary="Your subscribed browsers")
async def list_subscriptions(runtime: RuntimeDep, user: CurrentUser) -> list[SubscriptionView]:
    found = await _sender(runtime).store.list(user)
    return [
        SubscriptionView(id=s.id, endpoint=s.endpoint, user_agent=s.user_agent, created_at=s.created_at)
        for s in found
    ]


@router.post(
    "/subscriptions", status_code=201, response_model=SubscriptionView, summary="Subscribe this browser"
)
async def subscribe(
    body: Subscribe, request: Request, runtime: RuntimeDep, user: CurrentUser
) -> SubscriptionView:
    sender = _sender(runtime)
    agent = request.headers.get("user-agent", "")
    sub = checked(user, body.endpoint, body.keys.p256dh, body.keys.auth, utcnow(), agent)
    await sender.store.save(sub)
    return SubscriptionView(
        id=sub.id, endpoint=sub.endpoint, user_agent=sub.user_agent, created_at=sub.created_at
    )


@router.delete("/subscriptions", response_model=Removed, summary="Unsubscribe a browser")
async def unsubscribe(body: Unsubscribe, runtime: RuntimeDep, user: CurrentUser) -> Removed:
    if not await _sender(runtime).store.remove(user, body.endpoint):
        raise NotFound("no such subscription")
    return Removed()


@router.get("/settings", response_model=NotifySettings, summary="What you are notified of, and quiet hours")
async def get_settings(runtime: RuntimeDep, user: CurrentUser) -> NotifySettings:
    return await runtime.notify_settings.get(user)


@router.put("/settings", response_model=NotifySettings, summary="Choose what you are notified of")
async def put_settings(body: NotifySettings, runtime: RuntimeDep, user: CurrentUser) -> NotifySettings:
    await runtime.notify_settings.put(user, body)
    return body
