"""Typing while Navi works, in Chromium: Enter queues the message (greyed, editable, cancellable,
kept over a reload) and it runs after the answer; Alt+Enter (or Steer, on a phone) steers the running
turn's next step."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import PHONE, open_app, open_context, reload, send, wait_idle

pytestmark = pytest.mark.browser


@pytest.mark.navi(navi_approval_mode="auto", planning_enabled=False)
def test_a_message_typed_while_a_tool_runs_is_queued_and_runs_after(
    page: Page, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": "sleep 5"})]),
        "Slept well.",
        "Here is what came next.",
    )
    open_app(page)
    send(page, "take a nap")
    expect(page.locator('details.tool[data-tool="terminal"]')).to_have_count(1)  # the tool runs
    box = page.locator("#input")
    for text in ("then this", "never mind"):
        box.fill(text)
        box.press("Enter")
    queued = page.locator("#queue .queued-msg")
    expect(queued).to_have_count(2)
    expect(queued.locator(".bubble")).to_have_text(["then this", "never mind"])
    # Greyed (the muted colour, which keeps AA contrast, unlike a faded opacity): it has not run.
    muted = page.locator("#queue .queue-label").first.evaluate("(n) => getComputedStyle(n).color")
    expect(queued.first.locator(".bubble")).to_have_css("color", muted)
    expect(box).to_have_value("")
    queued.nth(1).get_by_role("button", name="Cancel").click()
    expect(queued).to_have_count(1)
    queued.first.get_by_role("button", name="Edit").click()
    page.locator("#queue .queue-text").fill("then this, edited")
    page.get_by_role("button", name="Save").click()
    expect(queued.locator(".bubble")).to_have_text(["then this, edited"])
    reload(page, mid_run=True)  # the queue is the server's: a reloaded page shows it
    expect(page.locator("#queue .queued-msg .bubble")).to_have_text(["then this, edited"])
    expect(page.locator("article.turn").nth(1)).to_contain_text("Here is what came next.", timeout=20_000)
    wait_idle(page)
    expect(page.locator("#queue")).to_be_hidden()
    expect(page.locator("article.msg.user .bubble")).to_have_text(["take a nap", "then this, edited"])
    assert [r.last_user_text for r in script.of_kind("turn")][-1] == "then this, edited"
    assert "never mind" not in str([r.last_user_text for r in script.of_kind("turn")])


@pytest.mark.navi(navi_approval_mode="auto", planning_enabled=False)
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_alt_enter_or_steer_steers_the_next_step_of_the_running_turn(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer, size: str
) -> None:
    """Alt+Enter on a keyboard, the Steer button on a phone (which has no Alt+Enter)."""
    phone = size == "phone"
    context, watched = open_context(
        browser, navi, **({"viewport": PHONE, "is_mobile": True, "has_touch": True} if phone else {})
    )
    page = context.new_page()
    script = use_script(fake_server)
    script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": "sleep 3"})]),
        Reply(text="Booked for Friday. " + "Confirming the details. " * 12, chunk_chars=6, delay=0.05),
    )
    open_app(page)
    send(page, "book a table for Thursday")
    expect(page.locator('details.tool[data-tool="terminal"]')).to_have_count(1)
    box = page.locator("#input")
    steer = page.get_by_role("button", name="Steer")
    expect(steer).to_be_visible()  # while the turn runs
    expect(steer).to_be_disabled()  # nothing typed yet
    if phone:
        expect(box).to_have_attribute("placeholder", "Queue a message, or Steer this answer…")
        box.fill("Friday, not Thursday")
        steer.tap()
    else:
        box.fill("Friday, not Thursday")
        box.press("Alt+Enter")
    expect(box).to_have_value("")
    steered = page.locator("article.turn .msg.user.steered")
    expect(steered).to_have_text(re.compile("Friday, not Thursday"), timeout=15_000)
    reload(page, mid_run=True)  # mid-turn: the replay draws the steering message once, in its turn
    expect(page.locator("#stop")).to_be_visible()
    expect(steered).to_have_count(1)
    expect(page.locator("article.msg.user .bubble")).to_have_text(["book a table for Thursday"])
    expect(page.locator("article.turn")).to_contain_text("Booked for Friday.")
    wait_idle(page)
    expect(page.locator("#queue")).to_be_hidden()
    turns = script.of_kind("turn")
    assert len(turns) == 2  # one turn: the steering message joined it
    assert turns[1].messages[-1].role == "user" and turns[1].last_user_text == "Friday, not Thursday"
    assert turns[1].messages[-2].role == "tool"  # said after the tool's result, before the answer
    expect(steer).to_be_hidden()  # the turn is over
    context.close()
    assert watched.errors == [] and watched.foreign == []


@pytest.mark.navi(navi_approval_mode="auto", planning_enabled=False)
def test_escape_in_the_editor_of_a_queued_message_cancels_the_edit_only(
    page: Page, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": "sleep 4"})]),
        "Slept well.",
        "And the list is noted.",
    )
    open_app(page)
    send(page, "take a nap")
    expect(page.locator('details.tool[data-tool="terminal"]')).to_have_count(1)
    box = page.locator("#input")
    box.fill("then the shopping list")
    box.press("Enter")
    queued = page.locator("#queue .queued-msg")
    expect(queued.locator(".bubble")).to_have_text(["then the shopping list"])
    queued.get_by_role("button", name="Edit").click()
    editor = page.locator("#queue .queue-text")
    editor.fill("something half typed")
    editor.press("Escape")
    expect(editor).to_have_count(0)  # the edit is given up…
    expect(queued.locator(".bubble")).to_have_text(["then the shopping list"])  # …its text as it was
    expect(queued.get_by_role("button", name="Edit")).to_be_visible()
    expect(page.locator("#stop")).to_be_visible()  # and the answer goes on
    expect(page.locator("article.turn").first).to_contain_text("Slept well.", timeout=20_000)
    expect(page.locator("article.turn").nth(1)).to_contain_text("And the list is noted.", timeout=20_000)
    wait_idle(page)
    expect(page.locator(".notice.stopped")).to_have_count(0)
    expect(page.locator("article.msg.user .bubble")).to_have_text(["take a nap", "then the shopping list"])
    assert [r.last_user_text for r in script.of_kind("turn")][-1] == "then the shopping list"
