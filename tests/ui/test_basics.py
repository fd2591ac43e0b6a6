"""What people expect from a chat page: the list grouped by date and searchable, keyboard shortcuts
(with a "?" list of them), and example prompts on the empty page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Browser, Page, expect

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, open_context, session_id, wait_idle

pytestmark = pytest.mark.browser

# The page's clock (Playwright's, injected): Friday 27 November 2026, noon UTC.
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def session_at(navi: LiveNavi, name: str, last_active: datetime, *, pinned: bool = False) -> str:
    """A session whose last activity was at `last_active` (made through an archive import, which
    keeps the archive's times)."""
    with navi.client() as http:
        made = http.post("/sessions", json={"name": name}).json()["session_id"]
        archive = http.get(f"/sessions/{made}/export").json()
        stamp = last_active.isoformat()
        archive["session"].update(created_at=stamp, last_active=stamp)
        imported = http.post("/sessions/import", json=archive)
        assert imported.status_code in (200, 201), imported.text
        http.delete(f"/sessions/{made}")
        sid = str(imported.json()["session_id"])
        if pinned:
            http.patch(f"/sessions/{sid}/pin", json={"pinned": True})
        return sid


def groups(page: Page) -> list[tuple[str, list[str]]]:
    out = []
    for section in page.locator("#sessions .session-group").all():
        label = section.locator(".group-label").inner_text().strip()
        names = [n.strip() for n in section.locator(".session-name").all_inner_texts()]
        out.append((label.title(), names))
    return out


def test_the_list_is_grouped_by_date_and_searchable(browser: Browser, navi: LiveNavi) -> None:
    session_at(navi, "Taxes 2025", NOW - timedelta(days=90))
    session_at(navi, "Garden plan", NOW - timedelta(days=12))
    session_at(navi, "Birthday gift", NOW - timedelta(days=4))
    session_at(navi, "Train times", NOW - timedelta(days=1))
    session_at(navi, "Shopping list", NOW - timedelta(hours=1))
    session_at(navi, "Recipes", NOW - timedelta(days=40), pinned=True)
    context, watched = open_context(browser, navi, timezone_id="Europe/Berlin")
    page = context.new_page()
    page.clock.set_fixed_time(NOW)  # the page's clock, not the machine's
    open_app(page)
    expect(page.locator("#sessions .session")).to_have_count(6)
    assert groups(page) == [
        ("Pinned", ["Recipes"]),
        ("Today", ["Shopping list"]),
        ("Yesterday", ["Train times"]),
        ("Previous 7 Days", ["Birthday gift"]),
        ("Previous 30 Days", ["Garden plan"]),
        ("August 2026", ["Taxes 2025"]),
    ]

    # Ctrl+K searches: the list narrows as you type, Enter opens the first match, Escape clears.
    page.keyboard.press("Control+k")
    search = page.get_by_role("searchbox", name="Search conversations")
    expect(search).to_be_focused()
    search.press_sequentially("gar")
    assert groups(page) == [("Previous 30 Days", ["Garden plan"])]
    search.fill("nothing like this")
    expect(page.locator("#sessions .no-match")).to_have_text("No conversation matches.")
    search.fill("train")
    search.press("Enter")
    expect(page.locator("#session-title")).to_have_text("Train times")
    search.focus()
    search.press("Escape")
    expect(page.locator("#sessions .session")).to_have_count(6)
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_shortcuts_and_their_list(page: Page, navi: LiveNavi, fake_server: FakeModelServer) -> None:
    use_script(fake_server).turn("Hello.")
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": "Open one"}).json()["session_id"]
    open_app(page, f"/#/s/{sid}")
    expect(page.locator("#session-title")).to_have_text("Open one")

    # "?" (not while typing) lists every shortcut; Escape closes the list.
    page.locator("#input").press_sequentially("a question?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_hidden()  # typed, not a shortcut
    page.locator("#session-title").click()
    page.keyboard.press("?")
    shortcuts = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(shortcuts).to_be_visible()
    for action in ("New conversation", "Search conversations", "Write a message", "This list"):
        expect(shortcuts).to_contain_text(action)
    page.keyboard.press("Escape")
    expect(shortcuts).to_be_hidden()
    page.get_by_role("button", name="Keyboard shortcuts").click()  # also from the sidebar
    expect(shortcuts).to_be_visible()
    page.keyboard.press("Escape")

    # "/" and Shift+Esc put the cursor in the message box.
    page.locator("#session-title").click()
    page.keyboard.press("/")
    expect(page.locator("#input")).to_be_focused()
    expect(page.locator("#input")).to_have_value("a question?")  # the slash was not typed into it
    page.locator("#session-title").click()
    page.keyboard.press("Shift+Escape")
    expect(page.locator("#input")).to_be_focused()

    # Ctrl+Shift+O starts a new conversation (a draft), from anywhere.
    page.keyboard.press("Control+Shift+O")
    expect(page.locator("#empty-state")).to_be_visible()
    expect(page.locator("#session-title")).to_have_text("Navi")
    expect(page.locator("#input")).to_be_focused()


def test_an_example_prompt_starts_a_conversation(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Here is a checklist.")
    open_app(page)
    examples = page.locator("#examples .example")
    expect(examples).to_have_count(4)
    examples.filter(has_text="Make a checklist").click()
    session_id(page)
    asked = "Make a todo checklist for moving house next month"
    expect(page.locator("article.msg.user .bubble")).to_have_text(asked)
    expect(page.locator("article.turn .markdown.text")).to_have_text("Here is a checklist.")
    wait_idle(page)
    assert script.of_kind("turn")[0].last_user_text == asked
    expect(page.locator("#empty-state")).to_be_hidden()
