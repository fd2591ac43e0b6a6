"""Every request the browser makes, answered by Navi through the network guard.

A session's browser context routes all of its requests here (`context.route("**/*")`): navigations,
redirects, frames, scripts, images, XHR and form posts. Each is fetched with Navi's guarded client
(`navi/net/fetch.py`: the host vetted by `NetGuard`, the connection made to the vetted address, no
proxy) and handed back to Chromium with `route.fulfill`.

Redirects: Chromium follows a redirect of a fulfilled response by itself, without routing the next
request (measured with Playwright 1.64: the request after a fulfilled 302 never reaches the
handler). So no 3xx is handed back. A navigation's redirect becomes a page that moves on at once
(`<meta http-equiv="refresh">`, with the redirect's cookies), and Chromium's request for the
target comes through this router and is vetted like any other; a subresource's redirects are
followed here, each hop vetted by the guarded transport. Either way a public page that redirects
to 127.0.0.1 is refused at the hop that goes there. (A 307/308 after a form post becomes a GET of
the target, as the page cannot re-post.)

A refused request is aborted (`blockedbyclient`) — a refused page is answered with Navi's own
"Refused by Navi" page, status 403 — and remembered in `refusals`, so the tool can say why a page
is missing or partial. Only http(s) is fetched; any other scheme a page asks for is
aborted (data: and blob: URLs never leave Chromium). In the `bwrap` confinement Chromium has no
network of its own (`launch.py`), so nothing reaches the network except through here.
"""

from __future__ import annotations

import contextlib
import html
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx

from navi.logging import get_logger
from navi.net.fetch import web_client
from navi.net.guard import FetchRefused, NetGuard
from navi.tools.builtin.http import fetch_error, read_capped

# Request headers Chromium adds that the guarded client sets itself, or that name the connection.
_REQUEST_DROP = frozenset({"host", "connection", "content-length", "transfer-encoding", "keep-alive"})
# The body is handed over decoded and whole: no encoding or length of the original transfer.
_RESPONSE_DROP = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})
MAX_REFUSALS = 20
_HTML = {"content-type": "text/html; charset=utf-8", "cache-control": "no-store"}
log = get_logger(__name__)


@dataclass
class Refusal:
    url: str
    reason: str
    navigation: bool


@dataclass
class Router:
    """The request handler of one session's browser context."""

    guard: NetGuard
    timeout: float
    max_bytes: int
    max_download_bytes: int = 0  # a response Chromium will save as a download may be this large
    refusals: list[Refusal] = field(default_factory=list)
    on_attachment: Callable[[], None] | None = None  # a response Chromium will save as a download
    on_request: Callable[[str, bool], None] | None = None  # (url, main-frame navigation), once fetched
    secrets: set[str] = field(default_factory=set)  # typed into password fields: kept out of the log
    _client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = web_client(self.guard, self.timeout)
            # Chromium keeps the cookies and sends them with each request; a second jar here would
            # keep what the page deleted, so this client's jar accepts and returns none.
            self._client.cookies = httpx.Cookies(CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])))
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def take_refusals(self) -> list[Refusal]:
        out, self.refusals = self.refusals, []
        return out

    def _refuse(self, url: str, reason: str, navigation: bool) -> None:
        if len(self.refusals) < MAX_REFUSALS:
            self.refusals.append(Refusal(url, reason, navigation))

    async def handle(self, route: Any, request: Any) -> None:
        """Answer one request of the page (never raises: a failure aborts the request)."""
        try:
            await self._handle(route, request)
        except Exception as exc:  # a closed page, a driver hiccup: the request fails, nothing else
            with contextlib.suppress(Exception):
                await route.abort("failed")
            url, error = str(request.url), str(exc)
            for secret in (s for s in self.secrets if len(s) >= 3):
                url, error = url.replace(secret, "***"), error.replace(secret, "***")
            log.warning("browser.route_failed", url=url[:200], error=error[:200])

    async def _handle(self, route: Any, request: Any) -> None:
        url = request.url
        moves = bool(request.is_navigation_request())  # a frame's navigation: Chromium moves on
        navigation = moves and request.frame.parent_frame is None
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            self._refuse(url, f"{scheme}: URLs are not opened by Navi's browser", navigation)
            await route.abort("blockedbyclient")
            return
        headers = {
            k: v
            for k, v in (await request.all_headers()).items()
            if k.lower() not in _REQUEST_DROP and not k.startswith(":")
        }
        client = self.client()
        try:
            content = request.post_data_buffer
            sent = client.build_request(request.method, url, headers=headers, content=content)
            response = await client.send(sent, stream=True, follow_redirects=not moves)
            try:
                cap = self.max_bytes
                if _attachment(response) and moves:
                    cap = max(cap, self.max_download_bytes)
                body, cut = await read_capped(response, cap)
            finally:
                await response.aclose()
        except FetchRefused as exc:
            self._refuse(url, str(exc), navigation)
            if navigation:  # Navi's own page says so (Chromium's error page would commit late)
                await route.fulfill(status=403, headers=_HTML, body=_refused_page(url, str(exc)))
            else:
                await route.abort("blockedbyclient")
            return
        except (httpx.HTTPError, TimeoutError, OSError) as exc:
            if navigation:
                reason = fetch_error(exc, url, self.timeout)
                self._refuse(url, reason, navigation)
                await route.fulfill(status=502, headers=_HTML, body=_refused_page(url, reason, "Not reached"))
            else:
                await route.abort("failed")
            return
        if cut:
            self._refuse(url, f"the response is larger than {cap:,} bytes", navigation)
            await route.abort("failed")
            return
        if self.on_request is not None:  # fetched: the page has been there
            self.on_request(url, navigation)
        out: dict[str, str] = {}
        for key, value in response.headers.multi_items():
            key = key.lower()
            if key in _RESPONSE_DROP:
                continue
            # Playwright splits Set-Cookie on newlines: each cookie stays its own header.
            out[key] = f"{out[key]}\n{value}" if key in out and key == "set-cookie" else value
        if moves and _attachment(response) and self.on_attachment is not None:
            self.on_attachment()
        location = response.headers.get("location")
        if moves and response.is_redirect and location:
            target = urllib.parse.urljoin(url, location)
            kept = dict(_HTML)
            if "set-cookie" in out:
                kept["set-cookie"] = out["set-cookie"]
            await route.fulfill(status=200, headers=kept, body=_moving_on(target))
            return
        await route.fulfill(status=response.status_code, headers=out, body=body)


def _attachment(response: httpx.Response) -> bool:
    """Whether Chromium will save the response as a download rather than show it."""
    return response.headers.get("content-disposition", "").strip().lower().startswith("attachment")


def _refused_page(url: str, reason: str, title: str = "Refused by Navi") -> str:
    """What the tab shows for a page the guard refused or Navi could not fetch."""
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
        f"<p>{html.escape(url)}</p><p>{html.escape(reason)}</p></body></html>"
    )


def _moving_on(target: str) -> str:
    """A page that goes on to `target` at once, as the redirect it stands for would."""
    shown = html.escape(target, quote=True)
    return (
        f'<!doctype html><html><head><meta http-equiv="refresh" content="0;url={shown}">'
        f"<title>Redirecting</title></head><body>Redirecting to {shown}</body></html>"
    )
