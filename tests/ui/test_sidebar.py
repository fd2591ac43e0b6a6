"""The session list: order, pin, rename in place, delete asked in a dialog of the page (never the
browser's prompt or confirm), export; drafts that become a session only with their first message;
a row's "⋯" button beside the title, not over it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import FloatRect, Locator, Page, expect

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, send, session_id, wait_idle

pytestmark = pytest.mark.browser


def names(page: Page) -> list[str]:
    return [n.strip() for n in page.locator("#sessions .session-name").all_inner_texts()]


def row_action(page: Page, title: str, action: str) -> Locator:
    """A row's action, as a mouse user reaches it: pointing at the row, its "⋯" button, the item."""
    row = page.locator("#sessions .session").filter(has=page.locator(".session-name", has_text=title))
    row.hover()
    row.get_by_role("button", name=f"More: {title}").click()
    menu = page.get_by_role("menu", name=f"More: {title}")
    expect(menu).to_be_visible()
    return menu.get_by_role("menuitem", name=action)


def test_sessions_are_listed_pinned_first_and_can_be_managed(
    page: Page, navi: LiveNavi, tmp_path: Path
) -> None:
    with navi.client() as http:
        ids = {}
        for name in ("Alpha", "Bravo", "Charlie"):
            ids[name] = http.post("/sessions", json={"name": name}).json()["session_id"]
            time.sleep(0.02)  # distinct last_active
    browser_dialogs: list[str] = []
    page.on("dialog", lambda d: (browser_dialogs.append(d.message), d.dismiss()))
    open_app(page)
    expect(page.locator("#sessions .session")).to_have_count(3)
    assert names(page) == ["Charlie", "Bravo", "Alpha"]  # most recently active first

    # Pin the oldest: it moves to the top and is marked.
    row_action(page, "Alpha", "Pin").click()
    expect(page.locator("#sessions .session").first).to_contain_text("Alpha")
    expect(page.locator("#sessions .session").first.locator(".pinned-mark")).to_have_count(1)
    assert names(page) == ["Alpha", "Charlie", "Bravo"]
    with navi.client() as http:
        assert http.get(f"/sessions/{ids['Alpha']}").json()["pinned"] is True
    row_action(page, "Alpha", "Unpin").click()
    expect(page.locator("#sessions .session").first).to_contain_text("Charlie")

    # Rename in place: the name becomes a text box; Escape keeps it, Enter saves; the header follows.
    page.locator(f'#sessions li[data-id="{ids["Bravo"]}"] .session-open').click()
    expect(page.locator("#session-title")).to_have_text("Bravo")
    row_action(page, "Bravo", "Rename").click()
    box = page.get_by_role("textbox", name="New name for Bravo (empty: Navi names it)")
    expect(box).to_be_focused()
    expect(box).to_have_value("Bravo")
    box.fill("Not this")
    box.press("Escape")
    expect(page.locator(f'#sessions li[data-id="{ids["Bravo"]}"] .session-name')).to_have_text("Bravo")
    row_action(page, "Bravo", "Rename").click()
    box.fill("Packing list")
    box.press("Enter")
    expect(page.locator(f'#sessions li[data-id="{ids["Bravo"]}"] .session-name')).to_have_text("Packing list")
    expect(page.locator("#session-title")).to_have_text("Packing list")
    with navi.client() as http:
        assert http.get(f"/sessions/{ids['Bravo']}").json()["name"] == "Packing list"

    # Delete asks first, in the page's own dialog: Cancel keeps it, Delete removes it for good.
    row_action(page, "Charlie", "Delete").click()
    question = page.get_by_role("dialog", name="Delete this conversation?")
    expect(question).to_contain_text("“Charlie” and its uploaded files will be deleted")
    expect(question).to_contain_text("cannot be undone")
    expect(question.get_by_role("button", name="Cancel")).to_be_focused()  # Enter does the safe thing
    question.get_by_role("button", name="Cancel").click()
    expect(question).to_have_count(0)
    expect(page.locator("#sessions .session")).to_have_count(3)
    row_action(page, "Charlie", "Delete").click()
    question.get_by_role("button", name="Delete").click()
    expect(page.locator("#sessions .session")).to_have_count(2)
    with navi.client() as http:
        assert http.get(f"/sessions/{ids['Charlie']}").status_code == 404

    # Deleting the open session returns to the start page.
    row_action(page, "Packing list", "Delete").click()
    question.get_by_role("button", name="Delete").click()
    expect(page.locator("#empty-state")).to_be_visible()
    expect(page.locator("#session-title")).to_have_text("Navi")

    # Export downloads the session-archive/v1 document.
    with page.expect_download() as info:
        row_action(page, "Alpha", "Export archive (JSON)").click()
    download = info.value
    assert download.suggested_filename.startswith("navi-Alpha-") and download.suggested_filename.endswith(
        ".json"
    )
    path = tmp_path / "export.json"
    download.save_as(path)
    archive = json.loads(path.read_text())
    assert archive["schema_version"] == "session-archive/v1" and archive["session"]["name"] == "Alpha"
    assert browser_dialogs == []  # no window.prompt, confirm or alert anywhere


