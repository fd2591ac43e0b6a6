"""The settings panel: remembered "Always" answers seen and forgotten, signing out, and the theme
(the system's light or dark one by default, or the one picked, kept in this browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from navi.api.security import COOKIE
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, talk, use_script
from tests.ui.axe import contrast_violations
from tests.ui.browser import PHONE, open_app, open_context, reload, send, wait_idle, wait_ready
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


ANSWER = (
    "Here is the **plan**, with [a link](https://example.org) and `code`:\n\n"
    "> A quote.\n\n1. Pack\n2. Go\n\n| a | b |\n|---|---|\n| x | y |\n\n```python\nprint('hi')\n```"
)


def test_every_colour_meets_wcag_aa_in_both_themes(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """axe-core's colour-contrast rule finds nothing on the page with a conversation (thinking, a tool
    call, Markdown), with the search's marked hits, and with Settings open — light and dark, on a
    desktop's screen and a phone's."""
    use_script(fake_server).turn(
        Reply(
            thinking="A list first.", tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Go"]})]
        ),
        Reply(text=ANSWER),
    )
    sid, _ = talk(navi, "Zeppelin trip", ["Where did we park the zeppelin?"])
    found: dict[str, list[dict[str, Any]]] = {}
    phone = {"viewport": PHONE, "is_mobile": True, "has_touch": True}
    for size, options in (("desktop", {}), ("phone", phone)):
        # axe is injected as an inline script, which the page's Content-Security-Policy forbids.
        context, watched = open_context(browser, navi, bypass_csp=True, **options)
        page = open_app(context.new_page(), f"/#/s/{sid}")
        expect(page.locator("#messages .markdown table")).to_be_visible()
        page.evaluate(
            "() => { for (const d of document.querySelectorAll('#messages details')) d.open = true; }"
        )
        expect(page.locator("details.tool").first).to_be_visible()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found[f"{size} {scheme} conversation"] = contrast_violations(page)
        if size == "phone":
            page.locator("#open-sidebar").click()
        page.locator("#session-search").fill("zeppelin")
        expect(page.locator("#sessions .hit-snippet mark").first).to_be_visible()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found[f"{size} {scheme} search"] = contrast_violations(page)
        page.locator("#session-search").fill("")
        page.get_by_role("button", name="Settings").click()
        expect(page.get_by_role("dialog", name="Settings")).to_be_visible()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found[f"{size} {scheme} settings"] = contrast_violations(page)
        context.close()
        assert watched.errors == [] and watched.foreign == []
    assert len(found) == 12
    lines = [f"{where}: {v['target']}: {v['summary']}" for where, seen in found.items() for v in seen]
    assert lines == [], "\n".join(lines)


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
