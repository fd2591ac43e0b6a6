"""Users in the browser and the owner's routes (issue 15, item 2's remainder), against a live Navi
with users made by the real `navi users` command:

- `/login` takes a user's token: the cookie acts as that user (their sessions, memory, uploads
  only), for as long as the user holds that token — `navi users remove` ends it at the next request,
  and a new token for the same name does not bring it back. A proxy's token signs nobody in.
- Routes that change Navi for everybody (reloading the tools, resetting the loop counters) are the
  owner's: 403 `owner_only` for anyone else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from navi.api.security import COOKIE, FAILURE_LIMIT
from navi.cli.main import _register, app
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, live_navi

_register()
runner = CliRunner()


def users_cli(navi: LiveNavi, *args: str) -> Any:
    """`navi users ARGS` against the running server's database (SQLite or PostgreSQL)."""
    settings = navi.settings
    env = {"DB_PATH": settings.db_path, "DATABASE_URL": settings.database_url, "LOG_LEVEL": "WARNING"}
    result = runner.invoke(app, ["users", *args], env=env)
    assert result.exit_code == 0, result.output
    return result


def add_user(navi: LiveNavi, name: str, *flags: str) -> str:
    return str(users_cli(navi, "add", name, *flags).stdout.strip())


def login(navi: LiveNavi, token: str) -> httpx.Response:
    with navi.client(anonymous=True) as http:
        return http.post("/login", data={"token": token}, follow_redirects=False)


def sign_in(navi: LiveNavi, token: str) -> str:
    answer = login(navi, token)
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text
    return str(answer.cookies[COOKIE])


def browser(navi: LiveNavi, cookie: str) -> httpx.Client:
    """A client holding only the cookie, sending the page's Origin like the page's scripts do."""
    return navi.client(anonymous=True, cookies={COOKIE: cookie}, headers={"Origin": navi.url})


def bearer(navi: LiveNavi, token: str) -> httpx.Client:
    return navi.client(anonymous=True, headers={"Authorization": f"Bearer {token}"})


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server) as server:
        yield server


def test_a_users_cookie_sees_only_that_users_sessions(navi: LiveNavi) -> None:
    alice, bob = add_user(navi, "alice"), add_user(navi, "bob")
    with bearer(navi, bob) as as_bob:
        bobs = as_bob.post("/sessions", json={"name": "bob's"}).json()["session_id"]
    owners = navi.new_session()
    cookie = sign_in(navi, alice)
    with browser(navi, cookie) as page:
        assert page.get("/sessions").json() == []
        made = page.post("/sessions", json={"name": "alice's"})
        assert made.status_code == 201
        mine = made.json()["session_id"]
        assert [s["id"] for s in page.get("/sessions").json()] == [mine]
        for other in (bobs, owners):
            assert page.get(f"/sessions/{other}").status_code == 404
            assert page.post(f"/sessions/{other}/stop").status_code == 404
        up = page.post(f"/sessions/{mine}/files", files={"file": ("n.txt", b"alice's notes")})
        assert up.status_code == 201
        assert page.post(f"/sessions/{bobs}/files", files={"file": ("n.txt", b"x")}).status_code == 404
        assert page.get("/").status_code == 200  # the page itself
    # What the cookie made is alice's, seen with her token and by nobody else.
    with bearer(navi, alice) as as_alice:
        assert [s["id"] for s in as_alice.get("/sessions").json()] == [mine]
    with bearer(navi, bob) as as_bob:
        assert [s["id"] for s in as_bob.get("/sessions").json()] == [bobs]
    with navi.client() as owner:
        assert [s["id"] for s in owner.get("/sessions").json()] == [owners]


