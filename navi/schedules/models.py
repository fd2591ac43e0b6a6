"""What a schedule is, and one run of it.

A schedule belongs to one owner (like a session) and says what to ask (`prompt`, in `profile_id`),
where (`session_id`: one fixed session; None: a new session per run) and when: exactly one of a
cron expression, an interval in seconds, or one moment (`at`). Cron expressions are read in the
schedule's `timezone` (the `TZ` setting when it was made). `next_run_at` is the one instant the
runner acts on; it is None when nothing is due any more (a one-off that ran is `done`).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from navi.llm.messages import utcnow
from navi.sessions.models import DEFAULT_OWNER

Kind = Literal["cron", "interval", "at"]
Missed = Literal["skip", "once"]
# running: started; waiting_approval: a tool call waits for the user; ok / error: finished;
# skipped: not run (missed while Navi was down with `missed="skip"`, or its session stayed busy).
RunStatus = Literal["running", "waiting_approval", "ok", "error", "skipped"]
MISSED_POLICIES: tuple[Missed, ...] = ("skip", "once")
MIN_EVERY_SECONDS = 5
TITLE_MAX = 200
PROMPT_MAX = 20_000


def new_schedule_id() -> str:
    return uuid.uuid4().hex


def utc(value: datetime) -> datetime:
    """An aware UTC instant (naive values are taken as UTC): what the stores keep and compare."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Delivery(BaseModel):
    """Where a run's answer is also sent: an address of a channel (`{"channel": "email", "to":
    "ana@example.org"}`, `{"channel": "matrix", "to": "!room:example.org"}`), which must be on that
    channel's allowlist for the schedule's owner (for a room: every member but Navi)."""

    channel: str = Field(..., min_length=1, max_length=32, pattern=r"^[a-z][a-z0-9_-]*$")
    to: str = Field(..., min_length=1, max_length=320)


def default_title(prompt: str) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= 60 else f"{line[:59]}…"


class Schedule(BaseModel):
    id: str = Field(default_factory=new_schedule_id)
    owner: str = DEFAULT_OWNER
    title: str
    prompt: str
    profile_id: str
    session_id: str | None = None  # None: a new session for every run
    kind: Kind
    cron: str | None = None
    every_seconds: int | None = None
    at: datetime | None = None
    timezone: str = "UTC"
    missed: Missed = "skip"
    paused: bool = False
    done: bool = False  # a one-off that has run (it stays listed)
    next_run_at: datetime | None = None
    last_run_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    deliver: Delivery | None = None  # the answer also sent to a channel (None: the page only)


class ScheduleRun(BaseModel):
    id: str = Field(default_factory=new_schedule_id)
    schedule_id: str
    owner: str = DEFAULT_OWNER
    due_at: datetime  # the instant it was claimed for (unique per schedule: no double runs)
    started_at: datetime  # from the runner's clock: never read here, so tests can set every instant
    finished_at: datetime | None = None
    status: RunStatus = "running"
    manual: bool = False  # started by "run now", not by the clock
    session_id: str | None = None
    preview: str | None = None  # the first lines of the answer
    error: str | None = None  # why it failed; on an `ok` run, why its answer was not delivered
