"""Access control for every HTTP request and WebSocket handshake (pure ASGI middleware).

Always on:
- **Host allowlist** against DNS rebinding: loopback names, IP literals (a rebinding attack needs a
  domain name), the address Navi is bound to, the machine's own names when bound to all interfaces,
  and `NAVI_ALLOWED_HOSTS`.
- **Origin check** on WebSocket handshakes and state-changing requests, against cross-site
  WebSocket hijacking and CSRF: a browser's Origin must be Navi's own origin (or listed in
  `NAVI_ALLOWED_ORIGINS`); requests without an Origin (curl, SDKs) are not browser-driven.

With `NAVI_API_TOKEN` set, every request also needs the token: `Authorization: Bearer …` for API
clients, or the HttpOnly, SameSite=Strict cookie the login page sets for the browser. The cookie
holds an HMAC of the token, not the token. Comparisons are constant-time. The token never reaches
the logs (the access log omits headers and query strings).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import time
from collections import defaultdict, deque
from collections.abc import Iterable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from navi.api.openai_wire import error_body, is_openai_path

COOKIE = "navi_session"
COOKIE_MAX_AGE = 30 * 24 * 3600
PUBLIC_PATHS = {"/health", "/login", "/favicon.ico"}
PAGE_PATHS = {"/", "/debug"}
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def _split_host(value: str) -> str:
    """Host header → host name without port, lower case, IPv6 brackets removed."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _machine_names() -> set[str]:
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    return {n for n in names if n}


class AccessPolicy:
    def __init__(
        self,
        *,
        token: str,
        bind_host: str,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
    ) -> None:
        """`bind_host` is the address Navi listens on; `allowed_hosts` and `allowed_origins` are the
        extra names and browser origins the user listed (NAVI_ALLOWED_HOSTS, NAVI_ALLOWED_ORIGINS)."""
        self.token = token
        self.cookie_value = (
            hmac.new(self.token.encode(), b"navi-ui-session-v1", hashlib.sha256).hexdigest()
            if self.token
            else ""
        )
        hosts = {"localhost", "127.0.0.1", "::1"}
        bind = bind_host.strip("[]").lower()
        if bind in ("0.0.0.0", "::", ""):
            hosts |= _machine_names()
        else:
            hosts.add(bind)
        hosts |= {h.lower() for h in allowed_hosts}
        self.hosts = hosts
        self.origins = {o.rstrip("/").lower() for o in allowed_origins}
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    # --- checks ----------------------------------------------------------------------------------
    def host_allowed(self, host_header: str) -> bool:
        host = _split_host(host_header)
        return bool(host) and (host in self.hosts or _is_ip(host) or host.endswith(".localhost"))

    def origin_allowed(self, origin: str, host_header: str) -> bool:
        origin = origin.strip().lower().rstrip("/")
        if not origin or origin == "null":
            return False
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc == host_header.strip().lower()

    def token_matches(self, candidate: str) -> bool:
        return bool(self.token) and hmac.compare_digest(candidate.encode(), self.token.encode())

    def cookie_matches(self, candidate: str) -> bool:
        return bool(self.cookie_value) and hmac.compare_digest(candidate.encode(), self.cookie_value.encode())

    def authenticated(self, headers: dict[str, str]) -> bool:
        if not self.token:
            return True
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and self.token_matches(auth[7:].strip()):
            return True
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is simply not a login
            return False
        morsel = cookies.get(COOKIE)
        return morsel is not None and self.cookie_matches(morsel.value)

    # --- login throttling --------------------------------------------------------------------------
    def login_allowed(self, client: str, *, window: float = 300.0, limit: int = 10) -> bool:
        attempts = self._failures[client]
        now = time.monotonic()
        while attempts and attempts[0] < now - window:
            attempts.popleft()
        return len(attempts) < limit

    def login_failed(self, client: str) -> None:
        self._failures[client].append(time.monotonic())


class AccessControl:
    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        path = scope.get("path", "")
        if not self.policy.host_allowed(host):
            await self._deny(
                kind, send, receive, 421, f"Host '{host}' is not allowed (set NAVI_ALLOWED_HOSTS)", path
            )
            return
        origin = headers.get("origin")
        unsafe = kind == "websocket" or scope.get("method", "GET") in UNSAFE_METHODS
        if unsafe:
            if origin is not None and not self.policy.origin_allowed(origin, host):
                await self._deny(kind, send, receive, 403, f"Origin '{origin}' is not allowed", path)
                return
            if origin is None and headers.get("sec-fetch-site") == "cross-site":
                await self._deny(kind, send, receive, 403, "cross-site request refused", path)
                return
        if path not in PUBLIC_PATHS and not self.policy.authenticated(headers):
            if kind == "http" and path in PAGE_PATHS and scope.get("method") == "GET":
                await _redirect(send, "/login")
            else:
                await self._deny(
                    kind, send, receive, 401, "authentication required: send the API token", path
                )
            return
        await self.app(scope, receive, send)

    @staticmethod
    async def _deny(kind: str, send: Send, receive: Receive, status: int, detail: str, path: str) -> None:
        if kind == "websocket":
            await receive()  # the websocket.connect message
            await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
            return
        payload: dict[str, Any] = {"detail": detail}
        if is_openai_path(path):  # OpenAI's clients show the message of OpenAI's error object
            payload = error_body(detail, "invalid_api_key" if status == 401 else None, status)
        body = json.dumps(payload).encode()
        extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str) -> None:
    await send({"type": "http.response.start", "status": 303, "headers": [(b"location", location.encode())]})
    await send({"type": "http.response.body", "body": b""})
