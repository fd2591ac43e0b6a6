"""The page's smaller helps: waiting for Navi after Send, copying code, the model server's light,
and the debug panel opening on the conversation it was opened from."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.ui.browser import open_app, open_context, reload, send, session_id, wait_idle, wait_ready

pytestmark = pytest.mark.browser

WAITING = "Waiting for Navi…"


class HeldSocket:
    """Stands between the page and Navi's WebSocket and keeps Navi's frames back until released, so
    the page's state between Send and the first frame can be looked at for as long as needed."""

    def __init__(self) -> None:
        self.route: WebSocketRoute | None = None
        self.held: list[str | bytes] = []
        self.holding = True

    def __call__(self, route: WebSocketRoute) -> None:
        self.route = route
        server = route.connect_to_server()  # the page's frames still go through unchanged
        server.on_message(self._from_navi)

    def _from_navi(self, message: str | bytes) -> None:
        if self.holding:
            self.held.append(message)
        else:
            assert self.route is not None
            self.route.send(message)

    def release(self) -> None:
        assert self.route is not None
        self.holding = False
        for message in self.held:
            self.route.send(message)
        self.held.clear()


def test_waiting_for_navi_from_send_to_the_first_frame(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Here I am.", first_delay=1.5))
    socket_route = HeldSocket()
    page.route_web_socket(re.compile(r"/ws/sessions/"), socket_route)
    open_app(page)
    send(page, "Are you there?")
    session_id(page)

    # Nothing from Navi yet: the message shows at once, with the waiting line under it.
    waiting = page.locator(".status-line", has_text=WAITING)
    expect(waiting).to_be_visible()
    expect(page.locator("article.msg.user.pending .bubble")).to_have_text("Are you there?")
    expect(page.locator("#stop")).to_be_visible()
    page.wait_for_timeout(800)
    assert socket_route.held, "Navi should have started the turn by now"
    expect(waiting).to_be_visible()  # still waiting, as long as no frame has come
    expect(page.locator("article.turn")).to_have_count(0)

    # The frames arrive: the waiting line gives way to the turn's own status, then to the answer.
    socket_route.release()
    expect(page.locator(".turn .status-line")).to_contain_text("Waiting for the model")
    expect(page.locator("article.turn .markdown.text")).to_have_text("Here I am.")
    wait_idle(page)
    expect(page.get_by_text(WAITING)).to_have_count(0)
    expect(page.locator(".status-line")).to_have_count(0)
    expect(page.locator("article.msg.user")).to_have_count(1)  # the pending copy is gone
    expect(page.locator("article.msg.user.pending")).to_have_count(0)


def test_a_turn_says_it_is_waiting_until_its_first_status(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """Without a held socket: the live turn starts out waiting and the answer replaces that."""
    script = use_script(fake_server)
    script.turn(Reply(text="Quick.", first_delay=1.0))
    open_app(page)
    send(page, "Hello")
    expect(page.locator(".turn .status-line")).to_be_visible()
    expect(page.locator("article.turn .markdown.text")).to_have_text("Quick.")
    wait_idle(page)
    expect(page.locator(".status-line")).to_have_count(0)


CODE = 'def greet(name):\n    return f"hello {name}"'
SHELL = "ls -la /tmp\necho done"
ANSWER = f"Two snippets.\n\n```python\n{CODE}\n```\n\nAnd a shell one:\n\n```\n{SHELL}\n```\n\nThat is all."


def clipboard(page: Page) -> str:
    page.bring_to_front()
    return str(page.evaluate("() => navigator.clipboard.readText()"))


def test_code_blocks_have_a_copy_button(page: Page, navi: LiveNavi, fake_server: FakeModelServer) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=navi.url)
    script = use_script(fake_server)
    script.turn(ANSWER)
    open_app(page)
    send(page, "Show me code")
    sid = session_id(page)
    wait_idle(page)
    blocks = page.locator("article.turn .code-block")
    expect(blocks).to_have_count(2)

    button = blocks.nth(0).locator("button.copy-code")
    expect(button).to_have_accessible_name("Copy")
    button.click()
    expect(button).to_have_text("Copied")
    assert clipboard(page) == CODE
    expect(button).to_have_text("Copy")  # only for a moment

    blocks.nth(1).locator("button.copy-code").click()
    assert clipboard(page) == SHELL

    # Drawn again from the stored history: the buttons are there too.
    reload(page)
    expect(page.locator("article.turn .code-block button.copy-code")).to_have_count(2)

    # On plain http from another machine there is no clipboard API: the fallback copies all the same.
    other = page.context.new_page()
    other.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined })")
    open_app(other, f"/#/s/{sid}")
    assert other.evaluate("() => navigator.clipboard") is None
    fallback = other.locator("article.turn .code-block button.copy-code").nth(0)
    fallback.click()
    expect(fallback).to_have_text("Copied")
    assert clipboard(page) == CODE
    other.close()