def test_a_removed_user_loses_the_page_at_the_next_request(navi: LiveNavi) -> None:
    alice = add_user(navi, "alice")
    cookie, other = sign_in(navi, alice), sign_in(navi, alice)
    with browser(navi, cookie) as page:
        assert page.get("/sessions").status_code == 200
        users_cli(navi, "remove", "alice")  # while the server runs
        gone = page.get("/sessions")
        assert gone.status_code == 401 and gone.json()["code"] == "unauthorized"
        assert "Max-Age=0" in gone.headers["set-cookie"]  # the browser drops it
    with navi.client(anonymous=True, cookies={COOKIE: other}) as http:
        to_login = http.get("/", follow_redirects=False)
        assert to_login.status_code == 303 and to_login.headers["location"] == "/login"
    # The name again, with a new token: the old sign-ins stay dead, a new one works.
    fresh = add_user(navi, "alice")
    with browser(navi, cookie) as page:
        assert page.get("/sessions").status_code == 401
    with browser(navi, sign_in(navi, fresh)) as page:
        assert page.get("/sessions").status_code == 200
    assert login(navi, alice).status_code == 401  # the removed token signs nobody in either


def test_a_proxy_token_signs_nobody_in_and_is_no_guess(navi: LiveNavi) -> None:
    gate = add_user(navi, "gate", "--proxy")
    for _ in range(FAILURE_LIMIT + 1):  # a real token: refused each time, never locked out
        refused = login(navi, gate)
        assert refused.status_code == 403 and COOKIE not in refused.headers.get("set-cookie", "")
        assert "A proxy&#x27;s token signs nobody in" in refused.text
    with navi.client(anonymous=True) as http:
        via_link = http.get("/login", params={"token": gate}, follow_redirects=False)
    assert via_link.status_code == 403
    assert sign_in(navi, navi.token)  # the owner still signs in from the same address


def test_the_owners_sign_in_is_unchanged(navi: LiveNavi) -> None:
    alice = add_user(navi, "alice")
    with bearer(navi, alice) as as_alice:
        as_alice.post("/sessions")
    owners = navi.new_session()
    cookie = sign_in(navi, navi.token)
    with browser(navi, cookie) as page:
        assert [s["id"] for s in page.get("/sessions").json()] == [owners]
        reloaded = page.post("/agents/tools/reload")
        assert reloaded.status_code == 200 and reloaded.json()["errors"] == []
    assert login(navi, "not-the-token").status_code == 401


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_users_sign_in_survives_a_restart_as_that_user(
    kind: str, tmp_path: Path, fake_server: FakeModelServer, request: pytest.FixtureRequest
) -> None:
    database = {"database_url": request.getfixturevalue("pg_url")} if kind == "postgres" else {}
    with live_navi(tmp_path, fake_server, **database) as navi:
        alice = add_user(navi, "alice")
        with bearer(navi, alice) as as_alice:
            mine = as_alice.post("/sessions").json()["session_id"]
        navi.new_session()  # the owner's
        cookie = sign_in(navi, alice)
    with live_navi(tmp_path, fake_server, **database) as navi:
        with browser(navi, cookie) as page:
            assert [s["id"] for s in page.get("/sessions").json()] == [mine]
        users_cli(navi, "remove", "alice")
        with browser(navi, cookie) as page:
            assert page.get("/sessions").status_code == 401


def test_changing_navi_for_everybody_is_the_owners(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server, navi_loop_monitor=True) as navi:
        alice, gate = add_user(navi, "alice"), add_user(navi, "gate", "--proxy")
        attempts = [
            (bearer(navi, alice), {}),
            (browser(navi, sign_in(navi, alice)), {}),
            (bearer(navi, gate), {"X-User-Id": "bob"}),
        ]
        for client, headers in attempts:
            with client as http:
                refused = http.post("/agents/tools/reload", headers=headers)
                assert refused.status_code == 403, refused.text
                assert refused.json()["code"] == "owner_only"
                assert "only Navi's owner" in refused.json()["detail"]
                assert http.get("/agents/tools", headers=headers).status_code == 200  # reading is anyone's
                assert http.get("/debug/loop", headers=headers).status_code == 200
                reset = http.get("/debug/loop", params={"reset": "true"}, headers=headers)
                assert reset.status_code == 403 and reset.json()["code"] == "owner_only"
        with navi.client() as owner:
            assert owner.post("/agents/tools/reload").status_code == 200
            assert owner.get("/debug/loop", params={"reset": "true"}).status_code == 200
