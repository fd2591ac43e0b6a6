"""Scheduled runs, done as if the schedule's owner had sent its prompt from the page.

The runner (navi/schedules/runner.py) decides that a run happens; this executes it through the
same `RunManager.start` a WebSocket message uses, so the run is the normal agent loop (tools,
memory, approvals), and every connection watching its session gets its frames live. Around it:

- The session: a new one per run (named after the schedule), or the schedule's fixed session,
  switched to the schedule's profile first when it is in another one.
- A busy session (a turn answering) is waited for, up to `busy_wait` seconds; still busy then,
  the run is recorded as `skipped` ("session busy") rather than interleaving with the user.
- The owner's connections get `schedule_run` frames (`navi/runs/feed.py`) when the run starts,
  when it waits for an approval, and when it ends; the run waits for an approval exactly as a
  page's would (`NAVI_APPROVAL_TIMEOUT_SECONDS`), and that wait is pushed to the webhook too.
- At the end the run is recorded (`ok` with a preview of the answer, or `error` with the
  message), the session is marked unread for the page's badge, and the webhook is notified.
- An `ok` answer is then sent where the schedule's `deliver` says; when it is not (the channel
  refused the address, the send failed), the run stays `ok` and its `error` says why.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from navi.agent.turns import TurnOptions
from navi.llm.messages import utcnow
from navi.profiles.registry import ProfileRegistry, UnknownProfile
from navi.protocol import (
    ApprovalRequired,
    ApprovalResolved,
    ErrorEvent,
    ScheduleRunChanged,
    StreamEnd,
    StreamStopped,
)
from navi.runs.manager import RunManager
from navi.runs.run import AgentRun, RunActive, Subscriber
from navi.schedules.models import RunStatus, Schedule, ScheduleRun
from navi.schedules.notify import WebhookNotifier, first_lines
from navi.schedules.store import ScheduleStore
from navi.sessions.store import SessionStore

log = structlog.stdlib.get_logger(__name__)
PREVIEW_CHARS = 300
# Sends a schedule's answer to a channel: (owner, channel, to, title, text, session id) → why not,
# or None when sent (a reply to it continues the session).
Deliverer = Callable[[str, str, str, str, str, str | None], Awaitable[str | None]]


class ScheduledRuns:
    """What the schedule runner calls for each run it claims (`navi/compose/services.py` wires
    the two together)."""

    def __init__(
        self,
        store: ScheduleStore,
        sessions: SessionStore,
        profiles: ProfileRegistry,
        runs: RunManager,
        *,
        busy_wait: float,
        notifier: WebhookNotifier | None = None,
        deliver: Deliverer | None = None,
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.profiles = profiles
        self.runs = runs
        self.busy_wait = busy_wait
        self.notifier = notifier
        self.deliver = deliver

    async def __call__(self, schedule: Schedule, run: ScheduleRun) -> None:
        try:
            session_id = await self._session(schedule)
        except (LookupError, UnknownProfile) as exc:
            await self._finish(schedule, run, "error", error=str(exc))
            return
        run.session_id = session_id
        await self.store.update_run(run.id, {"session_id": session_id})
        agent_run = await self._start(session_id, schedule.prompt)
        if agent_run is None:
            await self._finish(schedule, run, "skipped", error="the session stayed busy with another turn")
            return
        self._frame(schedule, run, "running")
        outcome = await self._follow(schedule, run, agent_run)
        match agent_run.result:
            case StreamEnd(content=content):
                await self._finish(schedule, run, "ok", answer=content)
            case ErrorEvent(message=message):
                await self._finish(schedule, run, "error", error=message or "the run failed")
            case None:
                await self._finish(schedule, run, "error", error=outcome or "the run was stopped")

    async def _session(self, schedule: Schedule) -> str:
        sessions = self.sessions
        profiles = self.profiles
        profiles.get(schedule.profile_id)  # UnknownProfile when it was removed since
        if schedule.session_id is None:
            made = await sessions.create(schedule.profile_id, owner=schedule.owner, name=schedule.title)
            return made.id
        found = await sessions.get(schedule.session_id, owner=schedule.owner, display=False)
        if found is None:
            raise LookupError(f"its session {schedule.session_id} no longer exists")
        if found.profile_id != schedule.profile_id:
            await sessions.set_profile(found.id, schedule.profile_id)
        return found.id

    async def _start(self, session_id: str, prompt: str) -> AgentRun | None:
        deadline = asyncio.get_running_loop().time() + self.busy_wait
        while True:
            try:
                return await self.runs.start(session_id, prompt, TurnOptions(purpose="reminder"))
            except RunActive:
                current = self.runs.slots.get(session_id)
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    return None
                if current is not None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(current.settled.wait(), min(left, 5.0))
                else:
                    await asyncio.sleep(min(left, 1.0))  # held by another process: ask again soon

    async def _follow(self, schedule: Schedule, run: ScheduleRun, agent_run: AgentRun) -> str | None:
        """Read the run's frames until its outcome is known; approvals waited for are reported."""
        sub = await self.runs.followers.follow(agent_run.session_id, run_id=agent_run.run_id, typed=True)
        if sub is None:  # ended and let go of already
            return None
        try:
            while True:
                event = await sub.queue.get()
                match event:
                    case Subscriber():  # the end of the run's events
                        return None
                    case ApprovalRequired(tool=tool, reason=reason):
                        await self.store.update_run(run.id, {"status": "waiting_approval"})
                        self._frame(schedule, run, "waiting_approval", tool=tool)
                        await self._notify(schedule, f"Waiting for your approval: {tool} — {reason}")
                    case ApprovalResolved():
                        await self.store.update_run(run.id, {"status": "running"})
                        self._frame(schedule, run, "running")
                    case StreamEnd() | ErrorEvent():
                        return None
                    case StreamStopped():
                        return "the run was stopped"
        finally:
            sub.close()

    async def _finish(
        self, schedule: Schedule, run: ScheduleRun, status: RunStatus, *, answer: str = "", error: str = ""
    ) -> None:
        preview = first_lines(answer, lines=4, chars=PREVIEW_CHARS) if answer else None
        await self.store.update_run(
            run.id,
            {"status": status, "finished_at": utcnow(), "preview": preview, "error": error or None},
        )
        unread = False
        if run.session_id is not None and status in ("ok", "error"):
            await self.store.mark_unread(run.session_id, schedule.owner)
            unread = True
        self._frame(schedule, run, status, preview=preview, error=error or None, unread=unread)
        if status == "ok":
            await self._notify(schedule, first_lines(answer) or "(no answer text)", tags="white_check_mark")
            await self._deliver(schedule, run, answer)
        else:
            await self._notify(
                schedule, f"Failed: {error}" if status == "error" else f"Skipped: {error}", tags="warning"
            )
        log.info("schedule.run_finished", schedule_id=schedule.id, run_id=run.id, status=status)

    def _frame(self, schedule: Schedule, run: ScheduleRun, status: RunStatus, **extra: Any) -> None:
        frame = ScheduleRunChanged(
            schedule_id=schedule.id,
            schedule_run_id=run.id,
            session_id=run.session_id,
            status=status,
            title=schedule.title,
            manual=run.manual,
            **extra,
        )
        self.runs.feed.publish(frame.frame(), schedule.owner)

    async def _deliver(self, schedule: Schedule, run: ScheduleRun, answer: str) -> None:
        """The answer sent where the schedule says (`deliver`: a channel's address); a failure is
        logged, pushed and kept as the run's `error`: the run stays `ok` (it answered)."""
        if schedule.deliver is None:
            return
        target = schedule.deliver
        try:
            why = (
                "no channels are configured"
                if self.deliver is None
                else await self.deliver(
                    schedule.owner, target.channel, target.to, schedule.title, answer, run.session_id
                )
            )
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
        if why is not None:
            log.warning("schedule.not_delivered", schedule_id=schedule.id, channel=target.channel, error=why)
            failed = f"Not delivered to {target.channel}:{target.to}: {why}"
            await self.store.update_run(run.id, {"error": failed})
            await self._notify(schedule, failed, tags="warning")

    async def _notify(self, schedule: Schedule, body: str, *, tags: str = "") -> None:
        if self.notifier is not None:
            await self.notifier.notify(schedule.title, body, tags=tags)
