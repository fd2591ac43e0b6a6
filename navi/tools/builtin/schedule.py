"""`schedule`: the agent sets, lists and cancels reminders and recurring tasks for the user.

A schedule made here belongs to the turn's user and runs in the turn's profile. A one-off
(`at`) runs in this conversation by default — the reminder appears where it was asked for; a
recurring one (`cron`, `every_seconds`) gets a new session per run (a morning briefing each day
on its own page). `target` overrides either; `deliver` also sends each answer to a channel
address (checked against the user's allowlist when it is sent). The result echoes the time
understood, in the user's zone, so a misread "tomorrow at 9" is caught by whoever reads it.
"""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.schedules.service import NewSchedule, ScheduleService
from navi.schedules.when import ScheduleError, describe
from navi.sessions.models import DEFAULT_OWNER, is_session_id
from navi.tools.base import Tool, ToolResult


class ScheduleTool(Tool):
    name = "schedule"
    description = (
        "Set, list or cancel reminders and recurring tasks. set: `prompt` (what to do when it runs) "
        "and one of `at` (ISO or 'tomorrow 9am'), `cron`, `every_seconds`; `deliver` {channel, to} "
        "also sends the answer to an address on the user's channel allowlist. cancel: `id`."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["set", "list", "cancel"]},
            "prompt": {"type": "string", "minLength": 1, "maxLength": 20000},
            "title": {"type": "string", "maxLength": 200},
            "at": {"type": "string", "minLength": 1, "maxLength": 200},
            "cron": {"type": "string", "minLength": 1, "maxLength": 200},
            "every_seconds": {"type": "integer", "minimum": 5},
            "target": {"type": "string", "enum": ["this_session", "new_session"]},
            "id": {"type": "string", "minLength": 1, "maxLength": 64},
            "deliver": {
                "type": "object",
                "properties": {
                    "channel": {"type": "string", "minLength": 1, "maxLength": 32},
                    "to": {"type": "string", "minLength": 1, "maxLength": 320},
                },
                "required": ["channel", "to"],
                "additionalProperties": False,
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }
    timeout = 20.0

    def __init__(self, service: ScheduleService) -> None:
        self.service = service

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        owner = ctx.owner if ctx else DEFAULT_OWNER
        action = params["action"]
        if action == "list":
            return await self._list(owner)
        if action == "cancel":
            return await self._cancel(owner, params.get("id"))
        if not params.get("prompt"):
            return ToolResult.fail("action=set needs `prompt`: what to do or say when it runs")
        recurring = params.get("cron") is not None or params.get("every_seconds") is not None
        target = params.get("target") or ("new_session" if recurring else "this_session")
        session_id = ctx.root_session if ctx else None
        if target == "new_session" or not session_id or not is_session_id(session_id):
            session_id = None
        try:
            made = await self.service.create(
                owner,
                NewSchedule(
                    prompt=params["prompt"],
                    title=params.get("title"),
                    profile_id=ctx.profile_id if ctx and ctx.profile_id else None,
                    session_id=session_id,
                    cron=params.get("cron"),
                    every_seconds=params.get("every_seconds"),
                    at=params.get("at"),
                    deliver=params.get("deliver"),
                ),
            )
        except ScheduleError as exc:
            return ToolResult.fail(str(exc))
        where = "in this conversation" if made.session_id else "in a new conversation each time"
        if made.deliver is not None:
            where += f", and the answer is sent to {made.deliver.channel}:{made.deliver.to}"
        if made.kind == "at":
            assert made.at is not None
            head = f"Reminder set for {describe(made.at, made.timezone)}: {made.title}"
        else:
            head = f"Scheduled ({self.service.describe(made)}): {made.title}"
        return ToolResult.ok(f"{head}\nIt runs {where}; id {made.id}.", schedule_id=made.id)

    async def _list(self, owner: str) -> ToolResult:
        found = await self.service.store.list(owner=owner)
        if not found:
            return ToolResult.ok("No schedules.")
        lines = []
        for s in found:
            state = " [paused]" if s.paused else ""
            lines.append(f"- {s.id}: {s.title} — {self.service.describe(s)}{state}")
        return ToolResult.ok(f"{len(found)} schedule(s):\n" + "\n".join(lines))

    async def _cancel(self, owner: str, schedule_id: str | None) -> ToolResult:
        if not schedule_id:
            return ToolResult.fail("action=cancel needs `id` (see action=list)")
        found = await self.service.store.get(schedule_id, owner=owner)
        if found is None or not await self.service.store.delete(schedule_id, owner=owner):
            return ToolResult.fail(f"no schedule '{schedule_id}' (see action=list)")
        return ToolResult.ok(f"Cancelled: {found.title}")
