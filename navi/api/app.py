"""The app factory. The lifespan builds the runtime once and stores it on `app.state.runtime`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from navi import __version__
from navi.api.middleware import RequestContext
from navi.api.routes import health, sessions
from navi.config import Settings, load_settings
from navi.logging import get_logger
from navi.runtime import Runtime, build_runtime

log = get_logger(__name__)


def create_app(settings: Settings | None = None, *, runtime: Runtime | None = None) -> FastAPI:
    settings = settings or (runtime.settings if runtime else load_settings())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = runtime is None
        rt = runtime or await build_runtime(settings)
        app.state.runtime = rt
        log.info(
            "navi.started",
            host=settings.navi_host,
            port=settings.navi_port,
            backend=settings.default_llm_backend,
        )
        try:
            yield
        finally:
            if owned:
                await rt.aclose()
            log.info("navi.stopped")

    app = FastAPI(title="Navi", version=__version__, lifespan=lifespan)
    app.add_middleware(RequestContext)
    app.include_router(health.router)
    app.include_router(sessions.router)
    return app
