"""When Navi tells a user something while they are away, and how.

`Notifier.turn_frame()` is told every event of every run this worker drives (the run manager's
observer) with what the run is for (`purpose`: "answer" for a message from a page, "reminder" for
a schedule, "job" for a background job, "channel" for a run a channel answers itself, "api" for one
the OpenAI-compatible API or the MCP server waits on — neither notifies). It acts on
two: `approval_required` (a call waits for the user: notified at once, with Allow and Deny; and
`elicitation_required`, an MCP server's question, notified without buttons: it is answered on the
page) and
`stream_end` / `error` (the run ended: notified with the start of the answer; a job's end is
notified by the job runner, once its result is posted back). A stopped run
notifies nobody (the user stopped it).

`Notifier.notify()` decides for one message, in this order:

1. The user's settings turn the kind off → `off`.
2. One of the user's pages is visible (on any worker: `Presence`) → `visible`: the page shows it.
3. Quiet hours hold → `quiet`.
4. The user subscribed a browser → `pushed` (through `PushSender`, in the background).
5. Else, for an approval, a job or the `notify` tool, a channel (Matrix, e-mail) with one of the
   user's addresses → `channel`.
6. Else → `nowhere`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal

from navi.logging import get_logger
from navi.protocol import ApprovalRequired, ElicitationRequired, ErrorEvent, RunEvent, StreamEnd
from navi.push.models import Action, Kind, PushMessage
from navi.push.prefs import InMemoryNotifySettings, NotifySettingsStore
from navi.push.presence import InMemoryPresence, Presence
from navi.push.sender import PushSender
from navi.sessions.store import SessionStore

log = get_logger(__name__)

# The events of a run that may notify: a question for the user (an approval, an MCP server's), or the end.
Ended = ApprovalRequired | ElicitationRequired | StreamEnd | ErrorEvent
Outcome = Literal["off", "visible", "quiet", "pushed", "channel", "nowhere"]
Purpose = Literal["answer", "reminder", "job", "channel"]
# (owner, title, text, session id) → whether a channel took it.
Fallback = Callable[[str, str, str, str | None], Awaitable[bool]]
PREVIEW = 180
# What goes to a channel when no browser is subscribed: what needs the user or what they asked to
# hear of. Not every answer (a channel per answer would be noise), nor a schedule's end (a schedule
# delivers to a channel itself when told to: `deliver`).
CHANNEL_KINDS = frozenset({"approval", "job", "notify"})


@dataclass
class Sent:
    owner: str
    message: PushMessage
    outcome: Outcome


class Notifier:
    def __init__(
        self,
        sessions: SessionStore,
        *,
        push: PushSender | None = None,
        presence: Presence | None = None,
        settings: NotifySettingsStore | None = None,
        fallback: Fallback | None = None,
        zone: tzinfo = UTC,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sessions = sessions
        self.push = push
        self.presence = presence or InMemoryPresence()
        self.settings = settings or InMemoryNotifySettings()
        self.fallback = fallback
        self.zone = zone
        self.clock = clock
        self.sent: list[Sent] = []  # the latest decisions, for tests and `navi doctor`-like looks
        self._tasks: set[asyncio.Task[Any]] = set()

    async def notify(self, owner: str, message: PushMessage) -> Outcome:
        outcome = await self._decide(owner, message)
        self.sent = [*self.sent[-49:], Sent(owner, message, outcome)]
        log.info("notify.decided", kind=message.kind, outcome=outcome, session_id=message.session_id)
        return outcome

    async def _decide(self, owner: str, message: PushMessage) -> Outcome:
        prefs = await self.settings.get(owner)
        if not prefs.allows(message.kind):
            return "off"
        if await self.presence.visible(owner):
            return "visible"
        if prefs.quiet is not None and prefs.quiet.holds(self.clock().astimezone(self.zone)):
            return "quiet"
        if self.push is not None and await self.push.has_subscriptions(owner):
            self.push.send(owner, message)
            return "pushed"
        if self.fallback is not None and message.kind in CHANNEL_KINDS:
            text = message.body if not message.session_id else f"{message.body}\n\n(Navi: {message.url})"
            try:
                if await self.fallback(owner, message.title, text, message.session_id):
                    return "channel"
            except Exception:
                log.exception("notify.channel_failed", kind=message.kind)
        return "nowhere"

    # --- runs ------------------------------------------------------------------------------------

    def turn_frame(self, session_id: str, purpose: str, event: RunEvent) -> None:
        """Told by the run manager; returns at once (the work is a task of its own)."""
        if purpose in ("channel", "api") or not isinstance(event, Ended):
            return
        if purpose == "job" and not isinstance(event, ApprovalRequired | ElicitationRequired):
            return  # the job runner notifies once the result is posted (navi/runs/background.py)
        task = asyncio.get_running_loop().create_task(self._from_run(session_id, purpose, event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _from_run(self, session_id: str, purpose: str, event: Ended) -> None:
        try:
            session = await self.sessions.get(session_id, display=False)
            if session is None:
                return
            title = session.name or "Navi"
            await self.notify(session.owner, run_message(session_id, title, purpose, event))
        except Exception:
            log.exception("notify.run_failed", session_id=session_id)


def run_message(session_id: str, title: str, purpose: str, event: Ended) -> PushMessage:
    ended: Kind = {"reminder": "reminder", "job": "job"}.get(purpose, "answer")  # type: ignore[assignment]
    message_id: str | None = None
    match event:
        case ApprovalRequired(call_id=call, tool=tool, reason=reason):
            return PushMessage(
                kind="approval",
                title=f"Navi waits for your approval · {title}",
                body=_short(f"{tool}: {reason}" if reason else tool),
                session_id=session_id,
                approval_id=call,
                actions=(Action("allow", "Allow"), Action("deny", "Deny")),
                tag=f"navi-approval-{call}",
                urgency="high",
            )
        case ElicitationRequired(elicitation_id=question, server=server, message=asked):
            return PushMessage(  # answered on the page: a form or a page to open, no buttons here
                kind="approval",
                title=f"Navi waits for your answer · {title}",
                body=_short(f"The MCP server “{server}” asks: {asked}"),
                session_id=session_id,
                tag=f"navi-question-{question}",
                urgency="high",
            )
        case ErrorEvent(message=message):
            body = _short(f"Failed: {message or 'the run failed'}")
        case StreamEnd(content=content, message_id=answer):
            body = _short(content) or "Done."
            # The notification opens the conversation at the answer (`?m=`, the page reveals it).
            message_id = answer if isinstance(answer, str) else None
    return PushMessage(kind=ended, title=title, body=body, session_id=session_id, message_id=message_id)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1].rstrip() + "…"
