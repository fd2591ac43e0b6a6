"""The browser UI: static files shipped in the package, served by Navi itself (no CDN).

The page's script is static/app.js: static/js/main.js and every module it imports, joined by
scripts/bundle-page (esbuild) and committed, so running Navi needs no Node and a browser loads one
script rather than forty modules one import level after another. The modules stay the source; a
test fails when app.js is not what they build.
"""

from __future__ import annotations

import functools
import hashlib
import json
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
    "connect-src 'self'; media-src 'self' blob:; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; "
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


# The installable app (PWA): its manifest, and a service worker that keeps the page's shell for when
# Navi is not reachable. Both are public, like the icons the manifest names: the browser fetches them
# without the sign-in, and none of them holds anything but the page's own files.
SHELL_VENDOR = ("highlight-github-dark.min.css",)  # the vendored scripts are inside app.js
ICONS = ("navi-192.png", "navi-512.png", "navi-maskable-512.png", "apple-touch-icon.png", "favicon-32.png")
PUBLIC_FILES = frozenset({"/manifest.webmanifest", "/sw.js", *(f"/static/icons/{name}" for name in ICONS)})


@functools.cache
def shell() -> tuple[str, list[str]]:
    """The page's shell for the service worker: a digest of its files (the cache's version) and
    their paths."""
    files = [
        STATIC / "index.html",
        STATIC / "app.css",
        STATIC / "app.js",
        STATIC / "js" / "theme.js",
        *(STATIC / "vendor" / name for name in SHELL_VENDOR),
        *(STATIC / "icons" / name for name in ICONS),
    ]
    digest = hashlib.sha256()
    paths = []
    for file in files:
        digest.update(file.read_bytes())
        relative = file.relative_to(STATIC).as_posix()
        paths.append("/" if relative == "index.html" else f"/static/{relative}")
    manifest = STATIC / "manifest.webmanifest"
    digest.update(manifest.read_bytes())
    return digest.hexdigest()[:16], [*paths, "/manifest.webmanifest"]


@router.get("/manifest.webmanifest")
async def manifest() -> Response:
    return FileResponse(
        STATIC / "manifest.webmanifest",
        media_type="application/manifest+json",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


@router.get("/sw.js")
async def service_worker() -> Response:
    version, paths = shell()
    head = f"const VERSION = {json.dumps(version)};\nconst SHELL = {json.dumps(paths)};\n"
    return Response(
        head + (STATIC / "sw.js").read_text(encoding="utf-8"),
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


def static_files() -> StaticFiles:
    return StaticFiles(directory=STATIC)
