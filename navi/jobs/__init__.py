"""Background jobs (issue 47): a task Navi works on in a session of its own, linked to the
conversation that asked for it, while that conversation stays free. The model, the store
interface (with its atomic claim, so one worker runs a job however many look) and the in-memory
store; the runner is `navi/runs/background.py`. See docs/jobs.md."""

from navi.jobs.models import Job, JobLimit, JobMode, JobState, JobStore
from navi.jobs.store import InMemoryJobStore

__all__ = ["InMemoryJobStore", "Job", "JobLimit", "JobMode", "JobState", "JobStore"]
