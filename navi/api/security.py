"""Access control for every HTTP request and WebSocket handshake (pure ASGI middleware).

Always on:
- **Host allowlist** against DNS rebinding: loopback names, IP literals (a rebinding attack needs a
  domain name), the address Navi is bound to, the machine's own names when bound to all interfaces,
  and `NAVI_ALLOWED_HOSTS`.
- **Origin check** on WebSocket handshakes and state-changing requests, against cross-site
  WebSocket hijacking and CSRF: a browser's Origin must be Navi's own origin (or listed in
  `NAVI_ALLOWED_ORIGINS`); requests without an Origin (curl, SDKs) are not browser-driven.

With a token (`NAVI_API_TOKEN`, or the one Navi made), every request also needs it:
`Authorization: Bearer …` for API clients, or the HttpOnly, SameSite=Strict cookie `/login` sets for
the browser. The cookie holds a random sign-in id kept server-side (`navi.api.signins`), which
`/logout` revokes. Comparisons are constant-time. The token never reaches the logs. A WebSocket's
scope also carries how to check its credentials again (`rechecking`): an open socket asks before
each frame and when a sign-out or removal may concern it (navi/api/sockets.py).

**Who is asking** goes on the ASGI scope (`scope["navi.user"]`, read by `navi.api.deps.CurrentUser`):
the owner token, its browser sign-ins and a Navi without a token are the owner, `DEFAULT_OWNER`.
Any other bearer token is looked up among the users `navi users add` made (by its SHA-256
digest, on every request: a removed user's token fails with the next one). A user's browser
sign-in carries the user and their token's digest; each request asks the user store whether the
user still holds it, so a removed user's cookie fails with the next request too. A token with the
`proxy` role may add `X-User-Id: NAME` to act as NAME — any valid user name but the owner's: the
proxy vouches for whom it forwards, so only give that role to a reverse proxy that authenticates
its users itself. Without the header the proxy acts as itself. `X-User-Id` with any other token is
refused (403), so a client cannot believe it is someone it is not.

**Guessing is throttled** on every route: a client whose wrong tokens, cookies and sign-ins add
up to `FAILURE_LIMIT` within `FAILURE_WINDOW` seconds gets 429 for everything but the public pages
until the window passes — even with the right token, or the throttle would tell a guess that was
right. A client is its address (IPv6: its /64). `X-Forwarded-For` names the client only when the
connection comes from a proxy listed in `NAVI_TRUSTED_PROXIES`; from anyone else it is ignored, so
rotating it gets an attacker nowhere (`navi serve` turns uvicorn's own proxy handling off).
Where several workers share a PostgreSQL database, failures are counted in it (`signin_failures`,
navi/storage/throttle.py), so spreading guesses over workers or machines does not multiply them.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import time
from collections import deque
from collections.abc import Iterable
from http.cookies import SimpleCookie
from typing import Literal, Protocol
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from navi.api.identity import CREDENTIAL_KEY, RECHECK_KEY, USER_KEY
from navi.api.openai_wire import error_body, is_openai_path
from navi.api.signins import MAX_AGE, SignIn, SignIns
from navi.sessions.models import DEFAULT_OWNER
from navi.users.store import UserStore, valid_name
from navi.users.store import digest as token_digest
from navi.web import PUBLIC_FILES as PWA_FILES

COOKIE = "navi_session"
COOKIE_MAX_AGE = int(MAX_AGE)
PUBLIC_PATHS = {"/health", "/login", "/favicon.ico", *PWA_FILES}  # PWA_FILES: the manifest, worker, icons
PAGE_PATHS = {"/", "/debug", "/docs", "/redoc"}
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
USER_HEADER = "x-user-id"  # a proxy-role token's user
NOT_PROXY = "X-User-Id is only for a token with the proxy role (navi users add NAME --proxy)"
BAD_USER = "X-User-Id must be a user name (lower-case letters, digits, '.', '_', '-'), not the owner's"
PROXY_SIGN_IN = "A proxy's token signs nobody in: sign in with your own user's token."
FAILURE_LIMIT = 10  # failed sign-ins (tokens, cookies, the login form) per client …
FAILURE_WINDOW = 300.0  # … within this many seconds
TRACKED_CLIENTS = 10_000  # beyond this, clients whose failures are all old are forgotten
# Deletes the cookie: sent with a refusal of a cookie Navi does not know (expired, signed out, from
# another token), so the browser stops sending it instead of adding a failure per request.
CLEAR_COOKIE = f"{COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict".encode()
Outcome = Literal["ok", "none", "bad"]


class ProxySignIn(Exception):
    """A proxy-role token typed at /login (the message says why it is refused)."""


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


def _network(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return None


def client_key(address: str) -> str:
    """What the throttle counts failures against: the address, or an IPv6 address's /64 (one
    machine usually has a whole /64 to rotate through)."""
    ip = _address(address)
    if ip is None:
        return address
    if ip.version == 6 and not ip.is_loopback:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _normal(value: str) -> str:
    ip = _address(value)
    return str(ip) if ip is not None else value


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP address (IPv4-mapped IPv6 as the IPv4 address it maps), or None. Some proxies write
    a port after it (`1.2.3.4:5678`, `[2001:db8::1]:5678`): it is not part of the client."""
    value = value.strip()
    if value.startswith("[") and "]" in value:
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class AccessPolicy:
    def __init__(
        self,
        *,
        token: str,
        bind_host: str,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        trusted_proxies: Iterable[str] = (),
    ) -> None:
        """`bind_host` is the address Navi listens on; `allowed_hosts` and `allowed_origins` are the
        extra names and browser origins the user listed (NAVI_ALLOWED_HOSTS, NAVI_ALLOWED_ORIGINS);
        `trusted_proxies` the proxies whose X-Forwarded-For is believed (NAVI_TRUSTED_PROXIES)."""
        self.token = token
        self.sign_ins = SignIns(token)
        hosts = {"localhost", "127.0.0.1", "::1"}
        bind = bind_host.strip("[]").lower()
        if bind in ("0.0.0.0", "::", ""):
            hosts |= _machine_names()
        else:
            hosts.add(bind)
        hosts |= {h.lower() for h in allowed_hosts}
        self.hosts = hosts
        self.origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.proxies = [n for n in (_network(p) for p in trusted_proxies) if n is not None]
        self.failures: Failures = MemoryFailures()  # the database's when workers share one
        self.users: UserStore | None = None  # attached by the lifespan, with the database

    def attach_failures(self, failures: Failures | None) -> None:
        """Count failed sign-ins in `failures` from now on (None: this process's memory)."""
        self.failures = failures or MemoryFailures()

    def attach_users(self, users: UserStore | None) -> None:
        """Accept the tokens of these users from now on (None: the owner's token only)."""
        self.users = users

    def new_session(self) -> str:
        """A browser sign-in for the cookie, kept in memory (tests sign a browser in with it)."""
        return self.sign_ins.mint()

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

    def _cookie(self, headers: dict[str, str]) -> str | None:
        """The sign-in cookie's value, or None (a malformed Cookie header is simply not a login)."""
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:
            return None
        morsel = cookies.get(COOKIE)
        return None if morsel is None else morsel.value

    async def authenticate(self, headers: dict[str, str]) -> tuple[Outcome, bool, SignIn | None]:
        """("ok" | "none" | "bad", whether a cookie Navi does not know came along, the sign-in).

        "none" is a request that carried no credentials at all (not a guess); "bad" one that
        carried a wrong token or an unknown sign-in cookie and nothing right. The sign-in is the
        cookie's when that is what let the request in: whom it acts as is `identify`'s to check.
        """
        if not self.token:
            return "ok", False, None
        auth = headers.get("authorization", "").strip() or None  # an empty header is no guess
        if auth is not None:
            scheme, _, value = auth.partition(" ")
            if scheme.lower() == "bearer" and self.token_matches(value.strip()):
                return "ok", False, None
        cookie = self._cookie(headers)
        sign_in = await self.sign_ins.find(cookie) if cookie is not None else None
        if sign_in is not None:
            return "ok", False, sign_in
        bad_cookie = cookie is not None
        return ("bad" if auth is not None or bad_cookie else "none"), bad_cookie, None

    async def sign_in_user(self, token: str) -> tuple[str, str | None] | None:
        """Whom a token typed at /login signs in as: (the owner, None), (a user, their token's
        digest), or None for no token of anyone's. A proxy-role token raises `ProxySignIn`: a
        proxy vouches for others and is nobody to sign in."""
        if self.token_matches(token):
            return DEFAULT_OWNER, None
        if self.users is None or not token:
            return None
        user = await self.users.by_token(token)
        if user is None:
            return None
        if user.role == "proxy":
            raise ProxySignIn(PROXY_SIGN_IN)
        return user.name, token_digest(token)

    async def identify(self, headers: dict[str, str]) -> tuple[Outcome, bool, str | None, str | None]:
        """(outcome, unknown cookie, user, problem): `authenticate`, then the users' tokens for
        what the owner's did not match. The user is the name the request acts as; a problem says
        why its X-User-Id cannot be used (the request is then refused, whoever sent it).

        A user's browser sign-in is good only while that user still holds the token it was made
        with, asked of the user store on every request (nothing cached): otherwise it is revoked
        and the request refused like one with an expired cookie."""
        wanted = headers.get(USER_HEADER, "").strip()
        outcome, bad_cookie, sign_in = await self.authenticate(headers)
        if outcome == "ok" and sign_in is not None and sign_in.owner != DEFAULT_OWNER:
            if await self._still_held(sign_in):
                return outcome, False, sign_in.owner, NOT_PROXY if wanted else None
            await self.sign_ins.revoke(self._cookie(headers) or "")
            outcome, bad_cookie = "bad", True
        if outcome == "ok":
            return outcome, bad_cookie, DEFAULT_OWNER, NOT_PROXY if wanted else None
        scheme, _, value = headers.get("authorization", "").strip().partition(" ")
        value = value.strip()
        if self.users is None or scheme.lower() != "bearer" or not value:
            return outcome, bad_cookie, None, None
        user = await self.users.by_token(value)
        if user is None:
            return outcome, bad_cookie, None, None
        if not wanted:
            return "ok", False, user.name, None
        if user.role != "proxy":
            return "ok", False, None, NOT_PROXY
        if not valid_name(wanted):
            return "ok", False, None, BAD_USER
        return "ok", False, wanted, None

    def rechecking(self, headers: dict[str, str], user: str) -> dict[str, object]:
        """What a WebSocket's scope carries to check its handshake's credentials again later
        (`navi.api.identity.recheck_of`): the same `identify`, which must let it in as `user`."""

        async def recheck() -> bool:
            outcome, _cookie, again, problem = await self.identify(headers)
            return outcome == "ok" and problem is None and again == user

        named = (headers.get("authorization", ""), self._cookie(headers) or "", headers.get(USER_HEADER, ""))
        return {RECHECK_KEY: recheck, CREDENTIAL_KEY: hashlib.sha256("\0".join(named).encode()).hexdigest()}

    async def _still_held(self, sign_in: SignIn) -> bool:
        if self.users is None or sign_in.user_token is None:
            return False
        return await self.users.holds(sign_in.owner, sign_in.user_token)

    # --- who is asking ---------------------------------------------------------------------------
    def _trusted(self, address: str) -> bool:
        ip = _address(address)
        return ip is not None and any(ip in network for network in self.proxies)

    def client_of(self, peer: str, headers: dict[str, str]) -> str:
        """The client's address: the peer's, or — only when the peer is a trusted proxy — the
        nearest address in X-Forwarded-For that is not itself a trusted proxy."""
        if not self.proxies or not self._trusted(peer):
            return peer
        hops = [hop.strip() for hop in headers.get("x-forwarded-for", "").split(",") if hop.strip()]
        nearest = peer
        for hop in reversed(hops):
            if not self._trusted(hop):
                ip = _address(hop)
                # Not an address: no proxy wrote that; the chain is only as good as the hop after it.
                return str(ip) if ip is not None else nearest
            nearest = _normal(hop)
        return nearest  # every hop a proxy: the first one is the client

    def forwarded_scheme(self, peer: str, headers: dict[str, str]) -> str | None:
        """X-Forwarded-Proto from a trusted proxy ("http" or "https"), else None."""
        if not self.proxies or not self._trusted(peer):
            return None
        proto = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        return proto if proto in ("http", "https") else None

    # --- throttling ------------------------------------------------------------------------------
    async def login_allowed(self, client: str) -> bool:
        """False while `client` is locked out (too many failed sign-ins lately)."""
        return len(await self.failures.recent(client_key(client), FAILURE_WINDOW)) < FAILURE_LIMIT

    async def retry_after(self, client: str) -> int:
        """Seconds until a locked-out client may try again."""
        ages = await self.failures.recent(client_key(client), FAILURE_WINDOW)
        if len(ages) < FAILURE_LIMIT:
            return 0
        return max(1, int(FAILURE_WINDOW - ages[-FAILURE_LIMIT]) + 1)

    async def login_failed(self, client: str) -> None:
        await self.failures.add(client_key(client), FAILURE_WINDOW)


