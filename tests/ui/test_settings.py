"""The settings panel: remembered "Always" answers seen and forgotten, signing out, and the theme
(the system's light or dark one by default, or the one picked, kept in this browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from navi.api.security import COOKIE
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, open_context, reload, send, wait_idle, wait_ready
from tests.ui.test_debug_and_access import contrast

pytestmark = pytest.mark.browser


def terminal(command: str) -> Reply:
    return Reply(tool_calls=[ScriptedCall("terminal", {"command": command})])


@pytest.mark.navi(navi_approval_mode="smart", planning_enabled=False)
def test_a_remembered_answer_is_forgotten_from_the_page(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    use_script(fake_server).turn(
        terminal(f"touch {first}"), Reply(text="Made it."), terminal(f"touch {second}"), Reply(text="Again.")
    )
    open_app(page)
    send(page, "Make a file")
    page.locator("details.tool").get_by_role("button", name="Always").click()
    wait_idle(page)

    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_role("dialog", name="Settings")
    item = dialog.locator(".remembered-item")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("terminal: touch")
    item.get_by_role("button", name="Forget: terminal: touch").click()
    status = dialog.locator("#settings-status")
    expect(status).to_have_text("Forgotten: Navi asks again before terminal: touch.")
    expect(item).to_have_count(0)
    expect(dialog.locator("#remembered-empty")).to_be_visible()
    with navi.client() as http:
        assert http.get("/approvals/remembered").json() == []
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # The same program asks again.
    send(page, "Another file")
    expect(page.locator("article.turn").last.get_by_role("button", name="Allow")).to_be_visible()


def test_sign_out_ends_the_sign_in(browser: Browser, navi: LiveNavi) -> None:
    context, watched = open_context(browser, navi, signed_in=False)
    page = context.new_page()
    page.goto(f"/login?token={navi.token}")  # as after following the link `navi serve` prints
    wait_ready(page)
    cookie = next(c for c in context.cookies() if c["name"] == COOKIE)
    page.get_by_role("button", name="Settings").click()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login")
    expect(page.get_by_label("Access token")).to_be_visible()
    page.goto("/")
    page.wait_for_url("**/login")  # signed out: the page asks again

    # The old cookie (a copy of it too) is revoked on the server, not just dropped by this browser.
    with navi.client(anonymous=True, cookies={COOKIE: cookie["value"]}) as http:
        assert http.get("/sessions").status_code == 401
    context.close()
    assert watched.errors == [] and watched.foreign == []


def background(page: Page) -> str:
    return str(page.evaluate("() => getComputedStyle(document.body).backgroundColor"))


WHITE, DARK = "rgb(255, 255, 255)", "rgb(15, 20, 25)"


def test_the_theme_follows_the_system_until_one_is_picked(browser: Browser, navi: LiveNavi) -> None:
    with navi.client() as http:
        http.post("/sessions", json={"name": "Colours"})
    context, watched = open_context(browser, navi, color_scheme="light")
    page = open_app(context.new_page())
    assert background(page) == WHITE  # a light system: the light theme, with nothing picked
    for label, fg_sel, bg_sel in [
        ("body", "body", "body"),
        ("muted meta", "#sessions .session-meta", ".sidebar"),
        ("primary button", "#new-session-button", "#new-session-button"),
        ("model name", "#model-name", "body"),
    ]:
        fg = page.locator(fg_sel).first.evaluate("(n) => getComputedStyle(n).color")
        bg = page.locator(bg_sel).first.evaluate("(n) => getComputedStyle(n).backgroundColor")
        if bg == "rgba(0, 0, 0, 0)":
            bg = background(page)
        assert contrast(fg, bg) >= 4.5, f"{label}: {fg} on {bg}"

    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_role("dialog", name="Settings")
    expect(dialog.get_by_role("radio", name="System")).to_be_checked()
    dialog.get_by_role("radio", name="Dark").check()
    assert background(page) == DARK
    reload(page)  # kept in this browser, applied before the page is drawn
    assert background(page) == DARK
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"

    page.get_by_role("button", name="Settings").click()
    dialog.get_by_role("radio", name="System").check()
    assert background(page) == WHITE
    context.close()

    # A dark system with Light picked.
    context, _ = open_context(browser, navi, color_scheme="dark")
    page = open_app(context.new_page())
    assert background(page) == DARK
    page.get_by_role("button", name="Settings").click()
    page.get_by_role("dialog", name="Settings").get_by_role("radio", name="Light").check()
    assert background(page) == WHITE
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_the_model_list_is_shown_with_each_models_state(page: Page, navi: LiveNavi) -> None:
    """Without MODELS_FILE the list is `.env`'s one model, ready on the (fake) server."""
    open_app(page)
    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_role("dialog", name="Settings")
    item = dialog.locator(".model-item")
    expect(item).to_have_count(1)
    expect(item).to_have_attribute("data-model", "default")
    expect(item).to_contain_text("ollama · gemma4:e2b-it-q8_0")
    expect(item.locator(".model-state")).to_have_text(" — ready")
    expect(dialog.locator("#models-chains")).to_contain_text("no MODELS_FILE")
