"""Jobs kept in this process (tests, and Navi without a database)."""

from __future__ import annotations

import time
from typing import Any

from navi.jobs.models import ACTIVE, Job, JobLimit, JobState, JobStore
from navi.llm.messages import utcnow


class InMemoryJobStore(JobStore):
    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._leases: dict[str, tuple[str, float]] = {}

    async def create(self, job: Job, *, limit: int) -> Job:
        if sum(1 for j in self._jobs.values() if j.owner == job.owner and j.state in ACTIVE) >= limit:
            raise JobLimit(
                f"you have {limit} background jobs waiting or running: wait for one to end, or stop one"
            )
        self._jobs[job.id] = job
        return job

    async def get(self, job_id: str, *, owner: str | None = None) -> Job | None:
        found = self._jobs.get(job_id)
        return found if found is not None and owner in (None, found.owner) else None

    async def list(self, owner: str, *, limit: int = 50) -> list[Job]:
        mine = [j for j in self._jobs.values() if j.owner == owner]
        return sorted(mine, key=lambda j: j.created_at, reverse=True)[:limit]

    async def by_session(self, session_id: str) -> Job | None:
        return next((j for j in self._jobs.values() if j.session_id == session_id), None)

    async def claim(self, worker: str, lease_seconds: float) -> Job | None:
        now = time.time()
        for job in sorted(self._jobs.values(), key=lambda j: j.created_at):
            lease = self._leases.get(job.id)
            if job.state == "queued" or (job.state == "running" and (lease is None or lease[1] < now)):
                job.state, job.attempts = "running", job.attempts + 1
                job.started_at = job.started_at or utcnow()
                self._leases[job.id] = (worker, now + lease_seconds)
                return job.model_copy()
        return None

    async def heartbeat(
        self, job_id: str, worker: str, lease_seconds: float, changes: dict[str, Any]
    ) -> Job | None:
        job, lease = self._jobs.get(job_id), self._leases.get(job_id)
        if job is None or job.state != "running" or lease is None or lease[0] != worker:
            return None
        for name, value in changes.items():
            setattr(job, name, value)
        self._leases[job_id] = (worker, time.time() + lease_seconds)
        return job.model_copy()

    async def finish(
        self,
        job_id: str,
        worker: str,
        state: JobState,
        *,
        result: str | None = None,
        error: str | None = None,
    ) -> bool:
        job, lease = self._jobs.get(job_id), self._leases.get(job_id)
        if job is None or job.state != "running" or lease is None or lease[0] != worker:
            return False
        job.state, job.result, job.error, job.finished_at = state, result, error, utcnow()
        self._leases.pop(job_id, None)
        return True

    async def request_stop(self, job_id: str, owner: str) -> Job | None:
        job = await self.get(job_id, owner=owner)
        if job is None:
            return None
        if job.state == "queued":
            job.state, job.finished_at, job.error = "stopped", utcnow(), "stopped before it started"
        elif job.state == "running":
            job.stop_requested = True
        return job.model_copy()
