"""Schedules: `POST /schedules`, `GET /schedules`, `GET|PATCH|DELETE /schedules/{id}`,
`POST /schedules/{id}/run`. Each user sees only their own; another user's schedule answers 404
like one that does not exist. Bad input (a bad cron, a moment in the past, two of cron /
every_seconds / at, an unknown profile, a session that is not the user's) answers 422 with a
sentence saying what to fix (`code: bad_schedule`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import NotFound
from navi.api.routing import api_router
from navi.schedules.models import PROMPT_MAX, TITLE_MAX, Delivery, Schedule, ScheduleRun
from navi.schedules.runner import ScheduleRunner
from navi.schedules.service import NewSchedule

router = api_router(prefix="/schedules", tags=["schedules"])
RECENT_RUNS = 20


class CreateSchedule(BaseModel):
    model_config = ConfigDict(extra="forbid")  # {"every": 60} is a mistake to report, not to ignore

    prompt: str = Field(..., min_length=1, max_length=PROMPT_MAX, description="What to ask when it runs")
    profile_id: str | None = Field(None, max_length=64, description="Default: the session's, else the first")
    session_id: str | None = Field(
        None, max_length=64, description="Run in this session; null: a new one each run"
    )
    cron: str | None = Field(None, max_length=200, description="Five fields, read in the user's zone (TZ)")
    every_seconds: int | None = Field(None, description="At least 5")
    at: str | None = Field(
        None, max_length=200, description="One moment: ISO 8601 (without an offset: the user's zone)"
    )
    title: str | None = Field(None, max_length=TITLE_MAX, description="Default: the prompt's start")
    missed: Literal["skip", "once"] | None = Field(
        None,
        description="A run missed while Navi was down: skip it or run it once (default: once for at)",
    )
    paused: bool = False
    deliver: Delivery | None = Field(
        None, description='Also send the answer to a channel: {"channel": "email", "to": "…"} (allowlisted)'
    )


class UpdateSchedule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paused: bool | None = None
    prompt: str | None = Field(None, min_length=1, max_length=PROMPT_MAX)
    title: str | None = Field(None, max_length=TITLE_MAX)
    profile_id: str | None = Field(None, max_length=64)
    session_id: str | None = Field(None, max_length=64, description="null: a new session each run")
    cron: str | None = Field(None, max_length=200)
    every_seconds: int | None = None
    at: str | None = Field(None, max_length=200)
    missed: Literal["skip", "once"] | None = None
    deliver: Delivery | None = Field(None, description="null: the answer goes to the page only")


class ScheduleView(Schedule):
    """A schedule as the API shows it; `next_run_at` is UTC, `timezone` the zone its cron and
    times are read in."""


class ScheduleDetail(ScheduleView):
    runs: list[ScheduleRun] = Field(default_factory=list, description="The latest runs, newest first")


class Started(BaseModel):
    schedule_id: str
    schedule_run_id: str
    status: Literal["running"] = "running"
    started_at: datetime


class Deleted(BaseModel):
    ok: bool = True


def _runner(request: Request) -> ScheduleRunner:
    runner: ScheduleRunner = request.app.state.schedule_runner
    return runner


async def _owned(runtime: RuntimeDep, user: str, schedule_id: str) -> Schedule:
    found = await runtime.schedules.store.get(schedule_id, owner=user) if len(schedule_id) <= 64 else None
    if found is None:
        raise NotFound(f"no schedule '{schedule_id[:64]}'")
    return found


@router.post("", status_code=201, response_model=ScheduleView, summary="Create a schedule")
async def create_schedule(body: CreateSchedule, runtime: RuntimeDep, user: CurrentUser) -> Schedule:
    return await runtime.schedules.create(user, NewSchedule(**body.model_dump()))


@router.get("", response_model=list[ScheduleView], summary="List your schedules, oldest first")
async def list_schedules(runtime: RuntimeDep, user: CurrentUser) -> list[Schedule]:
    return await runtime.schedules.store.list(owner=user)


@router.get("/{schedule_id}", response_model=ScheduleDetail, summary="A schedule with its recent runs")
async def get_schedule(schedule_id: str, runtime: RuntimeDep, user: CurrentUser) -> ScheduleDetail:
    found = await _owned(runtime, user, schedule_id)
    runs = await runtime.schedules.store.runs(found.id, limit=RECENT_RUNS)
    return ScheduleDetail(**found.model_dump(), runs=runs)


@router.patch("/{schedule_id}", response_model=ScheduleView, summary="Pause, resume or edit a schedule")
async def update_schedule(
    schedule_id: str, body: UpdateSchedule, runtime: RuntimeDep, user: CurrentUser
) -> Schedule:
    await _owned(runtime, user, schedule_id)
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    changed = await runtime.schedules.edit(schedule_id, user, changes)
    if changed is None:
        raise NotFound(f"no schedule '{schedule_id[:64]}'")
    return changed


@router.delete("/{schedule_id}", response_model=Deleted, summary="Delete a schedule and its runs")
async def delete_schedule(schedule_id: str, runtime: RuntimeDep, user: CurrentUser) -> Deleted:
    await _owned(runtime, user, schedule_id)
    if not await runtime.schedules.store.delete(schedule_id, owner=user):
        raise NotFound(f"no schedule '{schedule_id[:64]}'")
    return Deleted()


@router.post("/{schedule_id}/run", status_code=202, response_model=Started, summary="Run a schedule now")
async def run_schedule(schedule_id: str, request: Request, runtime: RuntimeDep, user: CurrentUser) -> Started:
    """Starts a run at once, whatever the timing (a paused or done schedule too); its timing is
    not changed. The run's session and outcome follow as `schedule_run` frames and in
    `GET /schedules/{id}`."""
    found = await _owned(runtime, user, schedule_id)
    run = await _runner(request).run_now(found)
    if run is None:
        raise NotFound(f"no schedule '{schedule_id[:64]}'")
    return Started(schedule_id=found.id, schedule_run_id=run.id, started_at=run.started_at)