def session_count(navi: LiveNavi) -> int:
    with navi.client() as http:
        return len(http.get("/sessions").json())


def test_new_conversation_is_a_draft_until_its_first_message(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Hello, and welcome.")
    with navi.client() as http:
        profiles = http.get("/agents/profiles").json()
    assert len(profiles) >= 2
    other = profiles[1]
    created: list[str] = []
    page.on(
        "request",
        lambda r: created.append(r.url) if r.method == "POST" and r.url.endswith("/sessions") else None,
    )

    # First visit, nothing yet: the page is a draft, and loading it created nothing.
    open_app(page)
    expect(page.locator("#empty-state")).to_be_visible()
    expect(page.locator("#input")).to_be_focused()
    page.locator("#profile-picker").select_option(other["id"])  # the draft's profile, in the header
    expect(page.locator("#model-name")).to_have_text(other["model"])

    # "New conversation" three times: still one draft, no session, nothing in the list.
    for _ in range(3):
        page.get_by_role("button", name="New conversation", exact=True).click()
        expect(page.locator("#empty-state")).to_be_visible()
        expect(page.locator("#input")).to_be_focused()
    page.wait_for_timeout(300)  # room for any request the clicks might have made
    assert created == [] and session_count(navi) == 0
    expect(page.locator("#sessions .session")).to_have_count(0)
    assert "#/s/" not in page.url

    # The first message creates the session (with the picked profile), then sends.
    send(page, "First words")
    sid = session_id(page)
    wait_idle(page)
    expect(page.locator("#sessions .session")).to_have_count(1)
    expect(page.locator(f'#sessions li[data-id="{sid}"]')).to_have_class("session current")
    expect(page.locator("#profile-picker")).to_have_value(other["id"])
    assert len(created) == 1 and session_count(navi) == 1
    with navi.client() as http:
        detail = http.get(f"/sessions/{sid}").json()
    assert detail["profile_id"] == other["id"]
    assert [(m["role"], m["content"]) for m in detail["messages"]] == [
        ("user", "First words"),
        ("assistant", "Hello, and welcome."),
    ]

    # From an open conversation, "New conversation" leaves it as it is and opens a draft.
    page.get_by_role("button", name="New conversation", exact=True).click()
    expect(page.locator("#empty-state")).to_be_visible()
    expect(page.locator("#session-title")).to_have_text("Navi")
    expect(page.locator("#sessions .session.current")).to_have_count(0)
    page.wait_for_timeout(300)
    assert len(created) == 1 and session_count(navi) == 1

    # POST /sessions itself still creates one at once (the API is unchanged).
    with navi.client() as http:
        assert http.post("/sessions", json={"name": "From the API"}).status_code == 201
    assert session_count(navi) == 2

    # An unknown session in the address bar is explained, not a blank page.
    page.goto("/#/s/00000000-0000-0000-0000-000000000000")
    expect(page.locator("#toast")).to_contain_text("no longer exists")
    expect(page.locator("#empty-state")).to_be_visible()


def overlap(a: FloatRect, b: FloatRect) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_row_actions_sit_beside_the_title_not_over_it(page: Page, navi: LiveNavi) -> None:
    title = "A very long conversation title about planning the summer trip to the mountains and the sea"
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": title}).json()["session_id"]
    open_app(page)
    row = page.locator(f'#sessions li[data-id="{sid}"]')
    name, meta = row.locator(".session-name"), row.locator(".session-meta")
    actions = row.locator(".session-actions")

    def check_beside() -> None:
        expect(actions).to_be_visible()
        name_box, meta_box = name.bounding_box(), meta.bounding_box()
        assert name_box and meta_box
        buttons = actions.get_by_role("button")
        expect(buttons).to_have_count(1)  # one "⋯" button: its menu holds pin, rename, export, delete
        box = buttons.first.bounding_box()
        assert box and not overlap(box, name_box) and not overlap(box, meta_box), (box, name_box)
        # The title gives way with an ellipsis instead of running under the buttons.
        assert name.evaluate("(n) => n.scrollWidth > n.clientWidth")
        assert name.evaluate("(n) => getComputedStyle(n).textOverflow") == "ellipsis"

    page.mouse.move(900, 400)  # away from the list: the whole row is the title's
    resting = name.bounding_box()
    row.hover()
    check_beside()
    hovered = name.bounding_box()
    assert resting and hovered and hovered["width"] < resting["width"]

    # With the keyboard: focusing the row shows the actions the same way.
    page.mouse.move(900, 400)
    row.locator(".session-open").focus()
    check_beside()
