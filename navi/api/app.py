"""The app factory. The lifespan builds the runtime once (`app.state.runtime`), the run manager
(`app.state.runs`), the schedule runner (`app.state.schedule_runner`) and the background upload
clean-up, and tears them down in order."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware

from navi import __version__, web
from navi.api import errors
from navi.api.deps import require_owner
from navi.api.identity import user_of
from navi.api.limits import InputLimits, RequestLimits
from navi.api.loopmon import LoopMonitor
from navi.api.mcp_server import NaviHost, mount_http
from navi.api.middleware import RequestContext
from navi.api.routes import (
    agents,
    approvals,
    auth,
    files,
    health,
    memory,
    messages,
    models,
    openai,
    schedules,
    sessions,
)
from navi.api.runs import RunManager
from navi.api.scheduled import ScheduledRuns
from navi.api.security import AccessControl, AccessPolicy
from navi.api.uploads import cleanup_loop
from navi.api.websocket import router as websocket_router
from navi.compose import Runtime, SetupError, build_runtime
from navi.compose.token import access_token
from navi.config import Settings, load_settings
from navi.logging import get_logger

log = get_logger(__name__)


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    runtime_factory: Callable[[Settings], Awaitable[Runtime]] | None = None,
    tune_gc: bool = False,
) -> FastAPI:
    """The Navi app. Pass `runtime` to share one you built, or `runtime_factory` to have the
    lifespan build it (inside the server's event loop) some other way than `build_runtime`.

    `tune_gc` (set by `navi serve`) freezes everything allocated at start-up out of the garbage
    collector's reach and makes young-generation collections rarer: full collections had to walk
    every library object and paused the event loop for up to 200 ms under load.
    """
    settings = settings or (runtime.settings if runtime else load_settings())
    policy = AccessPolicy(
        token=access_token(settings).value,  # the one set, else Navi's own (made on first start)
        bind_host=settings.navi_host,
        allowed_hosts=settings.allowed_hosts_list,
        allowed_origins=settings.allowed_origins_list,
        trusted_proxies=settings.trusted_proxies_list,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = runtime is None
        try:
            rt = runtime or await (runtime_factory or build_runtime)(settings)
        except SetupError as exc:
            # `navi serve` prints this as its one line instead of the server's traceback.
            app.state.startup_problem = exc
            raise
        if rt.db is not None:  # browser sign-ins survive restarts, and /logout revokes them for good
            try:
                await policy.sign_ins.attach(rt.db)
            except BaseException:
                if owned:
                    await rt.aclose()
                raise
        policy.attach_users(rt.users)  # tokens of `navi users add`, looked up on every request
        runs = RunManager(rt.agent)
        app.state.runtime = rt
        app.state.runs = runs
        # Due schedules run through the same run manager as a sent message; the runner starts
        # with the app and stops with it.
        schedule_runner = ScheduledRuns(rt, runs).runner()
        app.state.schedule_runner = schedule_runner
        schedule_runner.start()
        sweeper = asyncio.create_task(
            cleanup_loop(Path(settings.session_files_dir), settings.session_files_ttl_hours)
        )
        extraction = asyncio.create_task(rt.extractor.periodic(settings.memory_extract_interval_minutes))
        monitor = LoopMonitor()
        app.state.loop_monitor = monitor
        watcher = None
        if settings.navi_loop_monitor:
            monitor.install()
            watcher = asyncio.create_task(monitor.run())
        if tune_gc:
            gc.collect()
            gc.freeze()
            gc.set_threshold(10_000, 20, 20)
        app.state.mcp_host = NaviHost(
            runtime=rt,
            runs=runs,
            approvals=settings.navi_mcp_approvals,
            max_message_bytes=settings.navi_max_request_bytes,
        )
        log.info(
            "navi.started",
            host=settings.navi_host,
            port=settings.navi_port,
            backend=settings.default_llm_backend,
        )
        try:
            async with mcp_sessions.run():  # /mcp: the SDK's session manager lives with the app
                yield
        finally:
            await schedule_runner.stop(grace=0)  # no new scheduled runs from here on
            await runs.shutdown()
            await schedule_runner.stop()  # the stopped ones record how they ended
            for task in (sweeper, extraction, watcher):  # background loops, not runs
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            policy.sign_ins.detach()
            policy.attach_users(None)
            if owned:
                await rt.aclose()
            log.info("navi.stopped")

    # /docs and /redoc are Navi's own pages (navi/web): vendored Swagger UI and ReDoc under the
    # pages' policy, instead of FastAPI's, which load from a CDN with an inline script.
    app = FastAPI(title="Navi", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.access = policy
    app.state.started_at = time.time()
    # Runs of the OpenAI-compatible API have nobody to ask: calls that need approval are denied
    # at once, or allowed when NAVI_OPENAI_API_APPROVALS says so.
    app.state.openai_approvals = settings.navi_openai_api_approvals

    errors.install(app)  # domain errors → HTTP status codes, in one place

    if settings.allowed_origins_list:  # explicit origins only; never a wildcard
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.allowed_origins_list,
            allow_credentials=True,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-Session-Id"],
            expose_headers=["X-Session-Id"],  # the OpenAI-compatible API names the session in it
        )
    limits = RequestLimits(
        json_bytes=settings.navi_max_request_bytes,
        import_bytes=settings.navi_import_max_bytes,
        login_seconds=settings.navi_header_timeout_seconds,
    )
    app.add_middleware(InputLimits, limits=limits)  # inside access control: no token, no body read
    app.add_middleware(AccessControl, policy=policy)
    app.add_middleware(RequestContext)
    for module in (
        health,
        auth,
        agents,
        sessions,
        messages,
        approvals,
        files,
        memory,
        models,
        openai,
        schedules,
    ):
        app.include_router(module.router)
    if settings.navi_loop_monitor:

        @app.get("/debug/loop", include_in_schema=False)
        async def loop_stats(request: Request, reset: bool = False) -> dict[str, object]:
            monitor: LoopMonitor = request.app.state.loop_monitor
            if reset:  # the counters are the whole server's: only the owner starts them over
                require_owner(user_of(request.scope))
            stats = monitor.snapshot()
            if reset:
                monitor.reset()
            return stats

    # Navi's MCP server as streamable HTTP, behind the same access control as every route; each
    # call acts as its request's user.
    mcp_sessions = mount_http(app, lambda: app.state.mcp_host, settings.navi_max_request_bytes)
    app.include_router(websocket_router)
    app.include_router(web.router)
    app.mount("/static", web.static_files(), name="static")
    return app
