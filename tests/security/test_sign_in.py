"""Item 3 of issue 14: sign-in that resists guessing. Failed bearer tokens and cookies are throttled
on every route (not only /login); X-Forwarded-For counts only from a configured proxy (rotating it
bypassed the throttle); a token used beyond loopback has at least 16 characters; the browser cookie
is a server-side sign-in that /logout revokes (a copied cookie outlived logout)."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import uvicorn
from websockets.exceptions import InvalidStatus

from navi.api.security import COOKIE, FAILURE_LIMIT
from navi.config import load_settings
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.threaded import ThreadedServer
from tests.security.served import served_navi
from tests.server_helpers import LiveNavi, live_navi

TOKEN = "correct-horse-battery-staple-42"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_wrong_bearer_tokens_are_throttled_on_every_route(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN) as navi, navi.client(anonymous=True) as http:
        sid = navi.new_session(headers=AUTH)
        for _ in range(3):  # asking without any token is not a guess
            assert http.get("/sessions").status_code == 401
        guesses = [
            http.get(f"/sessions/{sid}", headers={"Authorization": f"Bearer guess-{i}"}).status_code
            for i in range(FAILURE_LIMIT + 1)
        ]
        assert guesses == [401] * FAILURE_LIMIT + [429]
        locked = http.get("/agents/tools", headers=AUTH)  # the right token too, on any route, for now
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0
        assert locked.json()["code"] == "too_many_attempts"
        assert http.post("/login", data={"token": TOKEN}).status_code == 429
        assert http.get("/health").status_code == 200  # public pages stay up


async def test_websocket_guesses_count_and_a_locked_client_cannot_connect(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN) as navi:
        sid = navi.new_session(headers=AUTH)
        for i in range(FAILURE_LIMIT):
            with pytest.raises(InvalidStatus):
                async with navi.socket(
                    sid, anonymous=True, additional_headers={"Authorization": f"Bearer g{i}"}
                ):
                    pass
        with pytest.raises(InvalidStatus):
            async with navi.socket(sid, anonymous=True, additional_headers=AUTH):
                pass
        with navi.client(anonymous=True) as http:
            assert http.get("/sessions", headers=AUTH).status_code == 429


def test_forged_cookies_are_throttled_and_cleared(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN) as navi, navi.client(anonymous=True) as http:
        answers = [
            http.get("/sessions", headers={"Cookie": f"{COOKIE}=forged-{i}"})
            for i in range(FAILURE_LIMIT + 1)
        ]
        assert [a.status_code for a in answers] == [401] * FAILURE_LIMIT + [429]
        # Each refusal tells the browser to drop the cookie, so a stale one costs one failure, not one
        # per request the page makes.
        assert all(
            f"{COOKIE}=" in a.headers["set-cookie"] and "Max-Age=0" in a.headers["set-cookie"]
            for a in answers[:-1]
        )
        page = http.get("/", headers={"Cookie": f"{COOKIE}=forged"}, follow_redirects=False)
        assert page.status_code == 429


def sign_in(navi: LiveNavi) -> str:
    with navi.client(anonymous=True) as http:
        answer = http.post("/login", data={"token": TOKEN}, follow_redirects=False)
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    return str(answer.cookies[COOKIE])


def status_with(navi: LiveNavi, cookie: str) -> int:
    with navi.client(anonymous=True, cookies={COOKIE: cookie}) as http:
        return http.get("/sessions").status_code


def test_logout_revokes_the_cookie_copies_included(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN) as navi:
        mine, other = sign_in(navi), sign_in(navi)
        assert mine != other  # every sign-in is its own random id
        assert status_with(navi, mine) == 200
        copied = mine  # e.g. read off the disk of a shared machine
        with navi.client(anonymous=True, cookies={COOKIE: mine}) as http:
            out = http.post("/logout", headers={"Origin": navi.url}, follow_redirects=False)
        assert out.status_code == 303 and out.headers["location"] == "/login"
        assert "Max-Age=0" in out.headers["set-cookie"]
        assert status_with(navi, copied) == 401  # the copy died with the sign-in
        assert status_with(navi, other) == 200  # other browsers stay signed in


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_sign_ins_survive_a_restart_but_not_a_new_token(
    kind: str, tmp_path: Path, fake_server: FakeModelServer, request: pytest.FixtureRequest
) -> None:
    database = {"database_url": request.getfixturevalue("pg_url")} if kind == "postgres" else {}
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN, **database) as navi:
        kept, revoked = sign_in(navi), sign_in(navi)
        with navi.client(anonymous=True, cookies={COOKIE: revoked}) as http:
            assert http.post("/logout", follow_redirects=False).status_code == 303
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN, **database) as navi:
        assert status_with(navi, kept) == 200  # kept in the database
        assert status_with(navi, revoked) == 401
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN + "-rotated", **database) as navi:
        assert status_with(navi, kept) == 401  # a new token signs every browser out


def post_login(url: str, forwarded_for: str, token: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{url}/login",
        data={"token": token},
        headers={"X-Forwarded-For": forwarded_for, **headers},
        follow_redirects=False,
        timeout=10,
    )


@pytest.mark.real_clock
def test_rotating_x_forwarded_for_does_not_reset_the_throttle(tmp_path: Path) -> None:
    """`navi serve` as users run it: without NAVI_TRUSTED_PROXIES, X-Forwarded-For is ignored."""
    with served_navi(tmp_path, NAVI_API_TOKEN=TOKEN) as navi:
        codes = [
            post_login(navi.url, f"198.51.100.{i}", f"guess-{i}").status_code
            for i in range(FAILURE_LIMIT + 2)
        ]
        assert codes == [401] * FAILURE_LIMIT + [429, 429]
        bearer = httpx.get(f"{navi.url}/sessions", headers={**AUTH, "X-Forwarded-For": "198.51.100.250"})
        assert bearer.status_code == 429


@pytest.mark.real_clock
def test_a_trusted_proxy_names_each_client(tmp_path: Path) -> None:
    with served_navi(tmp_path, NAVI_API_TOKEN=TOKEN, NAVI_TRUSTED_PROXIES="127.0.0.1,10.0.0.0/8") as navi:
        # Behind the proxy, one client guesses; the attacker's own X-Forwarded-For entries are
        # left of what the proxies appended, and do not count.
        codes = [
            post_login(navi.url, f"203.0.113.{i}, 192.0.2.7, 10.1.2.3", f"guess-{i}").status_code
            for i in range(FAILURE_LIMIT + 1)
        ]
        assert codes == [401] * FAILURE_LIMIT + [429]
        assert post_login(navi.url, "192.0.2.7", TOKEN).status_code == 429
        # Another client behind the same proxy signs in; the proxy said it came over HTTPS.
        other = post_login(navi.url, "192.0.2.8:51234", TOKEN, **{"X-Forwarded-Proto": "https"})
        assert other.status_code == 303 and "Secure" in other.headers["set-cookie"]
        # Entries no proxy could have written (not addresses) count against the nearest proxy, so
        # rotating them is no way around the throttle either.
        junk = [post_login(navi.url, f"not-an-ip-{i}", "guess").status_code for i in range(FAILURE_LIMIT + 1)]
        assert junk == [401] * FAILURE_LIMIT + [429]


def navi_command(work: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "navi", *args],
        cwd=work,
        env={**os.environ, "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.real_clock
def test_a_token_used_beyond_loopback_has_at_least_16_characters(tmp_path: Path) -> None:
    short = navi_command(
        tmp_path, "serve", "--host", "0.0.0.0", "--port", str(free_port()), NAVI_API_TOKEN="x" * 15
    )
    assert short.returncode == 2 and "Traceback" not in short.stderr
    assert short.stderr.splitlines() == [
        "navi: refusing to listen on 0.0.0.0 with a 15-character NAVI_API_TOKEN — beyond this machine it "
        "needs at least 16; make one with `openssl rand -hex 32`"
    ]
    doctor = navi_command(tmp_path, "doctor", NAVI_HOST="0.0.0.0", NAVI_API_TOKEN="x" * 15)
    assert "✗ NAVI_HOST=0.0.0.0 reaches beyond this machine, but NAVI_API_TOKEN has only 15 characters" in (
        doctor.stdout
    )
    with socket.socket() as busy:  # 16 characters pass the check: serve goes on to the next one
        busy.bind(("0.0.0.0", 0))
        port = busy.getsockname()[1]
        busy.listen()
        enough = navi_command(
            tmp_path, "serve", "--host", "0.0.0.0", "--port", str(port), NAVI_API_TOKEN="x" * 16
        )
    assert enough.returncode == 2 and "already in use" in enough.stderr, enough.stderr
    on_loopback = navi_command(tmp_path, "doctor", NAVI_API_TOKEN="short")  # this machine only: allowed
    assert "✓ requests need NAVI_API_TOKEN" in on_loopback.stdout
    assert "NAVI_API_TOKEN has only" not in on_loopback.stdout


# --- the cookie's Secure flag ------------------------------------------------------------------------


def sign_in_cookie(
    url: str, *, source: str = "127.0.0.1", verify: bool | ssl.SSLContext = True, **headers: str
) -> str:
    """The Set-Cookie header of a right sign-in sent from the local address `source`."""
    transport = httpx.HTTPTransport(local_address=source, verify=verify)
    with httpx.Client(transport=transport, timeout=10) as http:
        resp = http.post(f"{url}/login", data={"token": TOKEN}, headers=headers, follow_redirects=False)
    assert resp.status_code == 303, resp.text
    return resp.headers["set-cookie"]


def test_the_cookie_is_secure_only_when_a_trusted_proxy_says_https(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Navi listens on 127.0.0.1 behind a proxy at 127.0.0.1; 127.0.0.2 is a client that reaches
    the port directly and pretends to be behind HTTPS."""
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN, navi_trusted_proxies="127.0.0.1") as navi:
        proxied = {"X-Forwarded-For": "203.0.113.9"}
        assert "Secure" in sign_in_cookie(navi.url, **proxied, **{"X-Forwarded-Proto": "https"})
        assert "Secure" in sign_in_cookie(navi.url, **{"X-Forwarded-Proto": "HTTPS, http"})
        assert "Secure" not in sign_in_cookie(navi.url, **proxied, **{"X-Forwarded-Proto": "http"})
        assert "Secure" not in sign_in_cookie(navi.url, **proxied)
        untrusted = sign_in_cookie(navi.url, source="127.0.0.2", **{"X-Forwarded-Proto": "https"})
        assert "HttpOnly" in untrusted and "Secure" not in untrusted
        # A cookie Navi does not know is deleted with the refusal, Secure like the one it replaces.
        for source, secure in (("127.0.0.1", True), ("127.0.0.2", False)):
            transport = httpx.HTTPTransport(local_address=source)
            with httpx.Client(transport=transport, base_url=navi.url) as http:
                refused = http.get(
                    "/sessions", headers={"Cookie": f"{COOKIE}=stale", "X-Forwarded-Proto": "https"}
                )
            assert refused.status_code == 401
            assert refused.headers["set-cookie"].startswith(f"{COOKIE}=;")
            assert ("Secure" in refused.headers["set-cookie"]) is secure


class _TlsServer(ThreadedServer):
    """Navi served over HTTPS itself (uvicorn's own TLS), with a certificate made for the test."""

    def __init__(self, app: object, cert: Path, key: Path) -> None:
        super().__init__(app, name="navi-tls", websockets=True, lifespan=True)
        self.cert, self.key = cert, key

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def config(self) -> uvicorn.Config:
        config = super().config()
        config.ssl_certfile, config.ssl_keyfile = str(self.cert), str(self.key)
        return config


def test_the_cookie_is_secure_over_https_itself(tmp_path: Path, fake_server: FakeModelServer) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    settings = load_settings(
        db_path=str(tmp_path / "navi.db"),
        session_files_dir=str(tmp_path / "session_files"),
        tools_dir=str(tmp_path / "tools"),
        ollama_host=fake_server.url,
        log_level="WARNING",
        navi_api_token=TOKEN,
    )
    navi = LiveNavi(settings)
    navi.server = _TlsServer(navi.app, cert, key)
    navi.server.start()
    try:
        cookie = sign_in_cookie(navi.url, verify=ssl.create_default_context(cafile=str(cert)))
        assert "Secure" in cookie and "HttpOnly" in cookie
    finally:
        navi.server.stop()
