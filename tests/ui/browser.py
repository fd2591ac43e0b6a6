"""Helpers for driving Navi's page in Debian's Chromium: contexts that watch the page, and actions.

The page is used as a person would: typing, clicking, keys, files. Every context records requests to
any host other than Navi's and errors thrown by the page's scripts; the fixtures fail a test on either.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, expect

from navi.api.security import COOKIE
from tests.server_helpers import LiveNavi

CHROMIUM = "/usr/bin/chromium"
# Chromium's own PDF viewer (a built-in extension) shows a PDF a page opened, with the browser's own
# resources (its font, chrome://resources/…): the browser's, no host.
PDF_VIEWER = ("chrome-extension://mhjfbmdgcfjbbpaeojofohoefgiehjai/", "chrome://resources/")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
]
DESKTOP = {"width": 1280, "height": 820}
PHONE = {"width": 390, "height": 844}
SESSION_URL = re.compile(r".*#/s/[\w-]+$")

expect.set_options(timeout=15_000)


@dataclass
class Watched:
    """What a page did that it must not: talk to other hosts, throw, or open dialogs unasked."""

    origin: str
    foreign: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.on("request", self._request)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _request(self, request: Any) -> None:
        url = request.url
        if not (url.startswith(self.origin) or url.startswith(("data:", "blob:", "about:", *PDF_VIEWER))):
            self.foreign.append(url)


def open_context(browser: Browser, navi: LiveNavi, **options: Any) -> tuple[BrowserContext, Watched]:
    options.setdefault("viewport", DESKTOP)
    signed_in = options.pop("signed_in", True)
    # The service worker (the installable shell) only where a test is about it: installing it
    # fetches the whole shell again and puts every later shell request through it, about a tenth
    # of a browser test's processor time (tests/ui/test_app_install.py and the push tests keep it).
    options.setdefault("service_workers", "block")
    context = browser.new_context(base_url=navi.url, accept_downloads=True, **options)
    context.set_default_timeout(15_000)
    if signed_in and navi.token:  # as after following the sign-in link `navi serve` prints
        sign_in = navi.app.state.access.new_session()
        context.add_cookies([{"name": COOKIE, "value": sign_in, "url": navi.url}])
    watched = Watched(origin=navi.url)
    context.on("page", watched.attach)
    return context, watched


def wait_ready(page: Page) -> Page:
    """The page's script has loaded its data (it marks <body data-ready>)."""
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    return page


def open_app(page: Page, path: str = "/") -> Page:
    page.goto(path)
    return wait_ready(page)


def reload(page: Page, *, mid_run: bool = False) -> Page:
    """Reload, once the open conversation's run is over on the server (unless `mid_run`).

    The page's turn ends (composer unlocked) before the run's post-turn work (title, memory); a
    reload meanwhile replays the run and then draws the stored history again, replacing the nodes a
    test may be clicking. A test that means to reload during a run says so.
    """
    if not mid_run:
        wait_run_over(page)
    page.reload()
    return wait_ready(page)


def wait_run_over(page: Page, timeout: float = 15.0) -> None:
    """The conversation the page shows has no run on the server (GET /sessions/{id}: not active)."""
    match = re.search(r"#/s/([\w-]+)", page.url)
    if not match:
        return
    deadline = time.monotonic() + timeout
    while True:
        answer = page.request.get(f"/sessions/{match[1]}")
        if not answer.ok or not answer.json().get("active"):
            return
        assert time.monotonic() < deadline, f"the run of {match[1]} did not end in {timeout} s"
        page.wait_for_timeout(50)


def send(page: Page, text: str) -> None:
    box = page.locator("#input")
    expect(box).to_be_enabled()
    box.fill(text)
    box.press("Enter")


def wait_idle(page: Page) -> None:
    """The run is over: the composer is unlocked again."""
    expect(page.locator("#stop")).to_be_hidden()
    expect(page.locator("#input")).to_be_enabled()


def session_id(page: Page) -> str:
    page.wait_for_url(SESSION_URL)
    return page.url.rsplit("/", 1)[-1]
