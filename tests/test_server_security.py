"""Access control over real HTTP and WebSocket: tokens, the login cookie, Origin and Host checks."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from navi.api.security import COOKIE
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

TOKEN = "correct-horse-battery-staple-42"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN) as server:
        yield server


def raw_status(navi: LiveNavi, request: str) -> int:
    host, port = navi.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request.encode())
        line = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(line.split()[1])


def test_rest_needs_the_token(navi: LiveNavi) -> None:
    with navi.client(anonymous=True) as http:
        assert http.get("/health").status_code == 200  # public
        missing = http.get("/sessions")
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert http.get("/sessions", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert (
            http.get("/sessions", headers={"Authorization": TOKEN}).status_code == 401
        )  # not a bearer header
        assert http.get("/sessions", headers={"Authorization": f"Bearer {TOKEN}x"}).status_code == 401
        assert http.get("/sessions", headers=AUTH).status_code == 200
        assert http.post("/sessions", headers=AUTH).status_code == 201
        assert http.get("/agents/tools").status_code == 401
        assert http.get("/openapi.json").status_code == 401
        page = http.get("/", follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/login"


def test_login_sets_a_strict_httponly_cookie(navi: LiveNavi) -> None:
    with navi.client(anonymous=True) as http:
        form = http.get("/login")
        assert form.status_code == 200 and 'name="token"' in form.text
        wrong = http.post("/login", data={"token": "nope"}, follow_redirects=False)
        assert (
            wrong.status_code == 401
            and "not right" in wrong.text
            and COOKIE not in wrong.headers.get("set-cookie", "")
        )
        ok = http.post("/login", data={"token": TOKEN}, follow_redirects=False)
        assert ok.status_code == 303
        cookie = ok.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert TOKEN not in cookie  # the cookie holds a sign-in, not the token
        value = cookie.split(";", 1)[0].split("=", 1)[1]
    with navi.client(anonymous=True, cookies={COOKIE: value}) as http:
        assert http.get("/sessions").status_code == 200
    with navi.client(
        anonymous=True, cookies={COOKIE: value[:-1] + ("1" if value[-1] == "0" else "0")}
    ) as http:
        assert http.get("/sessions").status_code == 401


def test_login_attempts_are_throttled(navi: LiveNavi) -> None:
    with navi.client(anonymous=True) as http:
        codes = [http.post("/login", data={"token": f"guess-{i}"}).status_code for i in range(12)]
        assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
        assert http.post("/login", data={"token": TOKEN}).status_code == 429  # even the right one, for now


async def test_websocket_needs_the_cookie_or_the_token(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn("authenticated hello")
    sid = navi.new_session(headers=AUTH)
    with pytest.raises(InvalidStatus) as denied:
        async with navi.socket(sid, anonymous=True):
            pass
    assert denied.value.response.status_code == 403
    with pytest.raises(InvalidStatus):
        async with navi.socket(sid, anonymous=True, additional_headers={"Authorization": "Bearer wrong"}):
            pass
    async with navi.socket(sid, anonymous=True, additional_headers=AUTH) as ws:
        await ws.send(json.dumps({"type": "message", "content": "hi"}))
        assert (await frames_until(ws, "stream_end"))[-1]["content"] == "authenticated hello"
    cookie = navi.app.state.access.new_session()
    async with navi.socket(
        sid, anonymous=True, additional_headers={"Cookie": f"{COOKIE}={cookie}"}, origin=navi.url
    ) as ws:
        await ws.send(json.dumps({"type": "ping"}))
        # The answered turn may still be naming the session: its frames are replayed first.
        assert (await frames_until(ws, "error"))[-1]["code"] == "bad_frame"


async def test_foreign_origins_are_refused(navi: LiveNavi) -> None:
    sid = navi.new_session(headers=AUTH)
    for origin in ("http://evil.example", "null", "http://127.0.0.1:1"):
        with pytest.raises(InvalidStatus) as denied:
            async with navi.socket(sid, anonymous=True, additional_headers=AUTH, origin=origin):  # type: ignore[arg-type]
                pass
        assert denied.value.response.status_code == 403
    async with navi.socket(sid, anonymous=True, additional_headers=AUTH, origin=navi.url):  # type: ignore[arg-type]
        pass  # same origin is fine
    with navi.client(anonymous=True) as http:
        evil = http.post("/sessions", headers={**AUTH, "Origin": "http://evil.example"})
        assert evil.status_code == 403 and "Origin" in evil.json()["detail"]
        site = http.delete(f"/sessions/{sid}", headers={**AUTH, "Sec-Fetch-Site": "cross-site"})
        assert site.status_code == 403
        assert http.post("/sessions", headers={**AUTH, "Origin": navi.url}).status_code == 201
        assert (
            http.get("/sessions", headers={**AUTH, "Origin": "http://evil.example"}).status_code == 200
        )  # reads
        preflight = http.options(
            "/sessions", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
        )
        assert "access-control-allow-origin" not in preflight.headers  # no wildcard CORS


def test_foreign_host_headers_are_refused(navi: LiveNavi) -> None:
    port = navi.url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", "rebind.attacker.net"):
        assert raw_status(navi, f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n") == 421
        assert (
            raw_status(
                navi,
                f"GET /ws/sessions/x HTTP/1.1\r\nHost: {host}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            )
            == 403
        )
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "192.168.1.20", "[::1]"):
        assert raw_status(navi, f"GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n") == 200


def test_with_auth_disabled_loopback_is_open_but_origin_and_host_still_checked(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with (
        live_navi(tmp_path, fake_server, navi_auth_disabled=True) as navi,
        navi.client(anonymous=True) as http,
    ):
        assert http.get("/sessions").status_code == 200
        assert http.post("/sessions", headers={"Origin": "http://evil.example"}).status_code == 403
        assert (
            raw_status(navi, "GET /sessions HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
            == 421
        )


def test_a_listed_origin_gets_its_cors_preflight_answered(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Browsers send no credentials with a preflight, so it cannot carry the token: a listed origin's
    preflight is answered by the CORS layer (running nothing); the request itself still needs the token."""
    app_origin = "http://app.example"
    with (
        live_navi(tmp_path, fake_server, navi_api_token=TOKEN, navi_allowed_origins=app_origin) as navi,
        navi.client(anonymous=True) as http,
    ):
        ask = {"Origin": app_origin, "Access-Control-Request-Method": "POST"}
        preflight = http.options(
            "/v1/chat/completions",
            headers={**ask, "Access-Control-Request-Headers": "authorization,x-session-id"},
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == app_origin
        assert "x-session-id" in preflight.headers["access-control-allow-headers"].lower()
        evil = http.options("/sessions", headers={**ask, "Origin": "http://evil.example"})
        assert evil.status_code == 401 and "access-control-allow-origin" not in evil.headers
        assert http.post("/sessions", headers={"Origin": app_origin}).status_code == 401  # still the token
        made = http.post("/sessions", headers={"Origin": app_origin, **AUTH})
        assert made.status_code == 201 and made.headers["access-control-allow-origin"] == app_origin


def test_only_the_app_files_are_public(navi: LiveNavi) -> None:
    """The installable app's manifest, service worker and icons load without the token (the browser
    fetches them without the sign-in); the page's other files and a path that only starts like an
    icon's do not."""
    with navi.client(anonymous=True) as http:
        manifest = http.get("/manifest.webmanifest")
        assert manifest.status_code == 200 and manifest.headers["content-type"] == "application/manifest+json"
        assert manifest.json()["start_url"] == "/" and len(manifest.json()["icons"]) == 3
        for icon in manifest.json()["icons"]:
            assert http.get(icon["src"]).status_code == 200, icon
        worker = http.get("/sw.js")
        assert worker.status_code == 200 and worker.headers["content-type"].startswith("text/javascript")
        shell = json.loads(worker.text.split("const SHELL = ", 1)[1].split(";\n", 1)[0])
        assert "/" in shell and "/static/app.js" in shell and "/static/app.css" in shell
        # Only the page's own files: nothing a user said (sessions, uploads, memory) is ever cached.
        assert all(p == "/" or p.startswith("/static/") or p == "/manifest.webmanifest" for p in shell)
        assert http.get("/static/app.js").status_code == 401
        assert http.get("/").status_code in (302, 303, 307)  # to /login
        assert raw_status(navi, "GET /static/icons/../js/main.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == 401
    with navi.client() as http:
        assert http.get("/static/app.js").status_code == 200
