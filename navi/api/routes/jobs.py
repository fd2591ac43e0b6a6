"""Background jobs: `POST /jobs` (start one, from a conversation or on its own), `GET /jobs` (yours,
newest first), `GET /jobs/{id}`, `POST /jobs/{id}/stop`. Each user sees and stops only their own;
another user's job answers 404 like one that does not exist. A prompt that is empty or too long,
or a conversation that is not the user's, answers 422 (`bad_job`); more jobs waiting or running
than NAVI_JOBS_PER_USER answers 409 (`job_limit`). See docs/jobs.md."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from navi.api.deps import CurrentUser, RuntimeDep
from navi.api.errors import NotFound, Unavailable
from navi.api.routing import api_router
from navi.compose.runtime import Runtime
from navi.jobs.models import PROMPT_MAX, TITLE_MAX, Job, JobMode, JobState
from navi.jobs.service import JobService

router = api_router(prefix="/jobs", tags=["jobs"])


class StartJob(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(..., min_length=1, max_length=PROMPT_MAX, description="The whole task")
    session_id: str | None = Field(
        None, max_length=64, description="The conversation that asks: the result is posted there"
    )
    title: str | None = Field(None, max_length=TITLE_MAX, description="Default: the prompt's start")
    profile_id: str | None = Field(None, max_length=64, description="Default: the conversation's")
    mode: JobMode = Field(
        "task",
        description="task: a turn of the agent on the prompt; research: the prompt researched — "
        "sub-questions, sources read, a report citing them (docs/jobs.md)",
    )


class JobView(BaseModel):
    id: str
    title: str
    prompt: str
    mode: JobMode
    state: JobState
    session_id: str
    origin_session_id: str | None
    steps: int
    max_steps: int
    max_seconds: int
    progress: float
    last_step: str | None
    plan: list[str] = Field(description="A research job's sub-questions, once planned")
    sources: int = Field(description="The sources a research job has read so far")
    result: str | None
    error: str | None
    attempts: int
    stop_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


def view(job: Job) -> JobView:
    return JobView(**job.model_dump(exclude={"owner"}), progress=job.progress)


def _jobs(runtime: Runtime) -> JobService:
    if runtime.jobs is None:
        raise Unavailable("background jobs are not set up on this Navi")
    return runtime.jobs


@router.post("", status_code=201, response_model=JobView, summary="Start a background job")
async def start_job(body: StartJob, runtime: RuntimeDep, user: CurrentUser) -> JobView:
    job = await _jobs(runtime).start(
        user,
        body.prompt,
        origin_session_id=body.session_id,
        title=body.title,
        profile_id=body.profile_id,
        mode=body.mode,
    )
    return view(job)


@router.get("", response_model=list[JobView], summary="Your background jobs, newest first")
async def list_jobs(runtime: RuntimeDep, user: CurrentUser) -> list[JobView]:
    return [view(job) for job in await _jobs(runtime).store.list(user)]


@router.get("/{job_id}", response_model=JobView, summary="A background job")
async def get_job(job_id: str, runtime: RuntimeDep, user: CurrentUser) -> JobView:
    found = await _jobs(runtime).store.get(job_id[:64], owner=user)
    if found is None:
        raise NotFound(f"no job '{job_id[:64]}'")
    return view(found)


@router.post("/{job_id}/stop", response_model=JobView, summary="Stop a background job")
async def stop_job(job_id: str, runtime: RuntimeDep, user: CurrentUser) -> JobView:
    """A queued job stops at once; a running one within a few seconds, wherever it runs (its
    state says `running` with `stop_requested` until then)."""
    found = await _jobs(runtime).store.request_stop(job_id[:64], user)
    if found is None:
        raise NotFound(f"no job '{job_id[:64]}'")
    return view(found)
