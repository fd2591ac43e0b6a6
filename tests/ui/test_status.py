"""The header's one status light: it follows the turns (a Retry that is answered turns it green at
once) and Navi itself (while Navi is down it says so, never "Model ready"); a message typed while
Navi is down is drawn as waiting and goes out, once, when Navi is back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from navi.testing.agent_script import AgentScript
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.ui.browser import open_app, open_context, send, session_id, wait_idle

pytestmark = pytest.mark.browser


def test_a_retry_that_is_answered_turns_the_light_green(browser: Browser, tmp_path: Path) -> None:
    port = free_port()  # the model server is not there yet
    fake = FakeModelServer(port=port)
    with live_navi(tmp_path, fake, planning_enabled=False) as navi:
        context, watched = open_context(browser, navi)
        page = open_app(context.new_page())
        light = page.locator("#model-status")
        expect(light).to_have_attribute("data-state", "unreachable")
        send(page, "Hello?")
        error = page.locator(".notice.error")
        expect(error).to_contain_text("Error:")
        expect(light).to_have_attribute("data-state", "unreachable")

        script = AgentScript()
        script.turn("Here now.")
        fake.script = script
        fake.start()  # the model server comes up; the page's next poll is 30 s away
        try:
            error.get_by_role("button", name="Retry").click()
            expect(page.locator("article.turn .markdown.text")).to_have_text("Here now.")
            expect(light).to_have_attribute("data-state", "ready", timeout=3000)
            expect(light).to_have_text("Model ready")
        finally:
            fake.stop()
        context.close()
    assert watched.errors == [] and watched.foreign == []


def restart(navi: LiveNavi, port: int) -> LiveNavi:
    """The same Navi (settings, database, token) started again on the same port."""
    again = LiveNavi(navi.settings)
    again.server.port = port
    again.server.start()
    return again


def test_a_message_typed_while_navi_is_down_goes_out_once_it_is_back(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("First answer.", "Welcome back.")
    port = int(navi.url.rsplit(":", 1)[1])
    open_app(page, f"/login?token={navi.token}")  # a sign-in kept in the database: it outlives a restart
    light = page.locator("#model-status")
    expect(light).to_have_attribute("data-state", "ready")
    send(page, "Hello")
    session_id(page)
    wait_idle(page)

    navi.server.stop()  # Navi goes away (the fixture's stop at the end is then a no-op)
    expect(light).to_have_attribute("data-state", "offline")
    expect(light).to_have_text("Navi unreachable — reconnecting…")
    expect(page.get_by_text("Model ready")).to_have_count(0)

    send(page, "Are you back?")
    waiting = page.locator(".status-line.queued")
    expect(waiting).to_contain_text("goes out as soon as it is back")
    expect(page.locator("article.msg.user.pending .bubble")).to_have_text("Are you back?")
    page.wait_for_timeout(1500)
    expect(page.locator("#toast")).to_be_hidden()

    again = restart(navi, port)
    try:
        expect(page.locator("article.turn").last.locator(".markdown.text")).to_have_text("Welcome back.")
        wait_idle(page)
        expect(light).to_have_attribute("data-state", "ready")
        expect(page.locator("article.msg.user .bubble", has_text="Are you back?")).to_have_count(1)
        expect(page.locator("#toast")).to_be_hidden()
        asked = [r.last_user_text for r in script.of_kind("turn")]
        assert asked.count("Are you back?") == 1, asked
    finally:
        again.server.stop()


def test_stop_takes_back_a_message_waiting_for_navi(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """In the draft view (no socket) too: the message waits, and Stop puts it back into the box."""
    use_script(fake_server)
    open_app(page)
    navi.server.stop()
    send(page, "Never mind")
    expect(page.locator(".status-line.queued")).to_be_visible()
    expect(page.locator("#model-status")).to_have_attribute("data-state", "offline")
    page.locator("#stop").click()
    expect(page.locator(".status-line")).to_have_count(0)
    expect(page.locator("#input")).to_have_value("Never mind")
    expect(page.locator("#input")).to_be_enabled()


def test_a_page_opened_while_navi_was_down_shows_the_profiles_once_it_is_back(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """The page opened while Navi does not answer (the installed app's shell, or a restart under
    it): its first profiles request fails. Once Navi answers again, the profile picker names the
    profiles and the header the model, without a reload (it showed the raw id, "secretary", and no
    model until one). The first request is failed by the browser, as a stopped Navi fails it."""
    asked: list[str] = []

    def first_fails(route: Any) -> None:
        asked.append(route.request.url)
        if len(asked) == 1:
            route.abort("connectionrefused")
        else:
            route.continue_()

    page.route("**/agents/profiles", first_fails)
    open_app(page)
    picker = page.get_by_label("Profile")
    expect(picker.locator("option:checked")).to_have_text("Personal Secretary", timeout=20_000)
    expect(page.locator("#model-name")).not_to_be_empty()
    assert len(asked) >= 2  # read again once Navi answered
