"""The debug panel, the login page, a phone-sized screen, keyboard use and basic accessibility."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Browser, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.ui.browser import PHONE, open_app, open_context, send, session_id, wait_idle, wait_ready

pytestmark = pytest.mark.browser

TOKEN = "correct-horse-battery-staple"


def backdate(db_path: str, minutes: int = 90) -> None:
    """Make every session idle long enough for memory extraction (as if the person walked away)."""
    engine = sa.create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:
        when = datetime.now(UTC) - timedelta(minutes=minutes)
        conn.execute(sa.text("UPDATE sessions SET last_active = :when"), {"when": when.replace(tzinfo=None)})
    engine.dispose()


def test_debug_panel_shows_context_beside_messages(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.plan("1. Note the city\n2. Answer")
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Remember Oslo"]})]),
        Reply(text="Noted: you live in Oslo.", prompt_tokens=900),
    )
    script.extract("personal: home_city = Oslo")
    script.profile("The person lives in Oslo.")
    open_app(page)
    send(page, "I live in Oslo, please plan around that")
    sid = session_id(page)
    wait_idle(page)
    # The answer's post-turn work (naming) touches the session; let it finish before backdating.
    expect(page.locator("#session-title")).to_have_text("Scripted title")
    with navi.client() as http:
        other = http.post("/sessions", json={"name": "Other chat"}).json()["session_id"]
        backdate(navi.settings.db_path)
        # Creating "Other chat" starts an extraction of idle sessions in the background too; this
        # one or that one reads the backdated session, so wait for the fact, not for this answer.
        http.post("/memory/extract")
        deadline = time.monotonic() + 15
        while not (facts := http.get("/memory/facts").json()) and time.monotonic() < deadline:
            time.sleep(0.1)
    assert [f"{f['key']} = {f['value']}" for f in facts] == ["home_city = Oslo"]

    page.goto(f"/debug?session={sid}")
    wait_ready(page)
    expect(page.locator("#debug-session")).to_have_value(sid)
    messages, context = page.locator("#debug-messages"), page.locator("#debug-context")
    expect(messages.locator(".entry")).to_have_count(5)  # user, plan, tool call, tool result, answer
    expect(messages.locator(".entry").first).to_contain_text("I live in Oslo")
    expect(messages).to_contain_text("is_plan")
    expect(messages).to_contain_text("todo(")
    expect(context.locator(".entry")).to_have_count(5)
    expect(context.locator('.entry[data-role="tool"]')).to_contain_text("Remember Oslo")
    expect(page.locator("#session-facts")).to_contain_text("5 messages · 5 in context")
    page.locator("#system-prompt-box summary").click()
    expect(page.locator("#debug-system")).to_contain_text("You are Navi")
    expect(page.locator("#debug-memory")).to_contain_text("The person lives in Oslo.")
    expect(page.locator("#debug-planning .entry")).to_have_count(1)
    expect(page.locator("#debug-planning")).to_contain_text("Note the city")
    expect(page.locator("#debug-tools")).to_contain_text("spawn_agent")
    expect(page.locator("#debug-tools details", has_text="todo").first).to_contain_text("built-in")
    with navi.client() as http:
        for profile in http.get("/agents/profiles").json():
            expect(page.locator("#debug-profiles")).to_contain_text(profile["name"])
    expect(page.locator("#debug-facts")).to_contain_text("home_city = Oslo")
    expect(page.locator("#debug-summary")).to_have_text("The person lives in Oslo.")

    page.locator("#debug-session").select_option(other)
    expect(page.locator("#debug-messages")).to_contain_text("No messages yet.")
    expect(page.locator("#session-facts")).to_contain_text("0 messages")


@pytest.fixture
def guarded(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN) as server:
        yield server


def test_login_page_when_a_token_is_configured(
    browser: Browser, guarded: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Signed in and answering.")
    context, watched = open_context(browser, guarded, signed_in=False)
    page = context.new_page()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    field = page.get_by_label("Access token")
    expect(field).to_be_focused()
    field.fill("wrong")
    field.press("Enter")
    expect(page.get_by_role("alert")).to_have_text("That token is not right.")
    page.get_by_label("Access token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/$"))
    wait_ready(page)
    send(page, "hello")  # REST and the WebSocket both pass with the cookie
    expect(page.locator("article.turn .markdown.text")).to_have_text("Signed in and answering.")
    cookie = next(c for c in context.cookies() if c["name"].startswith("navi"))
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    page.goto("/debug")
    wait_ready(page)
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_phone_sized_screen(browser: Browser, navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("A reply that fits a phone screen. " * 6)
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": "On the go"}).json()["session_id"]
    context, watched = open_context(browser, navi, viewport=PHONE, is_mobile=True, has_touch=True)
    page = open_app(context.new_page())
    drawer = page.locator("#sidebar")
    assert drawer.bounding_box()["x"] + drawer.bounding_box()["width"] <= 0  # off screen
    page.get_by_role("button", name="Show conversations").click()
    expect(drawer).to_have_class(re.compile(r"\bopen\b"))
    page.wait_for_timeout(300)  # the slide-in
    assert drawer.bounding_box()["x"] == 0
    page.touchscreen.tap(PHONE["width"] - 20, PHONE["height"] // 2)  # beside the drawer: it closes
    expect(drawer).not_to_have_class(re.compile(r"\bopen\b"))
    page.get_by_role("button", name="Show conversations").click()
    expect(drawer).to_have_class(re.compile(r"\bopen\b"))
    page.locator(f'#sessions li[data-id="{sid}"] .session-open').tap()
    expect(drawer).not_to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator("#session-title")).to_have_text("On the go")
    send(page, "Hi from my phone")
    wait_idle(page)
    expect(page.locator("article.turn .markdown.text")).to_contain_text("fits a phone screen")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    composer = page.locator("#composer").bounding_box()
    assert composer["y"] + composer["height"] <= PHONE["height"] + 1  # the composer stays on screen
    context.close()
    assert watched.errors == [] and watched.foreign == []


def rgb(value: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"[\d.]+", value)[:3])


def contrast(fg: str, bg: str) -> float:
    def luminance(color: tuple[float, ...]) -> float:
        channels = [c / 255 for c in color]
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    light, dark = sorted((luminance(rgb(fg)), luminance(rgb(bg))), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_keyboard_labels_focus_and_contrast(page: Page, navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Got both lines.")
    with navi.client() as http:
        http.post("/sessions", json={"name": "Keyboard"})
    open_app(page)

    # Every control has a name a screen reader can say.
    tree = page.locator("body").aria_snapshot()
    unnamed = [
        line
        for line in tree.splitlines()
        if re.match(r"^\s*- (button|textbox|combobox|link)\s*(\[[^\]]*\])?:?$", line)
    ]
    assert unnamed == [], unnamed
    for role, name in [("textbox", "Message"), ("combobox", "Profile"), ("button", "New conversation")]:
        expect(page.get_by_role(role, name=name)).to_be_visible()  # type: ignore[arg-type]
    expect(page.get_by_label("Attach files")).to_be_attached()
    expect(page.get_by_role("log", name="Conversation", include_hidden=True)).to_be_attached()

    # The message box has focus on arrival; from the top, Tab walks every control to it again, each
    # with a visible focus ring.
    expect(page.locator("#input")).to_be_focused()
    page.locator("#new-session-button").focus()
    reached = []
    for _ in range(40):
        focused = page.evaluate("() => document.activeElement.id || document.activeElement.className")
        reached.append(focused)
        outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", f"no focus ring on {focused}"
        if focused == "input":
            break
        page.keyboard.press("Tab")
    assert reached[0] == "new-session-button" and reached[-1] == "input", reached
    assert "session-open" in reached and "debug-link" in reached and "profile-picker" in reached

    # Shift+Enter is a new line, Enter sends.
    page.locator("#sessions .session-open").first.click()
    box = page.locator("#input")
    box.fill("line one")
    box.press("Shift+Enter")
    box.press_sequentially("line two")
    expect(box).to_have_value("line one\nline two")
    box.press("Enter")
    expect(page.locator("article.msg.user .bubble")).to_have_text("line one\nline two")
    wait_idle(page)
    expect(box).to_be_focused()  # ready for the next message

    # Text contrast meets WCAG AA (4.5:1) for body text, muted text and buttons.
    pairs = {
        "body": ("body", "body"),
        "muted meta": ("#sessions .session-meta", ".sidebar"),
        "answer": ("article.turn .markdown.text", "body"),
        "user bubble": ("article.msg.user .bubble", "article.msg.user .bubble"),
        "primary button": ("#new-session-button", "#new-session-button"),
    }
    for label, (fg_sel, bg_sel) in pairs.items():
        fg = page.locator(fg_sel).first.evaluate("(n) => getComputedStyle(n).color")
        bg = page.locator(bg_sel).first.evaluate("(n) => getComputedStyle(n).backgroundColor")
        assert contrast(fg, bg) >= 4.5, f"{label}: {fg} on {bg} is {contrast(fg, bg):.2f}:1"
