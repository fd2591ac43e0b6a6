"""A user of `navi users add` signs in at /login with their own token, as a person would: the page
shows only their sessions and answers them; once `navi users remove` ran, a reload lands on /login."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from navi.testing.fake_server import FakeModelServer
from tests.helpers.cli import run_navi
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_context, send, session_id, wait_idle, wait_ready

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
    page.reload()
    expect(page).to_have_url(re.compile(r"/login(#.*)?$"))  # the browser keeps the page's #fragment
    expect(page.get_by_label("Access token")).to_be_visible()
    assert not [c for c in context.cookies() if c["name"].startswith("navi")]  # told to drop it
    context.close()
    assert watched.errors == [] and watched.foreign == []
