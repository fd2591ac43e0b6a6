"""Background jobs run: each claimed by one worker, driven as a normal run in the job's own session,
its steps counted, its budgets kept, its result posted back into the conversation that asked.

`JobRunner.run()` is a loop of the services (one per process): it claims jobs (`JobStore.claim`,
atomic across workers) up to `concurrency` at a time. For each it starts a run in the job's session
through the same `RunManager.start` a page uses (`purpose="job"`: the notifier pushes its
approvals at once and its end as a job) — a `Research` turn for a job in `research` mode — and
follows its frames:

- every `tool_call` is a step (`steps`, `last_step`); a research job's `status` frames say what
  it does between steps (`last_step`: "notes on [2] …") and how many sources it read (`sources`),
  its `plan_ready` its sub-questions (`plan`); past `max_steps`, or `max_seconds` after it
  started, the run is stopped and the job fails saying which budget it used up;
- every `heartbeat` seconds the lease is renewed with the steps so far; a job whose lease another
  worker took (this one was thought dead) is let go; a stop the user asked for (any worker,
  through the row) stops the run;
- its answer (`stream_end`) makes it `done`, an error `failed`, a stop `stopped`.

The result (or the reason it failed) is then posted into the origin conversation as an assistant
message, the owner is notified (kind `job`), and every connection of the owner gets a `job` frame.

A worker that dies leaves its job `running` with a lease that runs out: the next claim (any
worker) resumes it in its session — the model reads what it did so far and is asked to carry on
— up to `MAX_ATTEMPTS` claims, after which it is marked failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from navi.agent.turns import Research, Turn, TurnOptions
from navi.jobs.models import Job, JobState, JobStore
from navi.llm.messages import Message
from navi.llm.meta import FileRef
from navi.protocol import (
    ErrorEvent,
    JobChanged,
    PlanReady,
    Status,
    StreamEnd,
    StreamStopped,
    ToolEvent,
)
from navi.runs.manager import RunManager
from navi.runs.run import AgentRun, RunActive, Subscriber

log = structlog.stdlib.get_logger(__name__)
MAX_ATTEMPTS = 3
RESUME = (
    "(Navi was restarted while you worked on this background job. What you did so far is above. "
    "Carry on from there and finish it.)\n\nThe job: {prompt}"
)
# (the ended job, a line about it, the id of the message posted back or None) → the owner notified
# (navi/push/notifier.py, from the services): the notification opens that message
Notify = Callable[[Job, str, str | None], Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class JobPace:
    """How the runner paces its jobs: how long a claim lasts unrenewed (`lease_seconds`), how often
    it looks for jobs other workers started (`poll_seconds`), how often a running job's lease is
    renewed with its steps (`heartbeat`), and how many jobs it runs at once (`concurrency`)."""

    lease_seconds: float = 30.0
    poll_seconds: float = 2.0
    heartbeat: float = 2.0
    concurrency: int = 2


class JobRunner:
    def __init__(
        self,
        store: JobStore,
        runs: RunManager,
        worker: str,
        *,
        notify: Notify | None = None,
        pace: JobPace = JobPace(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.runs = runs
        self.worker = worker
        self.notify = notify
        self.lease_seconds = pace.lease_seconds
        self.poll_seconds = pace.poll_seconds
        self.heartbeat = pace.heartbeat
        self.concurrency = pace.concurrency
        self.clock = clock
        self._wake = asyncio.Event()
        self._running: dict[str, asyncio.Task[None]] = {}

    def poke(self) -> None:
        """A job was created: look now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        try:
            while True:
                while len(self._running) < self.concurrency:
                    try:
                        job = await self.store.claim(self.worker, self.lease_seconds)
                    except Exception:
                        log.exception("jobs.claim_failed")
                        job = None
                    if job is None:
                        break
                    task = asyncio.create_task(self._guarded(job))
                    self._running[job.id] = task
                    task.add_done_callback(self._forget(job.id))
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll_seconds)
        finally:
            for task in list(self._running.values()):
                task.cancel()  # the runs themselves end with the run manager's shutdown
            for task in list(self._running.values()):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _forget(self, job_id: str) -> Callable[[asyncio.Task[None]], None]:
        def forget(_task: asyncio.Task[None]) -> None:
            self._running.pop(job_id, None)

        return forget

    async def _guarded(self, job: Job) -> None:
        try:
            await self._work(job)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("jobs.crashed", job_id=job.id)
            await self._end(job, "failed", error=f"internal error: {type(exc).__name__}: {exc}")

    async def _work(self, job: Job) -> None:
        if job.attempts > MAX_ATTEMPTS:
            await self._end(job, "failed", error=f"the worker running it stopped {job.attempts - 1} times")
            return
        turn: Turn | str = job.prompt if job.attempts == 1 else RESUME.format(prompt=job.prompt)
        if job.mode == "research":  # researched again from its question after a lost worker
            turn = Research(job.prompt)
        log.info("jobs.started", job_id=job.id, attempt=job.attempts, worker=self.worker, mode=job.mode)
        self._announce(job)
        run = await self._start(job, turn)
        if run is None:
            await self._end(job, "failed", error="its session stayed busy")
            return
        state, result, error = await self._follow(job, run)
        if state is None:
            return  # another worker has it now
        await self._end(job, state, result=result, error=error)

    async def _start(self, job: Job, turn: Turn | str) -> AgentRun | None:
        deadline = self.clock() + 60
        while True:
            try:
                return await self.runs.start(job.session_id, turn, TurnOptions(purpose="job"))
            except RunActive:  # a dead worker's turn still being recorded as lost
                if self.clock() > deadline:
                    return None
                await asyncio.sleep(1.0)

    async def _follow(self, job: Job, run: AgentRun) -> tuple[JobState | None, str | None, str | None]:
        sub = await self.runs.followers.follow(run.session_id, run_id=run.run_id, typed=True)
        if sub is None:  # ended and let go of already
            return "failed", None, "the run could not be followed"
        started = self.clock()
        progress: dict[str, Any] = {"steps": job.steps, "last_step": job.last_step}
        if job.mode == "research":
            progress |= {"plan": job.plan, "sources": job.sources}
        reported = dict(progress)
        why_stopped: str | None = None
        beat = self.clock()
        try:
            while True:
                try:
                    event = await asyncio.wait_for(sub.queue.get(), self.heartbeat)
                except TimeoutError:
                    event = None
                match event:
                    case Subscriber():  # the end of the run's events
                        return ("failed", None, why_stopped) if why_stopped else ("stopped", None, "stopped")
                    case ToolEvent(tool=tool):
                        progress["steps"] += 1
                        progress["last_step"] = tool[:200]
                    case Status(phase="researching", detail=detail, sources=sources):  # not a step
                        progress["last_step"] = detail[:200] or progress["last_step"]
                        if sources is not None and job.mode == "research":
                            progress["sources"] = sources
                    case PlanReady(plan=plan) if job.mode == "research":
                        progress["plan"] = plan_lines(plan)
                    case StreamEnd(content=content):
                        return "done", content, None
                    case ErrorEvent(message=message) if run.result is event:
                        return "failed", None, message or "the run failed"
                    case StreamStopped():
                        if why_stopped:
                            return "failed", None, why_stopped
                        return "stopped", None, "stopped by you"
                if why_stopped is None and progress["steps"] > job.max_steps:
                    why_stopped = f"its step budget ({job.max_steps} steps) is used up"
                    run.stop_event.set()
                elif why_stopped is None and self.clock() - started > job.max_seconds:
                    why_stopped = f"its time budget ({job.max_seconds} s) is used up"
                    run.stop_event.set()
                if self.clock() - beat >= self.heartbeat or progress != reported:
                    beat = self.clock()
                    now = await self.store.heartbeat(job.id, self.worker, self.lease_seconds, dict(progress))
                    if now is None:  # taken over: this worker was thought gone
                        log.warning("jobs.lease_lost", job_id=job.id)
                        run.stop_event.set()
                        return None, None, None
                    if progress != reported:
                        reported = dict(progress)
                        self._announce(now)
                    if now.stop_requested and not run.stop_event.is_set():
                        run.stop_event.set()
        finally:
            sub.close()

    async def _end(
        self, job: Job, state: JobState, *, result: str | None = None, error: str | None = None
    ) -> None:
        if not await self.store.finish(job.id, self.worker, state, result=result, error=error):
            return  # not this worker's any more
        ended = job.model_copy(update={"state": state, "result": result, "error": error})
        log.info("jobs.ended", job_id=job.id, state=state, error=error)
        posted = await self._post_back(ended)
        self._announce(ended)
        if self.notify is not None:
            with contextlib.suppress(Exception):
                await self.notify(ended, summary(ended), posted)

    async def _post_back(self, job: Job) -> str | None:
        """The result into the conversation that asked (waiting for a turn there to end); the
        posted message's id."""
        if job.origin_session_id is None:
            return None
        message = Message.assistant(summary(job, full=True))
        message.metadata["job_id"] = job.id
        if job.state == "done" and (files := await self._files(job)):
            message.metadata.files = files  # the report's files, named here too
            message.metadata["files_session_id"] = job.session_id  # whose folder holds them
        for _ in range(60):
            try:
                await self.runs.append(job.origin_session_id, [message])
                return message.id
            except RunActive:
                await self.runs.controls.wait(job.origin_session_id, 5.0)
            except Exception as exc:  # the conversation was deleted since
                log.warning("jobs.not_posted", job_id=job.id, error=f"{type(exc).__name__}: {exc}")
                return None
        log.warning("jobs.not_posted", job_id=job.id, error="the conversation stayed busy")
        return None

    async def _files(self, job: Job) -> list[FileRef]:
        """The files the job's answer named (a research report's Markdown file)."""
        try:
            session = await self.runs.agent.sessions.get(job.session_id)
        except Exception:
            return []
        answers = [m for m in (session.messages if session else []) if m.role == "assistant"]
        return list(answers[-1].metadata.files or []) if answers else []

    def _announce(self, job: Job) -> None:
        frame = JobChanged(
            job_id=job.id,
            title=job.title,
            state=job.state,
            session_id=job.session_id,
            origin_session_id=job.origin_session_id,
            steps=job.steps,
            max_steps=job.max_steps,
            last_step=job.last_step,
            error=job.error,
            mode=job.mode,
            plan=job.plan,
            sources=job.sources,
        )
        self.runs.feed.publish(frame.frame(), job.owner)


def plan_lines(plan: str) -> list[str]:
    """A plan's text ("1. …" a line) as its sub-questions."""
    found = (
        line.strip().split(". ", 1)[-1] if line.strip()[:1].isdigit() else line.strip()
        for line in plan.splitlines()
    )
    return [q[:200] for q in found if q][:20]


def summary(job: Job, *, full: bool = False) -> str:
    if job.state == "done":
        text = job.result or "(no answer text)"
        return f"Background job “{job.title}” is done:\n\n{text}" if full else text
    if job.state == "stopped":
        return f"Background job “{job.title}” was stopped." if full else "Stopped."
    return f"Background job “{job.title}” failed: {job.error}" if full else f"Failed: {job.error}"
