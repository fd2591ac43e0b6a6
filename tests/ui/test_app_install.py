"""The page as an app: Chromium reports it installable (manifest, icons, service worker), it opens
without Navi from the cached shell and says Navi is not reachable, and on a phone (390×844) an
approval is answered by touch with the list's drawer over the chat."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect

from navi.api.security import COOKIE
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PHONE,
    Watched,
    open_app,
    open_context,
    send,
    wait_idle,
    wait_ready,
)

pytestmark = pytest.mark.browser

CONTROLLED = "navigator.serviceWorker.ready.then(() => navigator.serviceWorker.controller !== null)"


def wait_for_worker(page: Page) -> None:
    """The service worker is active and controls the page (it claims open pages when it starts).
    Asked in a loop: the page's policy forbids the eval that `wait_for_function` needs."""
    for _ in range(150):
        if page.evaluate(CONTROLLED):
            return
        page.wait_for_timeout(100)
    raise AssertionError("the service worker never took the page")


def test_chromium_reports_the_page_installable(
    playwright: Playwright, navi: LiveNavi, tmp_path: Path
) -> None:
    # A browser profile on disk: Chromium never offers to install from an incognito window, which
    # is what the other tests' contexts are.
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        base_url=navi.url,
    )
    try:
        context.add_cookies([{"name": COOKIE, "value": navi.app.state.access.new_session(), "url": navi.url}])
        page = open_app(context.new_page())
        wait_for_worker(page)
        cdp = context.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["errors"] == [], manifest["errors"]
        assert manifest["url"].endswith("/manifest.webmanifest")
        assert '"name": "Navi"' in manifest["data"]
        assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
        # Every icon the manifest names loads without the sign-in the page's other files need.
        for size in ("192", "512"):
            icon = playwright.request.new_context(base_url=navi.url).get(f"/static/icons/navi-{size}.png")
            assert icon.ok and icon.headers["content-type"] == "image/png"
    finally:
        context.close()


def test_the_page_opens_without_navi_and_says_so(browser: Browser, navi: LiveNavi) -> None:
    context, _ = open_context(browser, navi, service_workers="allow")  # the other tests block it
    try:
        page = open_app(context.new_page())
        wait_for_worker(page)
        navi.server.stop()  # Navi is not running any more; the browser still has the page's address
        page.reload()
        wait_ready(page)
        expect(page.locator(".sidebar .brand")).to_have_text("Navi")
        light = page.locator("#model-status")
        expect(light).to_have_attribute("data-state", "offline")
        expect(light).to_contain_text("Navi unreachable")
        expect(page.locator("#input")).to_be_visible()
    finally:
        context.close()


def on_screen(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= PHONE["width"] + 1 and box["y"] + box["height"] <= PHONE["height"] + 1
    return box


@pytest.mark.navi(navi_approval_mode="smart", planning_enabled=False)
def test_an_approval_on_a_phone_with_the_drawer(
    phone: tuple[BrowserContext, Watched], fake_server: FakeModelServer, tmp_path: Path
) -> None:
    context, _ = phone
    target = tmp_path / "made-on-the-phone"
    use_script(fake_server).turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {target}"})]),
        Reply(text="Made it."),
    )
    page = open_app(context.new_page())
    send(page, "Make the file")
    card = page.locator("article.turn details.tool").first
    allow = card.get_by_role("button", name="Allow")
    expect(allow).to_be_visible()
    allow.scroll_into_view_if_needed()
    box = on_screen(page, "article.turn details.tool >> nth=0 >> .approval")
    assert box["width"] >= 300  # the card uses the phone's width
    button = allow.bounding_box()
    assert button is not None and button["height"] >= 32, button  # big enough for a finger

    # The list's drawer opens over the chat while Navi waits; the screenshot shows both.
    page.locator("#open-sidebar").tap()
    expect(page.locator("#sidebar")).to_have_class("sidebar open")
    page.wait_for_timeout(500)  # it slides in
    on_screen(page, "#sidebar")
    shot = page.screenshot(path=str(tmp_path / "phone-drawer-approval.png"))
    assert len(shot) > 10_000  # a real picture of the page, not an empty one
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).not_to_have_class("sidebar open")

    allow.tap()
    expect(page.locator("article.turn").last.locator(".markdown.text")).to_have_text("Made it.")
    wait_idle(page)
    assert target.exists()
