"""`background_job`: the model hands a long task to a background job — it runs in a session of its
own while this conversation stays free, and its result is posted back here (and notified) when
it ends. `start` (a `prompt` saying the whole task, a short `title`), `list` the user's jobs,
`stop` one by `id`; `mode` "research" makes it a research (docs/jobs.md). A job cannot start
another job."""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.jobs.models import PROMPT_MAX, TITLE_MAX, JobLimit
from navi.jobs.service import JobError, JobService
from navi.profiles.registry import UnknownProfile
from navi.sessions.models import DEFAULT_OWNER
from navi.tools.base import Tool, ToolResult


class BackgroundJobTool(Tool):
    name = "background_job"
    description = (
        "Run a long task in the background (many pages to read, research, a long comparison): "
        "start with a `prompt` that says the whole task; the result is posted to this conversation "
        "when it is done. list: the user's jobs. stop: `id`."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["start", "list", "stop"]},
            "prompt": {"type": "string", "minLength": 1, "maxLength": PROMPT_MAX},
            "title": {"type": "string", "maxLength": TITLE_MAX},
            "mode": {
                "type": "string",
                "enum": ["task", "research"],
                "description": "research: plan, read and cite sources, and write a report",
            },
            "id": {"type": "string", "minLength": 1, "maxLength": 64},
        },
        "required": ["action"],
        "additionalProperties": False,
    }
    timeout = 20.0

    def __init__(self, jobs: JobService) -> None:
        self.jobs = jobs

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.current()
        owner = ctx.owner if ctx else DEFAULT_OWNER
        action = params["action"]
        if action == "list":
            found = await self.jobs.store.list(owner, limit=20)
            if not found:
                return ToolResult.ok("No background jobs.")
            lines = [f"- {j.id} · {j.state} · {j.title} · {j.steps}/{j.max_steps} steps" for j in found]
            return ToolResult.ok("\n".join(lines))
        if action == "stop":
            job_id = params.get("id")
            if not job_id:
                return ToolResult.fail("`stop` needs the job's `id` (see `list`)")
            stopped = await self.jobs.store.request_stop(job_id, owner)
            if stopped is None:
                return ToolResult.fail(f"no job '{job_id}'")
            return ToolResult.ok(f"Job {stopped.id} ({stopped.title}): {stopped.state}, asked to stop.")
        prompt = params.get("prompt")
        if not prompt:
            return ToolResult.fail("`start` needs a `prompt` saying the whole task")
        origin = ctx.root_session if ctx and ctx.persistent else None
        try:
            job = await self.jobs.start(
                owner,
                prompt,
                origin_session_id=origin,
                title=params.get("title"),
                mode=params.get("mode", "task"),
            )
        except (JobError, UnknownProfile) as exc:
            return ToolResult.fail(str(exc))
        except JobLimit:
            return ToolResult.fail(
                f"the user has {self.jobs.settings.per_user} jobs waiting or running already"
            )
        return ToolResult.ok(
            f"Started background job {job.id} ({job.title}). Its result will be posted here when it is done; "
            "tell the user, and do not wait for it.",
            job_id=job.id,
        )