def test_the_model_light_is_green_with_a_ready_model(page: Page, navi: LiveNavi) -> None:
    open_app(page)
    light = page.locator("#model-status")
    expect(light).to_have_attribute("data-state", "ready")
    expect(light).to_have_text("Model ready")
    expect(light).to_have_attribute("title", re.compile(r"gemma4:e2b-it-q8_0 on Ollama"))
    light.click()
    expect(page.locator("#toast")).to_contain_text("gemma4:e2b-it-q8_0")


@pytest.fixture
def without_model_server(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    closed = f"http://127.0.0.1:{free_port()}"  # a port nothing listens on
    with live_navi(tmp_path, fake_server, ollama_host=closed) as server:
        yield server


def test_the_model_light_is_red_without_a_model_server(
    browser: Browser, without_model_server: LiveNavi
) -> None:
    context, watched = open_context(browser, without_model_server)
    page = open_app(context.new_page())
    light = page.locator("#model-status")
    expect(light).to_have_attribute("data-state", "unreachable")
    expect(light).to_have_text("Model server unreachable — check OLLAMA_HOST")
    expect(light).to_have_attribute("title", re.compile(r"cannot reach Ollama"))
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_the_debug_panel_opens_on_the_conversation_it_came_from(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Noted.")
    open_app(page)
    send(page, "Remember the blue folder")
    sid = session_id(page)
    wait_idle(page)
    with navi.client() as http:  # newer, so it heads the list: the panel must not just take the first
        other = http.post("/sessions", json={"name": "Newer chat"}).json()["session_id"]

    page.get_by_role("link", name="Debug panel").click()
    wait_ready(page)
    assert page.url == f"{navi.url}/debug?session={sid}"
    expect(page.locator("#debug-session")).to_have_value(sid)
    expect(page.locator("#debug-messages .entry").first).to_contain_text("Remember the blue folder")

    # Back to the chat returns to that conversation, not to an empty page.
    page.get_by_role("link", name="Back to the chat").click()
    wait_ready(page)
    assert page.url == f"{navi.url}/#/s/{sid}"
    expect(page.locator("article.msg.user .bubble")).to_have_text("Remember the blue folder")

    # Picking another session in the panel puts it in the address: a reload stays on it.
    page.goto(f"/debug?session={sid}")
    wait_ready(page)
    page.locator("#debug-session").select_option(other)
    expect(page.locator("#debug-messages")).to_contain_text("No messages yet.")
    assert page.url == f"{navi.url}/debug?session={other}"
    reload(page)
    expect(page.locator("#debug-session")).to_have_value(other)

    # A session that is gone is said so, and the panel still shows one that exists.
    page.goto("/debug?session=00000000-0000-0000-0000-000000000000")
    wait_ready(page)
    expect(page.locator("#toast")).to_contain_text("no longer exists")
    expect(page.locator("#debug-session")).to_have_value(other)
