"""The browser UI: static files shipped in the package, served by Navi itself (no build step, no CDN)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC = Path(str(resources.files("navi.web").joinpath("static")))

# Everything the pages load comes from Navi itself; model output rendered into the page cannot run
# scripts even if it slipped past the sanitiser. No page may be framed by another site.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index() -> Response:
    return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)


@router.get("/debug")
async def debug() -> Response:
    return FileResponse(STATIC / "debug.html", headers=PAGE_HEADERS)


# The API's documentation pages: Swagger UI and ReDoc vendored in static/vendor (not a CDN), started
# without inline script, under the same policy as every other page.
@router.get("/docs")
async def swagger_ui() -> Response:
    return FileResponse(STATIC / "docs.html", headers=PAGE_HEADERS)


# ReDoc runs its search in a worker it makes from a blob: URL of its own script.
REDOC_HEADERS = {**PAGE_HEADERS, "Content-Security-Policy": f"{CSP}; worker-src 'self' blob:"}


@router.get("/redoc")
async def redoc() -> Response:
    return FileResponse(STATIC / "redoc.html", headers=REDOC_HEADERS)


def static_files() -> StaticFiles:
    return StaticFiles(directory=STATIC)
