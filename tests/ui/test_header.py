"""The header: the open conversation's profile (shown and changed where it is) and its model."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, reload, send, session_id, wait_idle

pytestmark = pytest.mark.browser


def test_the_header_shows_and_changes_the_open_conversations_profile(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("Hello.", "Now as the home profile.")
    with navi.client() as http:
        profiles = {p["id"]: p for p in http.get("/agents/profiles").json()}
        home = http.post("/sessions", json={"profile_id": "smart_home", "name": "Lights"}).json()
    picker = page.locator("#profile-picker")
    model = page.locator("#model-name")

    # A draft shows the profile it will be created with, and the model that will answer.
    open_app(page)
    expect(picker).to_have_value("secretary")
    expect(model).to_have_text(profiles["secretary"]["model"])
    send(page, "Hi")
    sid = session_id(page)
    wait_idle(page)
    expect(picker).to_have_value("secretary")

    # Another conversation shows its own profile — not the one last picked.
    page.locator(f'#sessions li[data-id="{home["session_id"]}"] .session-open').click()
    expect(page.locator("#session-title")).to_have_text("Lights")
    expect(picker).to_have_value("smart_home")

    # Changing it changes the open conversation, on the server, in the list and after a reload.
    page.locator(f'#sessions li[data-id="{sid}"] .session-open').click()
    expect(picker).to_have_value("secretary")
    picker.select_option("smart_home")
    item = page.locator(f'#sessions li[data-id="{sid}"] .session-meta')
    expect(item).to_contain_text(profiles["smart_home"]["name"])
    with navi.client() as http:
        assert http.get(f"/sessions/{sid}").json()["profile_id"] == "smart_home"
    send(page, "Still there?")
    wait_idle(page)
    reload(page)
    expect(picker).to_have_value("smart_home")
    expect(model).to_have_text(profiles["smart_home"]["model"])

    # In a draft the choice is the new conversation's, and it is remembered for the next draft.
    page.get_by_role("button", name="New conversation", exact=True).click()
    expect(picker).to_have_value("secretary")
    picker.select_option("smart_home")
    reload(page)
    expect(picker).to_have_value("smart_home")
    with navi.client() as http:
        assert len(http.get("/sessions").json()) == 2  # picking a profile creates nothing


def test_the_context_gauge_marks_where_compression_starts_and_lists_the_turns(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    from navi.testing.script import Reply

    use_script(fake_server).turn(
        Reply(text="First.", prompt_tokens=1234, completion_tokens=56),
        Reply(text="Second.", prompt_tokens=2345, completion_tokens=67),
    )
    meter = page.locator("#context-meter")
    mark = page.locator("#context-mark")
    open_app(page)
    send(page, "One")
    wait_idle(page)
    send(page, "Two")
    wait_idle(page)
    expect(mark).to_be_visible()  # compression starts at 80% of the window (the default threshold)
    assert mark.evaluate("m => m.style.left") == "80%"
    expect(meter).to_have_attribute("title", re.compile(r"1,234 / 56\n  2,345 / 67$"))  # oldest first
    title = meter.get_attribute("title") or ""
    assert "Earlier messages are summarised from 52,428 tokens (80%)." in title
    reload(page)  # the turns come back from the stored history
    expect(mark).to_be_visible()
    expect(meter).to_have_attribute("title", title)
