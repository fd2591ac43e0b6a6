"""The page on a phone (390×844, touch): nothing scrolls sideways — the chat with a tool turn and
code, the list, every panel, the debug panel — the list keeps its titles, the schedule form's
choices read on one line each, its text box does not pull up the keyboard, and a panel opened from
the list closes the list under it."""

from __future__ import annotations

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import PHONE, Watched, open_app, send, wait_idle, wait_ready

pytestmark = pytest.mark.browser

# Elements whose right edge is past the screen, outside boxes that scroll their own content (code).
SIDEWAYS = """(width) => {
  const out = [];
  for (const n of document.querySelectorAll("body *")) {
    const box = n.getBoundingClientRect();
    if (!box.width || box.right <= width + 1 || n.closest("pre, .sidebar:not(.open)")) continue;
    const name = `${n.tagName.toLowerCase()}${n.id ? "#" + n.id : ""}.${[...n.classList].join(".")}`;
    out.push(`${name} ends at ${Math.round(box.right)}`);
  }
  return { page: document.scrollingElement.scrollWidth, elements: out.slice(0, 10) };
}"""


def no_sideways_scroll(page: Page, where: str) -> None:
    seen = page.evaluate(SIDEWAYS, PHONE["width"])
    assert seen["page"] <= PHONE["width"] and seen["elements"] == [], (where, seen)


LONG = "Planning the summer trip to the mountains and the sea with the whole family"
CODE = "```python\nprint('a line of code that is much longer than a phone screen is wide, on purpose')\n```"


def test_nothing_scrolls_sideways_on_a_phone(
    phone: tuple[BrowserContext, Watched], navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.plan("1. Make the list\n2. Answer")
    script.turn(
        Reply(
            thinking="A list first.", tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Pack"]})]
        ),
        Reply(text=f"Here it is.\n\n{CODE}\n\n| a | b |\n|---|---|\n| {'x' * 60} | y |"),
    )
    with navi.client() as http:
        http.post("/sessions", json={"name": LONG})
    context, _ = phone
    page = open_app(context.new_page())
    no_sideways_scroll(page, "the empty page")
    # The message box keeps the width of the screen: its buttons go on a line of their own.
    box = page.locator("#input").bounding_box()
    assert box is not None and box["width"] >= 0.8 * PHONE["width"], box
    send_box = page.locator("#send").bounding_box()
    assert send_box is not None and send_box["y"] >= box["y"] + box["height"] - 1, (box, send_box)

    send(page, "Make me a packing list")
    wait_idle(page)
    expect(page.locator("details.steps > summary")).to_contain_text("Planned, used todo")
    no_sideways_scroll(page, "a conversation")
    page.locator("details.steps > summary").tap()  # the steps, opened
    page.locator("details.tool > summary").tap()
    no_sideways_scroll(page, "the steps opened")

    # The closed list casts no shadow over the chat's left edge; the open one does.
    shadow = "() => getComputedStyle(document.getElementById('sidebar')).boxShadow"
    assert page.evaluate(shadow) == "none"

    # The list: one action button per row, so the title keeps the row.
    page.get_by_role("button", name="Show conversations").tap()
    page.wait_for_timeout(300)
    assert page.evaluate(shadow) != "none"
    row = page.locator("#sessions .session").filter(has_text=LONG)
    name = row.locator(".session-name")
    assert name.evaluate("(n) => n.clientWidth") >= 200, "the title should keep most of the row"
    expect(row.get_by_role("button", name=f"More: {LONG}")).to_be_visible()  # touch: always shown
    no_sideways_scroll(page, "the list")

    # Schedules from the list: the list closes under the panel; no keyboard pops up over it.
    page.locator("#open-schedules").tap()
    dialog = page.get_by_role("dialog", name="Schedules")
    expect(dialog).to_be_visible()
    expect(page.locator("#sidebar")).not_to_have_class("sidebar open")
    assert page.evaluate("() => document.activeElement.tagName") != "TEXTAREA"
    no_sideways_scroll(page, "the schedules panel")
    for label in dialog.locator("fieldset > label").all():  # each choice on one line, not wrapped
        height, font = label.evaluate(
            "(n) => [n.getBoundingClientRect().height, parseFloat(getComputedStyle(n).fontSize)]"
        )
        assert height < font * 2.2, (label.inner_text(), height, font)
    page.keyboard.press("Escape")

    page.get_by_role("button", name="Show conversations").tap()
    page.locator("#open-settings").tap()
    expect(page.get_by_role("dialog", name="Settings")).to_be_visible()
    expect(page.locator("#sidebar")).not_to_have_class("sidebar open")
    no_sideways_scroll(page, "the settings panel")
    page.keyboard.press("Escape")

    # The debug panel, on the conversation.
    page.get_by_role("button", name="Show conversations").tap()
    page.get_by_role("link", name="Debug panel").tap()
    wait_ready(page)
    expect(page.locator("#debug-messages .entry").first).to_contain_text("Make me a packing list")
    no_sideways_scroll(page, "the debug panel")
