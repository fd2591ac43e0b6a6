"""Item 4 of issue 14: every page has a policy. /docs and /redoc load Swagger UI and ReDoc from the
package (vendored like the chat page's libraries), not from a CDN, under a Content-Security-Policy
that allows scripts from Navi only; /login cannot be framed.

Checked as served, and in Debian's Chromium: both documentation pages render the API while no
request leaves Navi's origin and the policy blocks nothing they need; a page on another origin that
frames /login gets an error page instead of the form.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, ConsoleMessage, expect, sync_playwright

from navi.api.app import create_app
from navi.testing.fake_server import FakeModelServer
from tests.helpers.local_http import LocalHttpServer
from tests.server_helpers import app_client, live_navi
from tests.ui.browser import CHROMIUM, CHROMIUM_ARGS, open_context

DOC_PAGES = ("/docs", "/redoc")


@pytest.fixture
def http(make_settings) -> Iterator[TestClient]:
    with app_client(create_app(make_settings(navi_api_token="correct-horse-battery-staple"))) as client:
        yield client


def scripts_from_navi_only(csp: str) -> None:
    directives = dict(part.strip().split(" ", 1) for part in csp.split(";") if part.strip())
    assert directives["script-src"] == "'self'", csp
    assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'", csp
    assert directives["frame-ancestors"] == "'none'", csp
    assert "http" not in csp and "*" not in csp, csp  # no other origin anywhere


def test_the_documentation_pages_are_navis_own(http: TestClient) -> None:
    for path in DOC_PAGES:
        page = http.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        scripts_from_navi_only(page.headers["content-security-policy"])
        assert page.headers["x-frame-options"] == "DENY"
        refs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert "<script>" not in page.text  # no inline script for the policy to allow
        assert all(ref.startswith(("/static/", "data:")) for ref in refs), refs
        for ref in refs:
            if ref.startswith("/static/"):
                assert http.get(ref).status_code == 200, ref
    vendored = (Path(__file__).parents[2] / "navi/web/static/vendor/VERSIONS.txt").read_text()
    assert re.search(r"^swagger-ui-dist \d+\.\d+\.\d+ ", vendored, re.M)
    assert re.search(r"^redoc 2\.\d+\.\d+ ", vendored, re.M)


def test_the_documentation_pages_need_a_sign_in(http: TestClient) -> None:
    for path in DOC_PAGES:
        page = http.get(path, headers={"Authorization": ""}, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/login"
    assert http.get("/openapi.json", headers={"Authorization": ""}).status_code == 401


def test_the_login_page_cannot_be_framed(http: TestClient) -> None:
    for answer in (
        http.get("/login", headers={"Authorization": ""}),
        http.post("/login", data={"token": "wrong"}, headers={"Authorization": ""}),
    ):
        assert 'name="token"' in answer.text
        assert answer.headers["x-frame-options"] == "DENY"
        scripts_from_navi_only(answer.headers["content-security-policy"])


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        with sync_playwright() as pw:
            instance = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            yield instance
            instance.close()
    finally:
        asyncio._set_running_loop(None)  # see tests/ui/conftest.py


@pytest.mark.browser
def test_swagger_and_redoc_render_the_api_from_navi_alone(
    browser: Browser, tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        context, watched = open_context(browser, navi)
        refused: list[str] = []

        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                refused.append(message.text)

        page = context.new_page()
        page.on("console", console)
        page.goto("/docs")
        path = page.locator('.opblock-summary-path[data-path="/sessions"]')
        create = page.locator(".opblock-post", has=path)  # the "POST /sessions" operation
        expect(create).to_be_visible()
        expect(create.locator(".opblock-summary-method")).to_have_text("POST")
        expect(create).to_contain_text("Create a session")
        page.goto("/redoc")
        operation = page.locator('[data-section-id="operation/create_session_sessions_post"]')
        expect(operation.get_by_role("heading", name="Create a session")).to_be_visible()
        expect(operation).to_contain_text("/sessions")
        expect(page.get_by_role("textbox", name="Search")).to_be_visible()  # its worker started
        context.close()
    assert watched.foreign == [], f"the documentation contacted other hosts: {watched.foreign}"
    assert watched.errors == [] and refused == [], watched.errors + refused


@pytest.mark.browser
def test_another_site_cannot_frame_the_login_page(
    browser: Browser, tmp_path: Path, fake_server: FakeModelServer
) -> None:
    with (
        live_navi(tmp_path, fake_server, navi_api_token="correct-horse-battery-staple") as navi,
        LocalHttpServer("127.0.0.2") as other,
    ):
        trap = other.add("trap.html", f'<iframe src="{navi.url}/login"></iframe>'.encode(), "text/html")
        context = browser.new_context()
        page = context.new_page()
        page.goto(trap)
        frame = page.frame_locator("iframe")
        page.wait_for_load_state("load")
        expect(frame.get_by_label("Access token")).to_have_count(0)
        assert [f.url for f in page.frames][1].startswith("chrome-error://")
        context.close()
