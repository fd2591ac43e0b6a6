"""Pure ASGI middleware (no BaseHTTPMiddleware: it would buffer streaming responses)."""

from __future__ import annotations

import logging
import time
import uuid

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from navi import web

log = structlog.stdlib.get_logger("navi.http")

# The page's shell: the pages and their static files hold nothing of anybody's and keep their own
# caching (the service worker keeps a copy of them). Every other answer is `no-store`.
SHELL_PAGES = frozenset({"/", "/debug", "/docs", "/redoc", *web.PUBLIC_FILES})
NO_STORE = (b"cache-control", b"no-store")


def is_shell(path: str) -> bool:
    return path in SHELL_PAGES or path.startswith("/static/")


class RequestContext:
    """Binds a request id (from `X-Request-Id` or fresh) to the log context, echoes it back, marks
    every answer but the page's shell `Cache-Control: no-store` (conversations, memory, files and
    the rest must not stay in a browser's cache, to be read there after signing out), and writes
    one access-log line per HTTP request — at DEBUG: the page polls every few seconds, and at
    the default level those lines would bury everything else (the sign-in link `navi serve`
    prints, warnings). A 5xx answer is logged at WARNING. Query strings are left out: they may
    hold tokens.

    At DEBUG, each request and WebSocket handshake is also logged with its query string and
    headers (for "why was this refused?": Host, Origin, which credentials came); the logging set-up
    masks credential values in them (`navi.logging.redact_secrets`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or uuid.uuid4().hex[:16]
        if logging.getLogger("navi.http").isEnabledFor(logging.DEBUG):
            log.debug(
                "http.received" if scope["type"] == "http" else "ws.received",
                request_id=request_id,
                method=scope.get("method", "GET"),
                path=scope.get("path", ""),
                query=f"?{query.decode('latin-1')}" if (query := scope.get("query_string")) else "",
                client=(scope.get("client") or ("", 0))[0],
                headers={k.decode("latin-1"): v.decode("latin-1") for k, v in headers.items()},
            )
        status = 0
        started = time.perf_counter()
        private = not is_shell(scope.get("path", ""))

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                if private:  # whatever caching the answer asked for: none
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append(NO_STORE)
                message["headers"] = [*headers, (b"x-request-id", request_id.encode("latin-1"))]
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id, path=scope.get("path", "")):
            if scope["type"] == "websocket":  # no response headers to add: don't wrap every frame's send
                await self.app(scope, receive, send)
                return
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                if scope["type"] == "http":
                    (log.warning if status >= 500 else log.debug)(
                        "http.request",
                        method=scope.get("method"),
                        status=status,
                        duration_ms=round((time.perf_counter() - started) * 1000, 1),
                    )
