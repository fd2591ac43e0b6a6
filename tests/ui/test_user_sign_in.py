"""A user of `navi users add` signs in at /login with their own token, as a person would: the page
shows only their sessions and answers them; once `navi users remove` ran, a reload lands on /login.
A page whose sign-in signs out elsewhere goes to /login at once, and leaves no history in the
browser's cache."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from playwright.sync_api import Error as PlaywrightError

from navi.testing.fake_server import FakeModelServer
from tests.helpers.cli import run_navi
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_context, reload, send, session_id, wait_idle, wait_ready

pytestmark = pytest.mark.browser


def users(navi: LiveNavi, *args: str) -> str:
    """The real `navi users` command, as a process, on the running server's database."""
    result = run_navi(Path(navi.settings.db_path).parent, "users", *args, env={"LOG_LEVEL": "WARNING"})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_user_signs_in_sees_only_their_sessions_and_loses_the_page_when_removed(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    alice, bob = users(navi, "add", "alice"), users(navi, "add", "bob")
    with navi.client(anonymous=True, headers={"Authorization": f"Bearer {bob}"}) as as_bob:
        assert as_bob.post("/sessions", json={"name": "Bob's secret plans"}).status_code == 201
    with navi.client() as owner:
        assert owner.post("/sessions", json={"name": "The owner's notes"}).status_code == 201
    script = use_script(fake_server)
    script.turn("Hello Alice, only you see this.")

    context, watched = open_context(browser, navi, signed_in=False)
    page = context.new_page()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    page.get_by_label("Access token").fill(alice)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/$"))
    wait_ready(page)
    expect(page.locator("#sessions .session")).to_have_count(0)  # neither bob's nor the owner's

    send(page, "hello")  # REST and the WebSocket, with alice's cookie
    sid = session_id(page)
    wait_idle(page)
    expect(page.locator("article.turn .markdown.text")).to_have_text("Hello Alice, only you see this.")
    expect(page.locator("#sessions .session")).to_have_count(1)
    expect(page.locator(f'#sessions li[data-id="{sid}"]')).to_have_count(1)
    expect(page.locator("#sessions")).not_to_contain_text("Bob's secret plans")
    with navi.client(anonymous=True, headers={"Authorization": f"Bearer {alice}"}) as as_alice:
        assert [s["id"] for s in as_alice.get("/sessions").json()] == [sid]  # the page made it as alice

    users(navi, "remove", "alice")
    try:
        page.reload()
    except PlaywrightError as exc:  # the page went to /login by itself first (its socket was closed)
        assert "ERR_ABORTED" in str(exc), exc
    expect(page).to_have_url(re.compile(r"/login(#.*)?$"))  # the browser keeps the page's #fragment
    expect(page.get_by_label("Access token")).to_be_visible()
    assert not [c for c in context.cookies() if c["name"].startswith("navi")]  # told to drop it
    context.close()
    assert watched.errors == [] and watched.foreign == []


def _signed_in_page_with_history(browser: Browser, navi: LiveNavi, fake_server: FakeModelServer) -> Any:
    """A signed-in page with a conversation open (its socket open), and the history requests it made."""
    use_script(fake_server).turn("The safe's combination is 31-7-42.")
    context, watched = open_context(browser, navi)
    page = context.new_page()
    history: list[str] = []
    page.on(
        "request", lambda r: history.append(r.url) if r.method == "GET" and "/sessions" in r.url else None
    )
    page.goto("/")
    wait_ready(page)
    send(page, "what is the safe's combination?")
    sid = session_id(page)
    wait_idle(page)
    reload(page)  # the history read again, from Navi
    expect(page.locator("article.turn .markdown.text")).to_have_text("The safe's combination is 31-7-42.")
    return context, watched, page, [url for url in history if sid in url]


def _sign_out_elsewhere(context: Any, navi: LiveNavi) -> None:
    """The same sign-in signs out through another client (another window's Sign out)."""
    answer = context.request.post("/logout", headers={"Origin": navi.url}, max_redirects=0)
    assert answer.status == 303


def test_signing_out_elsewhere_takes_the_open_page_to_the_sign_in_page(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    context, watched, page, _history = _signed_in_page_with_history(browser, navi, fake_server)
    opened: list[str] = []
    page.on("websocket", lambda ws: opened.append(ws.url))
    _sign_out_elsewhere(context, navi)
    # Its socket is closed with 4401: the page goes to /login at once, no reload, no reconnecting.
    expect(page).to_have_url(re.compile(r"/login(#.*)?$"))
    expect(page.get_by_label("Access token")).to_be_visible()
    page.wait_for_timeout(1000)
    assert opened == [], "the page tried to reconnect a signed-out socket"
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_after_signing_out_the_history_is_not_in_the_browsers_cache(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    context, _watched, page, history = _signed_in_page_with_history(browser, navi, fake_server)
    assert history, "the page read no history"
    _sign_out_elsewhere(context, navi)
    expect(page).to_have_url(re.compile(r"/login(#.*)?$"))
    for url in history:  # from the cache if it is there at all, stale or not
        got = page.evaluate(
            "async (url) => { const r = await fetch(url, {cache: 'force-cache'});"
            " return [r.status, await r.text()]; }",
            url,
        )
        assert got[0] == 401 and "31-7-42" not in got[1], (url, got)
    context.close()
