"""Everything that runs beside the requests: the run manager, the schedule runner and the
background loops (the upload sweep, memory extraction, the documents' indexer), built from one
runtime for every entry point — `navi serve` (the app's lifespan), `navi mcp` and the tests — and
started and stopped as one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from navi.channels.worker import ChannelWorker
from navi.compose import parts
from navi.compose.channels import build_channels, build_worker
from navi.compose.notifications import build_notifier
from navi.compose.runtime import Runtime, build_runtime
from navi.config import Settings
from navi.documents.folder import FolderSync
from navi.documents.indexer import Indexer
from navi.jobs import Job
from navi.jobs.service import JobService
from navi.logging import get_logger
from navi.push import PushMessage
from navi.push.notifier import Notifier
from navi.runs import RunManager
from navi.runs.background import JobPace, JobRunner
from navi.runs.leases import MemoryLeases, SqlLeases, worker_name
from navi.runs.pg import PgBus
from navi.runs.queue import SqlQueue
from navi.runs.scheduled import ScheduledRuns
from navi.schedules.runner import ScheduleRunner
from navi.sessions import temporary
from navi.sessions.files import cleanup_loop
from navi.sessions.models import DEFAULT_OWNER
from navi.storage.files import SharedFiles
from navi.storage.memory import SqlMemoryStore
from navi.tools.builtin.notify import NotifyTool

log = get_logger(__name__)


@dataclass
class Services:
    """The running parts of one Navi process. `owns_runtime`: `stop()` closes the runtime too."""

    runtime: Runtime
    runs: RunManager
    schedule_runner: ScheduleRunner | None = None
    # Serves the configured channels (email…): its task is one of `loops`.
    channel_worker: ChannelWorker | None = None
    # Background loops, each started as a task by `start()` and cancelled by `stop()`.
    loops: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)
    owns_runtime: bool = False
    # Where workers share the database (PostgreSQL): uploads' bytes kept in it for every machine.
    files: SharedFiles | None = None
    # Indexes queued documents (one per process; its `run` is one of `loops`); None without the
    # documents store, or with DOCUMENTS_INDEXING off (documents then wait for another process).
    indexer: Indexer | None = None
    # Tells users what ended or waits while none of their pages is visible (docs/notifications.md).
    notifier: Notifier | None = None
    # Runs the background jobs this process claims (one of `loops`); None without `background`.
    jobs: JobRunner | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def shared(self) -> bool:
        """Whether this process is one worker among others on a shared database."""
        return self.runs.bus.shared

    async def start(self) -> None:
        await self.runs.open()  # its leases renewed, and those of workers that are gone recovered
        if self.schedule_runner is not None:
            self.schedule_runner.start()
        self._tasks = [asyncio.create_task(loop()) for loop in self.loops]

    async def stop(self) -> None:
        """No new scheduled runs; every run stopped cooperatively (each saves what it has); the
        background loops cancelled; the runtime closed when these services own it."""
        try:
            if self.schedule_runner is not None:
                await self.schedule_runner.stop(grace=0)  # no new scheduled runs from here on
            await self.runs.shutdown()
            if self.schedule_runner is not None:
                await self.schedule_runner.stop()  # the stopped ones record how they ended
            for task in self._tasks:  # background loops, not runs
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        finally:
            if self.owns_runtime:
                await self.runtime.aclose()


def build_services(
    runtime: Runtime,
    *,
    schedules: bool = True,
    background: bool = True,
    owns_runtime: bool = False,
    channels: bool | None = None,
) -> Services:
    """The run manager on `runtime`; with `schedules`, the schedule runner executing due runs
    through it; with `background`, the upload sweep, periodic memory extraction and the documents'
    indexer; with
    `channels` (by default: with `background`), the worker serving the configured channels."""
    settings = runtime.settings
    # The session's lease is a row of the shared database, so no two processes on it (`navi serve`,
    # `navi mcp`, workers) run two turns in one session at once.
    db = runtime.db
    leases = SqlLeases(db, seconds=settings.run_lease_seconds) if db is not None else None
    # On PostgreSQL, frames and control messages reach every worker (rows and NOTIFY).
    metrics = runtime.telemetry.metrics
    bus = (
        PgBus(
            db,
            leases.worker,
            keep_seconds=settings.run_events_keep_seconds,
            lag=metrics.notify_lag.observe,
        )
        if db is not None and leases is not None and db.dialect == "postgresql"
        else None
    )
    runs = RunManager(
        runtime.agent,
        leases or MemoryLeases(seconds=settings.run_lease_seconds),
        bus,
        telemetry=runtime.telemetry,
        # Messages sent while a turn runs wait in the database: every worker sees the same queue.
        queue=SqlQueue(db) if db is not None else None,
        keep_seconds=settings.run_events_keep_seconds,
        elicitations=runtime.mcp.elicitations,  # answered through any worker
    )
    services = Services(runtime=runtime, runs=runs, owns_runtime=owns_runtime)
    configured = build_channels(settings) if (background if channels is None else channels) else []
    if configured:
        worker = build_worker(
            settings,
            configured,
            store=runtime.channels,
            runs=runs,
            sessions=runtime.sessions,
            profiles=runtime.profiles,
            voice=runtime.voice,
        )
        services.channel_worker = worker
        services.loops.append(worker.run)
    services.notifier = build_notifier(
        runtime.sessions,
        runtime.push,
        runtime.presence,
        runtime.notify_settings,
        runtime.channels,
        runtime.schedule_settings.zone_name,
        services.channel_worker,
    )
    runs.observers.append(services.notifier.turn_frame)
    notify = runtime.tools.get("notify")
    if isinstance(notify, NotifyTool):
        notify.notifier = services.notifier
    if background and runtime.jobs is not None:
        name = leases.worker if leases is not None else worker_name()
        lease = settings.run_lease_seconds  # a job's lease runs out as a turn's does
        services.jobs = job_runner(runtime.jobs, runs, services.notifier, name, lease)
        services.loops.append(services.jobs.run)
    if bus is not None and db is not None:
        services.files = SharedFiles(db, max_bytes=settings.session_files_max_bytes)
    if schedules:
        config = runtime.schedule_settings
        execute = ScheduledRuns(
            runtime.schedules.store,
            runtime.sessions,
            runtime.profiles,
            runs,
            busy_wait=config.busy_wait_seconds,
            notifier=config.notifier,
            deliver=None if services.channel_worker is None else services.channel_worker.deliver,
        )
        runner = ScheduleRunner(runtime.schedules.store, execute, poll_seconds=config.poll_seconds)
        runtime.schedules.on_change(runner.wake)
        services.schedule_runner = runner
    if background:
        files, ttl = Path(settings.session_files_dir), settings.session_files_ttl_hours
        interval = settings.memory_extract_interval_minutes
        services.loops += [
            lambda: cleanup_loop(files, ttl),
            lambda: runtime.extractor.periodic(interval),
            lambda: temporary.sweep_loop(runtime.sessions),  # temporary chats no page deleted
        ]
        memory = runtime.memory
        if isinstance(memory, SqlMemoryStore) and memory.embed is not None:

            async def backfill() -> None:  # facts stored before the model was set, or by another
                await memory.backfill_embeddings()

            services.loops.append(backfill)
        if services.files is not None:
            shared = services.files
            services.loops.append(lambda: shared.expire_loop(ttl))
        documents = runtime.documents
        if documents is not None and runtime.document_settings.indexing:
            indexer = Indexer(
                documents,
                runtime.embedder,
                runtime.document_settings.limits,
                leases.worker if leases is not None else worker_name(),
            )
            services.indexer = indexer
            services.loops.append(indexer.run)
        services.loops += folder_loops(runtime, poke=services.indexer.poke if services.indexer else None)
    return services


def job_runner(
    service: JobService, runs: RunManager, notifier: Notifier, worker: str, lease: float
) -> JobRunner:
    """The runner of background jobs, poked when one is started, notifying through `notifier`;
    its lease on a job is renewed every third of `lease` seconds."""

    async def notify(job: Job, line: str, posted: str | None) -> None:
        where = job.origin_session_id or job.session_id
        await notifier.notify(
            job.owner,
            PushMessage(kind="job", title=job.title, body=line, session_id=where, message_id=posted),
        )

    beat = max(0.2, lease / 3)
    pace = JobPace(lease_seconds=lease, heartbeat=beat)
    runner = JobRunner(service.store, runs, worker, notify=notify, pace=pace)
    service.on_created.append(runner.poke)
    return runner


def folder_loops(
    runtime: Runtime, poke: Callable[[], None] | None = None
) -> list[Callable[[], Coroutine[Any, Any, None]]]:
    """A loop keeping each KNOWLEDGE_DIRS folder in sync with the owner's documents (`poke`: the
    indexer's, woken when files were queued; without it the indexer finds them when it polls)."""
    documents = runtime.documents
    dirs = parts.knowledge_dirs(runtime.settings)
    if documents is None:
        if dirs:
            log.warning("knowledge_dirs_need_database", dirs=[str(d) for d in dirs])
        return []
    return [FolderSync(documents, DEFAULT_OWNER, path, poke).run for path in dirs]


ServicesFactory = Callable[[], Awaitable[Services]]


def services_factory(
    settings: Settings,
    *,
    runtime: Runtime | None = None,
    runtime_factory: Callable[[Settings], Awaitable[Runtime]] | None = None,
    schedules: bool = True,
    background: bool = True,
) -> ServicesFactory:
    """How a server's lifespan gets its services: on `runtime` when one is handed in (it stays its
    caller's to close), else on a runtime built then, inside the server's event loop, by
    `runtime_factory` (default `build_runtime`), which the services then own."""

    async def build() -> Services:
        if runtime is not None:
            return build_services(runtime, schedules=schedules, background=background)
        built = await (runtime_factory or build_runtime)(settings)
        return build_services(built, schedules=schedules, background=background, owns_runtime=True)

    return build