class Failures(Protocol):
    """Where failed sign-ins are counted, per client key."""

    async def recent(self, key: str, window: float) -> list[float]:
        """How long ago (seconds) each failure of `key` within the last `window` seconds was,
        oldest first."""
        ...

    async def add(self, key: str, window: float) -> None: ...


class MemoryFailures:
    """This process's count (one worker)."""

    def __init__(self) -> None:
        self._failures: dict[str, deque[float]] = {}

    async def recent(self, key: str, window: float) -> list[float]:
        attempts = self._failures.get(key)
        if attempts is None:
            return []
        now = time.monotonic()
        while attempts and attempts[0] < now - window:
            attempts.popleft()
        return [now - at for at in attempts]

    async def add(self, key: str, window: float) -> None:
        if key not in self._failures and len(self._failures) >= TRACKED_CLIENTS:
            cutoff = time.monotonic() - window
            for stale in [k for k, v in self._failures.items() if not v or v[-1] < cutoff]:
                del self._failures[stale]
        self._failures.setdefault(key, deque(maxlen=FAILURE_LIMIT * 2)).append(time.monotonic())


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
        peer, port = scope.get("client") or ("", 0)
        client = self.policy.client_of(peer, headers)
        scheme = self.policy.forwarded_scheme(peer, headers)
        if client != peer or scheme:  # what the app and its logs see, as behind no proxy
            scope = {**scope, "client": (client, port)}
            if scheme:
                scope["scheme"] = scheme if kind == "http" else {"http": "ws", "https": "wss"}[scheme]
        host = headers.get("host", "")
        path = scope.get("path", "")
        if not self.policy.host_allowed(host):
            await _deny(
                kind, send, receive, 421, f"Host '{host}' is not allowed (set NAVI_ALLOWED_HOSTS)", path=path
            )
            return
        origin = headers.get("origin")
        unsafe = kind == "websocket" or scope.get("method", "GET") in UNSAFE_METHODS
        if unsafe:
            if origin is not None and not self.policy.origin_allowed(origin, host):
                await _deny(kind, send, receive, 403, f"Origin '{origin}' is not allowed", path=path)
                return
            if origin is None and headers.get("sec-fetch-site") == "cross-site":
                await _deny(kind, send, receive, 403, "cross-site request refused", path=path)
                return
        if path in PUBLIC_PATHS or not self.policy.token or _is_listed_preflight(self.policy, scope, headers):
            await self.app({**scope, USER_KEY: DEFAULT_OWNER}, receive, send)
            return
        if not await self.policy.login_allowed(client):
            wait = await self.policy.retry_after(client)
            detail = f"too many failed sign-ins from this address; try again in {wait} s"
            await _deny(kind, send, receive, 429, detail, [(b"retry-after", str(wait).encode())], path=path)
            return
        outcome, bad_cookie, user, problem = await self.policy.identify(headers)
        if outcome == "ok":
            if problem is not None or user is None:
                await _deny(kind, send, receive, 403, problem or "no user", path=path)
                return
            again = self.policy.rechecking(headers, user) if kind == "websocket" else {}
            await self.app({**scope, USER_KEY: user, **again}, receive, send)
            return
        if outcome == "bad":
            await self.policy.login_failed(client)
        secure = b"; Secure" if scope.get("scheme") in ("https", "wss") else b""
        extra = [(b"set-cookie", CLEAR_COOKIE + secure)] if bad_cookie else []
        if kind == "http" and path in PAGE_PATHS and scope.get("method") == "GET":
            await _redirect(send, "/login", extra)
        else:
            await _deny(
                kind, send, receive, 401, "authentication required: send the API token", extra, path=path
            )


