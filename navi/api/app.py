"""The app factory: routes and middleware on the parts the composition root built.

`mount(config, services)` serves a `ServerConfig` (plain values: access, limits, uploads) and the
services (`navi/compose/services.py`: runtime, run manager, schedule runner, background loops),
which its lifespan builds, starts and stops; `create_app(settings)` asks the composition root for
both. Routes read typed parts (`navi/api/deps.py`), never settings."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from starlette.routing import Route

from navi import __version__, web
from navi.api import errors
from navi.api.browser_viewer import router as viewer_router
from navi.api.deps import require_owner
from navi.api.identity import user_of
from navi.api.limits import AUDIO_FORM_SLACK, InputLimits, RequestLimits
from navi.api.loopmon import LoopMonitor
from navi.api.mcp_http import MCP_PATH, McpRoute
from navi.api.middleware import RequestContext
from navi.api.routes import (
    agents,
    analysis,
    approvals,
    audio,
    auth,
    branches,
    documents,
    files,
    health,
    jobs,
    memory,
    messages,
    metrics,
    models,
    openai,
    push,
    queue,
    schedules,
    search,
    sessions,
    skills,
    usage,
)
from navi.api.routes import browser as browser_routes
from navi.api.security import AccessControl, AccessPolicy
from navi.api.sockets import OpenSockets
from navi.api.websocket import router as websocket_router
from navi.compose import Runtime, SetupError
from navi.compose.server import ServerConfig, server_config
from navi.compose.services import ServicesFactory, services_factory
from navi.config import Settings, load_settings
from navi.logging import get_logger
from navi.storage.throttle import SqlFailures

log = get_logger(__name__)


def mount_routes(app: FastAPI, router: APIRouter) -> None:
    """A module's routes, added to the app as they are. The routers carry no prefix, dependencies
    or overrides, so FastAPI's `include_router` would only rebuild each route for this app on its
    first request (its lazy include: ~0.1 s of CPU per app here — every Navi a test starts)."""
    app.router.routes.extend(router.routes)


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    runtime_factory: Callable[[Settings], Awaitable[Runtime]] | None = None,
    tune_gc: bool = False,
) -> FastAPI:
    """The Navi app on `settings`: the composition root turns them into the server's parts
    (`server_config`) and its services (`services_factory`), and `mount` serves those. Pass
    `runtime` to share one you built, or `runtime_factory` to have the lifespan build it (inside
    the server's event loop) some other way than `build_runtime`."""
    settings = settings or (runtime.settings if runtime else load_settings())
    factory = services_factory(settings, runtime=runtime, runtime_factory=runtime_factory)
    return mount(server_config(settings), factory, tune_gc=tune_gc)


def mount(config: ServerConfig, services: ServicesFactory, *, tune_gc: bool = False) -> FastAPI:
    """The app: routes, middleware and a lifespan that builds `services`, starts them, and stops
    them at the end.

    `tune_gc` (set by `navi serve`) freezes everything allocated at start-up out of the garbage
    collector's reach and makes young-generation collections rarer: full collections had to walk
    every library object and paused the event loop for up to 200 ms under load.
    """
    policy = AccessPolicy(
        token=config.token,
        bind_host=config.host,
        allowed_hosts=config.allowed_hosts,
        allowed_origins=config.allowed_origins,
        trusted_proxies=config.trusted_proxies,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            running = await services()
        except SetupError as exc:
            # `navi serve` prints this as its one line instead of the server's traceback.
            app.state.startup_problem = exc
            raise
        rt = running.runtime
        if rt.db is not None:  # browser sign-ins survive restarts, and /logout revokes them for good
            try:
                await policy.sign_ins.attach(rt.db, shared=running.shared)
            except BaseException:
                await running.stop()
                raise
            if running.shared:  # workers on one database: guesses add up across all of them
                policy.attach_failures(SqlFailures(rt.db))
        policy.attach_users(rt.users)  # tokens of `navi users add`, looked up on every request
        app.state.services = running
        app.state.runtime = rt
        app.state.runs = running.runs
        app.state.schedule_runner = running.schedule_runner
        await running.start()
        running.runs.feed.on_revoked(sockets.revoked)  # a sign-out or a removed user, on any worker
        sockets.start()
        monitor = LoopMonitor()
        app.state.loop_monitor = monitor
        watcher = None
        if config.loop_monitor:
            monitor.install()
            watcher = asyncio.create_task(monitor.run())
        if tune_gc:
            gc.collect()
            gc.freeze()
            gc.set_threshold(10_000, 20, 20)
        log.info("navi.started", host=config.host, port=config.port, backend=config.backend)
        try:
            yield
        finally:
            await mcp_route.aclose()  # /mcp's server, if a request built it
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            await sockets.stop()
            policy.sign_ins.detach()
            policy.attach_failures(None)
            policy.attach_users(None)
            await running.stop()
            log.info("navi.stopped")

    # /docs and /redoc are Navi's own pages (navi/web): vendored Swagger UI and ReDoc under the
    # pages' policy, instead of FastAPI's, which load from a CDN with an inline script.
    app = FastAPI(title="Navi", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.access = policy
    sockets = OpenSockets(config.socket_recheck_seconds)  # open WebSockets, closed when signed out
    app.state.sockets = sockets
    app.state.config = config  # the typed parts routes read (uploads, limits, approvals)
    app.state.started_at = time.time()

    errors.install(app)  # domain errors → HTTP status codes, in one place

    if config.allowed_origins:  # explicit origins only; never a wildcard
        app.add_middleware(
            CORSMiddleware,
            allow_origins=config.allowed_origins,
            allow_credentials=True,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],  # PUT: attaching a collection
            allow_headers=["Authorization", "Content-Type", "X-Session-Id"],
            expose_headers=["X-Session-Id"],  # the OpenAI-compatible API names the session in it
        )
    limits = RequestLimits(
        json_bytes=config.max_request_bytes,
        import_bytes=config.import_max_bytes,
        audio_bytes=config.voice_max_bytes + AUDIO_FORM_SLACK,
        login_seconds=config.header_timeout_seconds,
    )
    app.add_middleware(InputLimits, limits=limits)  # inside access control: no token, no body read
    app.add_middleware(AccessControl, policy=policy)
    app.add_middleware(RequestContext)
    for module in (
        health,
        auth,
        agents,
        sessions,
        analysis,
        messages,
        queue,
        branches,
        approvals,
        files,
        memory,
        models,
        openai,
        audio,
        schedules,
        metrics,
        search,
        documents,
        skills,
        browser_routes,
        push,
        jobs,
        usage,
    ):
        mount_routes(app, module.router)
    if config.loop_monitor:

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
    def mcp_host() -> Any:
        from navi.api.mcp_server import NaviHost

        return NaviHost(
            runtime=app.state.runtime,
            runs=app.state.runs,
            approvals=config.mcp_approvals,
            max_message_bytes=config.max_request_bytes,
        )

    mcp_route = McpRoute(mcp_host, config.max_request_bytes)  # built on its first request
    app.router.routes.append(Route(MCP_PATH, mcp_route, methods=["GET", "POST", "DELETE"]))
    mount_routes(app, websocket_router)
    mount_routes(app, viewer_router)
    mount_routes(app, web.router)
    app.mount("/static", web.static_files(), name="static")
    return app
