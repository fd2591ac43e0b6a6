"""`notify`: the model sends the user a short notification — a title, a line or two, and a link
back to this conversation — through the same routes as everything else Navi tells a user while
they are away (navi/push/notifier.py: their settings, whether a page of theirs is in view, quiet
hours, Web Push, a channel as the fallback). The call and its result are in the conversation too,
so nothing is said only in the notification.

Rate-limited per user: at most `PER_HOUR` in any hour (counted in this process), so a model in a
loop cannot flood a phone."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from navi import runctx
from navi.push.models import BODY_MAX, TITLE_MAX, PushMessage
from navi.push.notifier import Notifier
from navi.sessions.models import DEFAULT_OWNER
from navi.tools.base import Tool, ToolResult

PER_HOUR = 6
SAID = {
    "pushed": "sent to the user's subscribed browsers",
    "visible": "not pushed: the user has Navi open and sees this conversation's tool call",
    "quiet": "held back: it is the user's quiet hours (they see it in the conversation)",
    "off": "held back: the user turned these notifications off (they see it in the conversation)",
    "channel": "sent through the user's channel (no browser is subscribed)",
    "nowhere": "not sent: the user subscribed no browser and has no channel (it stays in the conversation)",
}


class NotifyTool(Tool):
    name = "notify"
    description = (
        "Send the user a short notification (their phone or browser, even with Navi closed): `title` "
        "and `body`, linking to this conversation. Only for what they must know now; at most "
        f"{PER_HOUR} an hour."
    )
    parameters = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": TITLE_MAX},
            "body": {"type": "string", "minLength": 1, "maxLength": BODY_MAX},
        },
        "required": ["title", "body"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.notifier: Notifier | None = None  # set by the composition root once services exist
        self.clock = clock
        self._sent: dict[str, list[float]] = {}

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        owner = ctx.owner if ctx else DEFAULT_OWNER
        if self.notifier is None:
            return ToolResult.fail("notifications are not available in this Navi")
        title, body = str(params["title"]).strip(), str(params["body"]).strip()
        if not title or not body:
            return ToolResult.fail("`title` and `body` must not be blank")
        now = self.clock()
        recent = [t for t in self._sent.get(owner, []) if now - t < 3600]
        if len(recent) >= PER_HOUR:
            wait = int(3600 - (now - recent[0])) // 60 + 1
            return ToolResult.fail(f"rate limit: {PER_HOUR} notifications an hour; the next in {wait} min")
        self._sent[owner] = [*recent, now]
        session = ctx.root_session if ctx and ctx.persistent else None
        message = PushMessage(kind="notify", title=title, body=body, session_id=session)
        outcome = await self.notifier.notify(owner, message)
        return ToolResult.ok(f"Notification “{title}”: {SAID[outcome]}.", outcome=outcome)
