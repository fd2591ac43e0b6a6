"""The `browser` tool on the page: its tool card shows the page's screenshot, title and address; the
debug panel shows the elements the model saw. A live Navi drives its own Chromium (the tool's) to a
page served by the test; its guard allows exactly that server's address and port."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.helpers.browser_pages import PageServer
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import (
    open_app,
    reload,
    send,
    session_id,
    wait_idle,
    wait_ready,
)

pytestmark = pytest.mark.browser


def test_the_tool_card_shows_the_page_and_the_debug_panel_its_elements(
    navi_page: tuple[LiveNavi, Page], pages: PageServer, fake_server: FakeModelServer
) -> None:
    _navi, page = navi_page
    login = pages.local("/login")
    use_script(fake_server).turn(
        Reply(tool_calls=[ScriptedCall("browser", {"action": "open", "url": login})]),
        Reply(text="The sign-in page is open."),
    )
    open_app(page)
    send(page, "open my shop's sign-in page")
    expect(page.locator("article.turn").last).to_contain_text("The sign-in page is open.")
    wait_idle(page)
    card = page.locator("details.tool[data-tool='browser']")
    expect(card).to_have_count(1)
    expect(card.locator(".browser-page figcaption")).to_have_text(f"Sign in — {login}")
    shot = card.locator("img.browser-shot")
    expect(shot).to_have_attribute("alt", "Screenshot of Sign in")
    assert (shot.get_attribute("src") or "").startswith("data:image/jpeg;base64,")
    page.locator("details.steps > summary").click()  # the turn's steps: their cards are drawn open
    expect(shot).to_be_visible()
    assert shot.evaluate("img => img.naturalWidth") == 640  # decoded: a real picture of the page

    # Read back from the history: the title and address stay; the screenshot was the live frame's.
    reload(page)
    kept = page.locator("details.tool[data-tool='browser'] .browser-page")
    expect(kept.locator("figcaption")).to_have_text(f"Sign in — {login}")
    expect(kept.locator("img")).to_have_count(0)

    page.goto(f"/debug?session={session_id(page)}")
    wait_ready(page)
    seen = page.locator("#debug-messages .browser-elements")
    expect(seen).to_have_count(1)
    expect(seen.locator("pre")).to_have_text(
        '[1] input "User name"\n[2] input[password] "Password" (password field)\n'
        '[3] button "Sign in" (submits the form: POST)'
    )
