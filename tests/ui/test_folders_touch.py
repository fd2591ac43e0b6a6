"""Folders on a phone (390×844, touch: Chromium's touch input, as a finger's): a conversation held a
moment and moved by the finger lands in the folder it is lifted over, and back on the dated list; a
swipe scrolls and moves nothing; a folder is renamed from its "⋯" menu — and on a laptop a folder
renamed on one page is renamed on another open page too."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, CDPSession, Locator, Page, expect

from tests.server_helpers import LiveNavi
from tests.ui.browser import Watched, open_app, open_context
from tests.ui.test_organise import LAPTOP, row

pytestmark = pytest.mark.browser
HOLD_MS = 700  # longer than the page's long press (touchdrag.js: 450 ms)


def centre(target: Locator) -> tuple[float, float]:
    box = target.bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


class Finger:
    """One finger on the screen, through Chromium's touch input (pointer events of type touch,
    scrolling and long presses handled by the browser as for a real finger)."""

    def __init__(self, page: Page, cdp: CDPSession) -> None:
        self.page, self.cdp = page, cdp

    def touch(self, kind: str, x: float | None = None, y: float | None = None) -> None:
        points: list[dict[str, Any]] = [] if x is None else [{"x": x, "y": y, "id": 1}]
        self.cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    def drag(self, source: Locator, target: Locator, *, hold_ms: int) -> None:
        (x0, y0), (x1, y1) = centre(source), centre(target)
        self.touch("touchStart", x0, y0)
        self.page.wait_for_timeout(hold_ms)
        steps = 12
        for n in range(1, steps + 1):
            self.touch("touchMove", x0 + (x1 - x0) * n / steps, y0 + (y1 - y0) * n / steps)
        self.touch("touchEnd")


def folder(page: Page, name: str) -> Locator:
    return page.locator("#sessions section.folder").filter(has=page.locator(".folder-label", has_text=name))


def place(navi: LiveNavi, name: str, folder_name: str | None = None) -> str:
    with navi.client() as http:
        sid = str(http.post("/sessions", json={"name": name}).json()["session_id"])
        if folder_name:
            assert http.patch(f"/sessions/{sid}", json={"folder": folder_name}).status_code == 200
        return sid


def folder_of(navi: LiveNavi, sid: str) -> str | None:
    with navi.client() as http:
        return http.get(f"/sessions/{sid}").json()["folder"]  # type: ignore[no-any-return]


def test_a_finger_drags_a_conversation_into_a_folder_and_renames_it(
    phone: tuple[BrowserContext, Watched], navi: LiveNavi
) -> None:
    sourdough = place(navi, "Sourdough starter", "Kitchen")
    packing = place(navi, "Packing list")
    place(navi, "Garden")
    context, _ = phone
    page = open_app(context.new_page())
    finger = Finger(page, context.new_cdp_session(page))
    page.get_by_role("button", name="Show conversations").tap()
    kitchen = folder(page, "Kitchen")
    expect(kitchen.locator(".session")).to_have_count(1)

    # A swipe (no hold) scrolls the list and moves nothing.
    finger.drag(row(page, "Packing list"), kitchen, hold_ms=0)
    page.wait_for_timeout(HOLD_MS)
    expect(page.locator(".drag-ghost")).to_have_count(0)
    assert folder_of(navi, packing) is None

    # Held, then moved: the row is lifted, follows the finger and lands in the folder.
    (x0, y0), (x1, y1) = centre(row(page, "Packing list")), centre(kitchen.locator(".folder-label"))
    finger.touch("touchStart", x0, y0)
    page.wait_for_timeout(HOLD_MS)
    expect(row(page, "Packing list")).to_have_class("session lifted")
    finger.touch("touchMove", (x0 + x1) / 2, (y0 + y1) / 2)
    finger.touch("touchMove", x1, y1)
    expect(kitchen).to_have_class("session-group folder drop-here")
    expect(page.locator(".drag-ghost")).to_contain_text("Packing list")
    finger.touch("touchEnd")
    expect(kitchen.locator(".session")).to_have_count(2)
    expect(page.locator(".drag-ghost")).to_have_count(0)
    assert folder_of(navi, packing) == "Kitchen"
    expect(page.locator("#session-title")).not_to_have_text("Packing list")  # the drop opened nothing

    # And back onto the dated list: out of the folder.
    finger.drag(row(page, "Packing list"), row(page, "Garden"), hold_ms=HOLD_MS)
    expect(kitchen.locator(".session")).to_have_count(1)
    assert folder_of(navi, packing) is None

    # The folder's menu renames it: every conversation in it follows.
    page.get_by_role("button", name="More: folder Kitchen").tap()
    page.get_by_role("menuitem", name="Rename folder").tap()
    ask = page.get_by_role("dialog", name="Rename folder")
    ask.get_by_label("New name for “Kitchen”").fill("Baking")
    ask.get_by_role("button", name="Rename").tap()
    expect(folder(page, "Baking").locator(".session")).to_have_count(1)
    expect(folder(page, "Kitchen")).to_have_count(0)
    assert folder_of(navi, sourdough) == "Baking"


def test_a_folder_renamed_on_one_page_is_renamed_on_another(browser: Browser, navi: LiveNavi) -> None:
    place(navi, "Sourdough starter", "Kitchen")
    place(navi, "Bread", "Kitchen")
    context, watched = open_context(browser, navi, viewport=LAPTOP)
    try:
        page, other = open_app(context.new_page()), open_app(context.new_page())
        expect(folder(other, "Kitchen").locator(".session")).to_have_count(2)
        page.get_by_role("button", name="More: folder Kitchen").click()
        page.get_by_role("menuitem", name="Rename folder").click()
        ask = page.get_by_role("dialog", name="Rename folder")
        expect(ask.get_by_label("New name for “Kitchen”")).to_have_value("Kitchen")
        ask.get_by_label("New name for “Kitchen”").fill("Baking")
        ask.get_by_label("New name for “Kitchen”").press("Enter")
        expect(folder(page, "Baking").locator(".session")).to_have_count(2)
        expect(folder(other, "Baking").locator(".session")).to_have_count(2)  # no reload
        expect(folder(other, "Kitchen")).to_have_count(0)
        # A folder made on the page, still empty, is renamed there.
        page.locator("#new-folder").click()
        made = page.get_by_role("dialog", name="New folder")
        made.get_by_label("Its name").fill("Trips")
        made.get_by_role("button", name="Create").click()
        page.get_by_role("button", name="More: folder Trips").click()
        page.get_by_role("menuitem", name="Rename folder").click()
        ask.get_by_label("New name for “Trips”").fill("Travel")
        ask.get_by_role("button", name="Rename").click()
        expect(folder(page, "Travel")).to_contain_text("Drag a conversation here.")
        expect(folder(page, "Trips")).to_have_count(0)
    finally:
        context.close()
    assert watched.errors == [] and watched.foreign == []
