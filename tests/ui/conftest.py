"""Fixtures for the browser tests: one Chromium per test module, a live Navi and a watched page per test.

Chromium lives for a module, not the run: Playwright's sync API marks its event loop as running in
the thread between calls, so an asyncio test run after a browser test on the same worker of a
parallel run would find a loop running. tests/conftest.py keeps each browser module's tests
together on one worker, and the loop is cleared when Playwright stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from navi.testing.fake_server import FakeModelServer
from tests.helpers.browser_pages import PageServer
from tests.server_helpers import LiveNavi, live_navi
from tests.ui.browser import CHROMIUM, CHROMIUM_ARGS, PHONE, Watched, open_context


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    try:
        with sync_playwright() as pw:
            yield pw
    finally:
        asyncio._set_running_loop(None)  # what Playwright leaves marked as running between calls


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    yield instance
    instance.close()


@pytest.fixture
def navi(request: pytest.FixtureRequest, tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    """A live Navi; `@pytest.mark.navi(setting=value, ...)` changes its settings."""
    marker = request.node.get_closest_marker("navi")
    with live_navi(tmp_path, fake_server, **(marker.kwargs if marker else {})) as server:
        yield server


@pytest.fixture
def page(browser: Browser, navi: LiveNavi) -> Iterator[Page]:
    context, watched = open_context(browser, navi)
    page = context.new_page()
    yield page
    context.close()
    assert watched.foreign == [], f"the page contacted other hosts: {watched.foreign}"
    assert watched.errors == [], f"the page threw: {watched.errors}"


@pytest.fixture
def phone(browser: Browser, navi: LiveNavi) -> Iterator[tuple[BrowserContext, Watched]]:
    """A phone's browser (390×844, touch) on the live Navi; the test opens its pages."""
    context, watched = open_context(browser, navi, viewport=PHONE, is_mobile=True, has_touch=True)
    yield context, watched
    context.close()
    assert watched.errors == [] and watched.foreign == []


@pytest.fixture
def navi_page(
    browser: Browser, pages: PageServer, tmp_path: Path, fake_server: FakeModelServer
) -> Iterator[tuple[LiveNavi, Page]]:
    """A live Navi whose guard allows exactly the test site (`pages`: its address and port) and a
    watched page on it."""
    allowed = f"127.0.0.1:{pages.port}"
    with live_navi(tmp_path, fake_server, navi_fetch_allowed_hosts=allowed, planning_enabled=False) as navi:
        context, watched = open_context(browser, navi)
        yield navi, context.new_page()
        context.close()
        assert watched.foreign == [], f"the page contacted other hosts: {watched.foreign}"
        assert watched.errors == [], f"the page threw: {watched.errors}"
