"""The session list: order, profile picker, pin, rename, delete with confirmation, export."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, expect

from tests.server_helpers import LiveNavi
from tests.ui.browser import open_app, session_id

pytestmark = pytest.mark.browser


def names(page: Page) -> list[str]:
    return [n.strip() for n in page.locator("#sessions .session-name").all_inner_texts()]


def test_sessions_are_listed_pinned_first_and_can_be_managed(
    page: Page, navi: LiveNavi, tmp_path: Path
) -> None:
    with navi.client() as http:
        ids = {}
        for name in ("Alpha", "Bravo", "Charlie"):
            ids[name] = http.post("/sessions", json={"name": name}).json()["session_id"]
            time.sleep(0.02)  # distinct last_active
    open_app(page)
    expect(page.locator("#sessions .session")).to_have_count(3)
    assert names(page) == ["Charlie", "Bravo", "Alpha"]  # most recently active first

    # Pin the oldest: it moves to the top and is marked.
    page.get_by_role("button", name="Pin: Alpha").click()
    expect(page.locator("#sessions .session").first).to_contain_text("Alpha")
    expect(page.locator("#sessions .session").first.locator(".pinned-mark")).to_have_count(1)
    assert names(page) == ["Alpha", "Charlie", "Bravo"]
    with navi.client() as http:
        assert http.get(f"/sessions/{ids['Alpha']}").json()["pinned"] is True
    page.get_by_role("button", name="Unpin: Alpha").click()
    expect(page.locator("#sessions .session").first).to_contain_text("Charlie")

    # Rename through the prompt; the open session's header follows.
    page.locator(f'#sessions li[data-id="{ids["Bravo"]}"] .session-open').click()
    expect(page.locator("#session-title")).to_have_text("Bravo")

    def answer_prompt(dialog: Dialog) -> None:
        assert dialog.type == "prompt" and dialog.default_value == "Bravo"
        dialog.accept("Packing list")

    page.once("dialog", answer_prompt)
    page.get_by_role("button", name="Rename: Bravo").click()
    expect(page.locator(f'#sessions li[data-id="{ids["Bravo"]}"] .session-name')).to_have_text("Packing list")
    expect(page.locator("#session-title")).to_have_text("Packing list")

    # Delete asks first: dismissing keeps it, accepting removes it (and its files) for good.
    page.once("dialog", lambda d: d.dismiss())
    page.get_by_role("button", name="Delete: Charlie").click()
    expect(page.locator("#sessions .session")).to_have_count(3)
    seen: list[str] = []
    page.once("dialog", lambda d: (seen.append(d.message), d.accept()))
    page.get_by_role("button", name="Delete: Charlie").click()
    expect(page.locator("#sessions .session")).to_have_count(2)
    assert "Charlie" in seen[0] and "cannot be undone" in seen[0]
    with navi.client() as http:
        assert http.get(f"/sessions/{ids['Charlie']}").status_code == 404

    # Deleting the open session returns to the start page.
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Delete: Packing list").click()
    expect(page.locator("#empty-state")).to_be_visible()
    expect(page.locator("#session-title")).to_have_text("Navi")

    # Export downloads the session-archive/v1 document.
    with page.expect_download() as info:
        page.get_by_role("button", name="Export: Alpha").click()
    download = info.value
    assert download.suggested_filename.startswith("navi-Alpha-") and download.suggested_filename.endswith(
        ".json"
    )
    path = tmp_path / "export.json"
    download.save_as(path)
    archive = json.loads(path.read_text())
    assert archive["schema_version"] == "session-archive/v1" and archive["session"]["name"] == "Alpha"


def test_new_conversation_uses_the_picked_profile(page: Page, navi: LiveNavi) -> None:
    with navi.client() as http:
        profiles = http.get("/agents/profiles").json()
    assert len(profiles) >= 2
    other = profiles[1]
    open_app(page)
    expect(page.locator("#profile-picker option")).to_have_count(len(profiles))
    page.locator("#profile-picker").select_option(other["id"])
    page.get_by_role("button", name="New conversation").click()
    sid = session_id(page)
    expect(page.locator("#profile-name")).to_have_text(other["name"])
    expect(page.locator("#input")).to_be_focused()
    with navi.client() as http:
        assert http.get(f"/sessions/{sid}").json()["profile_id"] == other["id"]
    expect(page.locator(f'#sessions li[data-id="{sid}"] .session-meta')).to_contain_text(other["name"])

    # An unknown session in the address bar is explained, not a blank page.
    page.goto("/#/s/00000000-0000-0000-0000-000000000000")
    expect(page.locator("#toast")).to_contain_text("no longer exists")
    expect(page.locator("#empty-state")).to_be_visible()
