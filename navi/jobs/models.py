"""A background job and the store interface.

A job is `queued` until a worker claims it, `running` while a worker holds its lease (renewed as
it runs: `lease_until`, seconds since the epoch on the database's clock), and ends `done` (its
answer is `result`), `failed` (`error` says why: a model error, its step or time budget, a worker
that died twice under it) or `stopped` (by the user). A running job whose lease ran out (its
worker died) is claimable again: the next worker resumes it in its session (`attempts` counts
the claims)."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

JobState = Literal["queued", "running", "done", "failed", "stopped"]
# How a job works: `task` — a turn of the agent loop on its prompt; `research` — the research loop
# (navi/agent/research/): sub-questions planned, sources read with notes, a report citing them.
JobMode = Literal["task", "research"]
ACTIVE: tuple[JobState, ...] = ("queued", "running")
PROMPT_MAX = 20_000
TITLE_MAX = 120


class JobLimit(Exception):
    """A user has as many jobs waiting or running as they may."""


def new_job_id() -> str:
    return uuid.uuid4().hex


class Job(BaseModel):
    id: str
    owner: str
    title: str
    prompt: str
    mode: JobMode = "task"
    session_id: str = Field(description="The job's own session: its steps and answer")
    origin_session_id: str | None = Field(
        None, description="The conversation that asked: the result is posted there"
    )
    state: JobState = "queued"
    steps: int = 0
    max_steps: int = 40
    max_seconds: int = 1800
    last_step: str | None = Field(default=None, description="What the latest step did (a tool's name)")
    plan: list[str] = Field(default_factory=list, description="A research job's sub-questions, once planned")
    sources: int = Field(default=0, description="The sources a research job has read so far")
    result: str | None = None
    error: str | None = None
    attempts: int = 0
    stop_requested: bool = False
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def progress(self) -> float:
        if self.state in ("done", "failed", "stopped"):
            return 1.0
        return min(0.99, self.steps / max(1, self.max_steps))


class JobStore(ABC):
    @abstractmethod
    async def create(self, job: Job, *, limit: int) -> Job:
        """The job stored, or `JobLimit` when its owner has `limit` jobs queued or running."""

    @abstractmethod
    async def get(self, job_id: str, *, owner: str | None = None) -> Job | None: ...

    @abstractmethod
    async def list(self, owner: str, *, limit: int = 50) -> list[Job]:
        """The owner's jobs, newest first."""

    @abstractmethod
    async def by_session(self, session_id: str) -> Job | None:
        """The job whose own session this is."""

    @abstractmethod
    async def claim(self, worker: str, lease_seconds: float) -> Job | None:
        """A queued job, or a running one whose lease ran out, now this worker's (`attempts` + 1)."""

    @abstractmethod
    async def heartbeat(
        self, job_id: str, worker: str, lease_seconds: float, changes: dict[str, Any]
    ) -> Job | None:
        """The lease renewed and `changes` (steps, last_step) written while the job is this
        worker's; the job as it is now (its `stop_requested`), or None when it is not this
        worker's any more."""

    @abstractmethod
    async def finish(
        self,
        job_id: str,
        worker: str,
        state: JobState,
        *,
        result: str | None = None,
        error: str | None = None,
    ) -> bool: ...

    @abstractmethod
    async def request_stop(self, job_id: str, owner: str) -> Job | None:
        """Asks the job to stop: a queued one stops at once, a running one at its worker's next
        heartbeat. None when the owner has no such job."""
