"""Signing in to a site from the page: the Skills dialog's viewer shows Navi's own headless
Chromium (the browser tool's, on the server) over /ws/browser/viewer; clicks on its picture and
keys typed at it reach that browser; Save keeps the cookies as a named sign-in.

The site is the test's page server (its login sets a cookie); Navi's guard allows exactly its
address and port. Where to click is measured in the test's own Chromium on the same page at the
viewer's size (1280 × 800), then scaled to the picture as the page shows it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.helpers.browser_pages import PageServer
from tests.server_helpers import LiveNavi
from tests.ui.browser import open_app

pytestmark = pytest.mark.browser


def centres(browser: Browser, url: str, *selectors: str) -> list[tuple[float, float]]:
    """Where each element's centre is on `url` in a 1280 × 800 viewport (the viewer's)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(url)
    out = []
    for selector in selectors:
        box = page.locator(selector).bounding_box()
        assert box is not None
        out.append((box["x"] + box["width"] / 2, box["y"] + box["height"] / 2))
    context.close()
    return out


def test_signing_in_to_a_site_through_the_viewer_keeps_a_named_sign_in(
    navi_page: tuple[LiveNavi, Page], pages: PageServer, browser: Browser
) -> None:
    navi, page = navi_page
    login = pages.local("/login")
    user_box, password_box = centres(browser, login, "#u", "#p")
    open_app(page, "/")
    page.locator("#open-skills").click()
    dialog = page.get_by_role("dialog", name="Skills")
    dialog.get_by_label("Name", exact=True).fill("shop")
    dialog.get_by_label("Sign-in page").fill(login)
    dialog.get_by_role("button", name="Open in Navi's browser").click()
    screen = dialog.locator("#viewer-screen")
    expect(screen).to_be_visible()
    expect(dialog.locator("#viewer-address")).to_have_text(f"Sign in — {login}")

    def click(point: tuple[float, float]) -> None:
        shown = screen.bounding_box()
        assert shown is not None
        screen.click(position={"x": point[0] * shown["width"] / 1280, "y": point[1] * shown["height"] / 800})

    click(user_box)
    page.keyboard.type("alice")
    click(password_box)
    page.keyboard.type("s3cret")
    page.keyboard.press("Enter")  # the form is sent by Navi's browser
    expect(dialog.locator("#viewer-address")).to_have_text(
        f"Account — {pages.local('/account')}", timeout=30_000
    )
    assert {"path": "/login", "user": "alice", "password": "s3cret"} in pages.posts

    dialog.get_by_role("button", name="Save sign-in").click()
    expect(dialog.locator("#skills-status")).to_have_text("Saved the sign-in shop (127.0.0.1).")
    expect(screen).to_be_hidden()
    signins = dialog.locator("#signin-list li")
    expect(signins).to_have_count(1)
    expect(signins.first).to_contain_text("shop")
    kept = Path(navi.settings.navi_browser_profiles_dir) / "local" / "shop.json"
    state = json.loads(kept.read_text())
    assert {c["name"]: c["value"] for c in state["cookies"]}["sid"] == "alice-session"
    assert "s3cret" not in kept.read_text()
    assert navi.app.state.runtime.browser.pool.sessions == {}  # the viewer's browser is closed
