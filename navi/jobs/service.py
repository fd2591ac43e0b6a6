"""Starting a background job, the same for every surface (`POST /jobs`, the page's button,
`/background` in `navi chat`, the `background_job` tool): the prompt checked, the conversation
that asks checked to be the user's, a session of the job's own made (named after the job, in the
conversation's profile), the job stored within the user's limit, the runner poked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from navi.jobs.models import PROMPT_MAX, TITLE_MAX, Job, JobMode, JobStore, new_job_id
from navi.llm.messages import utcnow
from navi.profiles.registry import ProfileRegistry, UnknownProfile
from navi.sessions.store import SessionStore


class JobError(ValueError):
    """A job that cannot start as asked; the sentence says why."""


@dataclass(frozen=True)
class JobSettings:
    per_user: int = 3  # jobs queued or running at once, per user
    max_steps: int = 40  # tool calls a job may make
    max_seconds: int = 1800  # how long a job may run


class JobService:
    def __init__(
        self,
        store: JobStore,
        sessions: SessionStore,
        profiles: ProfileRegistry,
        settings: JobSettings | None = None,
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.profiles = profiles
        self.settings = settings or JobSettings()
        self.on_created: list[Callable[[], None]] = []  # the runner's poke

    async def start(
        self,
        owner: str,
        prompt: str,
        *,
        origin_session_id: str | None = None,
        title: str | None = None,
        profile_id: str | None = None,
        mode: JobMode = "task",
    ) -> Job:
        """The job, queued; `JobError`, `UnknownProfile` or `JobLimit` when it cannot be. `mode`
        "research" answers the prompt with the research loop (a report citing what it read)."""
        prompt = prompt.strip()
        if not prompt:
            raise JobError("say what the job should do (the prompt is empty)")
        if len(prompt) > PROMPT_MAX:
            raise JobError(f"the prompt is longer than {PROMPT_MAX} characters")
        if origin_session_id is not None:
            origin = await self.sessions.get(origin_session_id, owner=owner, display=False)
            if origin is None:
                raise JobError(f"no session '{origin_session_id[:64]}'")
            if await self.store.by_session(origin_session_id) is not None:
                raise JobError("a background job cannot start another one")
            profile_id = profile_id or origin.profile_id
        profile_id = profile_id or self.profiles.default_id
        if profile_id not in self.profiles:
            raise UnknownProfile(profile_id, self.profiles.ids())
        name = (title or "").strip() or _title(prompt)
        kind = "Research" if mode == "research" else "Job"
        session = await self.sessions.create(profile_id, owner=owner, name=f"{kind}: {name}"[:200])
        job = Job(
            id=new_job_id(),
            owner=owner,
            title=name[:TITLE_MAX],
            prompt=prompt,
            mode=mode,
            session_id=session.id,
            origin_session_id=origin_session_id,
            max_steps=self.settings.max_steps,
            max_seconds=self.settings.max_seconds,
            created_at=utcnow(),
        )
        try:
            await self.store.create(job, limit=self.settings.per_user)
        except BaseException:
            await self.sessions.delete(session.id, owner=owner)
            raise
        for poke in self.on_created:
            poke()
        return job


def _title(prompt: str) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= 60 else line[:59].rstrip() + "…"