def _is_listed_preflight(policy: AccessPolicy, scope: Scope, headers: dict[str, str]) -> bool:
    """A CORS preflight (OPTIONS with Access-Control-Request-Method) from an origin listed in
    NAVI_ALLOWED_ORIGINS. Browsers never send credentials with it, so it cannot carry the token;
    it reaches the CORS middleware, which answers it and runs nothing."""
    origin = headers.get("origin", "").strip().lower().rstrip("/")
    return (
        scope.get("method") == "OPTIONS"
        and "access-control-request-method" in headers
        and bool(origin)
        and origin in policy.origins
    )


async def _deny(
    kind: str,
    send: Send,
    receive: Receive,
    status: int,
    detail: str,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    path: str = "",
) -> None:
    if kind == "websocket":
        await receive()  # the websocket.connect message
        await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
        return
    code = {401: "unauthorized", 403: "forbidden", 421: "misdirected", 429: "too_many_attempts"}[status]
    payload: dict[str, object] = {"detail": detail, "code": code}
    if is_openai_path(path):  # OpenAI's clients show the message of OpenAI's error object
        payload = error_body(detail, "invalid_api_key" if status == 401 else code, status)
    body = json.dumps(payload).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *([(b"www-authenticate", b"Bearer")] if status == 401 else []),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"location", location.encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
