"""A conversation is a tree, on the page in Chromium: edit a message (a new branch runs), switch back
to the old answer with ‹ › and a reload keeps the branch shown; regenerate an answer; fork."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, reload, send, session_id, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.navi(planning_enabled=False)]


def bubbles(page: Page):
    return page.locator("article.msg.user .bubble")


def answers(page: Page):
    return page.locator("article.turn .markdown.text")


def two_turns(page: Page, fake: FakeModelServer) -> None:
    script = use_script(fake)
    script.turn("Paris.", "Berlin.")
    open_app(page)
    send(page, "Capital of France?")
    wait_idle(page)
    expect(answers(page)).to_have_text(["Paris."])
    send(page, "Capital of Germany?")
    wait_idle(page)
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])


def test_edit_runs_a_new_branch_switching_back_shows_the_old_answer_and_a_reload_keeps_it(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    two_turns(page, fake_server)
    script = use_script(fake_server)
    script.turn("Rome.")
    second = page.locator("article.msg.user").nth(1)
    second.locator("button.msg-edit").click()
    box = second.locator("textarea.edit-box")
    expect(box).to_have_value("Capital of Germany?")
    box.fill("Capital of Italy?")
    second.locator("button.edit-save").click()
    wait_idle(page)
    expect(bubbles(page)).to_have_text(["Capital of France?", "Capital of Italy?"])
    expect(answers(page)).to_have_text(["Paris.", "Rome."])
    edited = page.locator("article.msg.user").nth(1)
    expect(edited.locator(".branch-count")).to_have_text("2/2")
    meter = page.locator("#context-meter")
    measured = int(meter.get_attribute("aria-valuenow") or 0)  # the turn's whole prompt, as it counted it
    assert measured > 0

    edited.locator("button.branch-prev").click()  # back to the old branch
    expect(bubbles(page)).to_have_text(["Capital of France?", "Capital of Germany?"])
    # The gauge keeps counting the system message and tools: about the same size, no jump.
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])  # drawn with the gauge, at once
    switched = int(meter.get_attribute("aria-valuenow") or 0)
    assert abs(switched - measured) <= measured * 0.05, (switched, measured)
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])
    expect(page.locator("article.msg.user").nth(1).locator(".branch-count")).to_have_text("1/2")
    sid = session_id(page)
    reload(page)
    assert session_id(page) == sid
    expect(bubbles(page)).to_have_text(["Capital of France?", "Capital of Germany?"])
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])
    page.locator("article.msg.user").nth(1).locator("button.branch-next").click()
    expect(answers(page)).to_have_text(["Paris.", "Rome."])
    reload(page)
    expect(answers(page)).to_have_text(["Paris.", "Rome."])


def test_regenerate_gives_another_answer_beside_the_old_one(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    two_turns(page, fake_server)
    script = use_script(fake_server)
    script.turn("Berlin, the capital since 1990.")
    last = page.locator("article.turn").nth(1)
    last.locator("button.msg-regenerate").click()
    wait_idle(page)
    expect(answers(page)).to_have_text(["Paris.", "Berlin, the capital since 1990."])
    expect(bubbles(page)).to_have_text(["Capital of France?", "Capital of Germany?"])  # not asked twice
    turn = page.locator("article.turn").nth(1)
    expect(turn.locator(".branch-count")).to_have_text("2/2")
    turn.locator("button.branch-prev").click()
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])
    reload(page)
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])


def test_fork_opens_a_new_conversation_up_to_the_message(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    two_turns(page, fake_server)
    source = session_id(page)
    page.locator("article.turn").nth(0).locator("button.msg-fork").click()
    page.wait_for_url(lambda url: source not in url)
    expect(bubbles(page)).to_have_text(["Capital of France?"])
    expect(answers(page)).to_have_text(["Paris."])
    expect(page.locator("#sessions li")).to_have_count(2)
    page.goto(f"/#/s/{source}")
    expect(answers(page)).to_have_text(["Paris.", "Berlin."])


def test_escape_in_the_edit_box_cancels_the_edit_only(page: Page, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="A long answer. " + "More of it. " * 60, chunk_chars=4, delay=0.05))
    open_app(page)
    send(page, "Tell me a story")
    expect(answers(page)).to_contain_text("More of it.")
    page.locator("article.msg.user").get_by_role("button", name="Edit").click()
    box = page.locator(".edit-box")
    box.fill("Tell me a poem instead")
    expect(page.locator("#stop")).to_be_visible()
    box.press("Escape")
    expect(box).to_have_count(0)  # the edit is given up…
    expect(bubbles(page)).to_have_text(["Tell me a story"])
    expect(page.locator("#stop")).to_be_visible()  # …and the answer goes on to its end
    wait_idle(page)
    expect(page.locator(".notice.stopped")).to_have_count(0)
    expect(answers(page)).to_have_text([("A long answer. " + "More of it. " * 60).strip()])
    assert len(script.of_kind("turn")) == 1
