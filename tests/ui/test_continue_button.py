"""Continue after a cut-off, on the page in Chromium: the Continue button under an answer the length
limit cut off streams the rest into the same bubble and goes; a reload shows the answer joined."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, reload, send, session_id, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.navi(planning_enabled=False)]


def answers(page: Page):
    return page.locator("article.turn .markdown.text")


def test_continue_after_a_cut_off(page: Page, navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(text="Roses are red, violets", finish_reason="length"),
        Reply(text=" are blue, sugar", finish_reason="length"),
        Reply(text=" is sweet."),
    )
    open_app(page)
    send(page, "A poem?")
    wait_idle(page)
    button = page.locator("article.turn button.continue")
    expect(button).to_have_count(1)
    expect(answers(page)).to_have_text(["Roses are red, violets"])

    button.click()
    wait_idle(page)
    expect(answers(page)).to_have_text(["Roses are red, violets are blue, sugar"])  # the same bubble
    expect(page.locator("article.turn")).to_have_count(1)
    expect(button).to_have_count(1)  # cut off again: Continue again

    button.click()
    wait_idle(page)
    expect(answers(page)).to_have_text(["Roses are red, violets are blue, sugar is sweet."])
    expect(button).to_have_count(0)
    expect(page.locator(".notice.cut")).to_have_count(0)

    sid = session_id(page)
    reload(page)
    assert session_id(page) == sid
    expect(answers(page)).to_have_text(["Roses are red, violets are blue, sugar is sweet."])
    expect(page.locator("article.turn")).to_have_count(1)
    expect(button).to_have_count(0)


def test_a_cut_off_answer_offers_continue_after_a_reload(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="One, two,", finish_reason="length"), Reply(text=" three."))
    open_app(page)
    send(page, "Count")
    # The answer first: right after Enter the composer is still unlocked, so wait_idle alone could
    # let the reload come before the turn has even begun.
    expect(answers(page)).to_have_text(["One, two,"])
    wait_idle(page)
    sid = session_id(page)
    reload(page)
    assert session_id(page) == sid, page.url
    expect(answers(page)).to_have_text(["One, two,"])
    page.locator("article.turn button.continue").click()
    wait_idle(page)
    expect(answers(page)).to_have_text(["One, two, three."])
    expect(page.locator("article.turn button.continue")).to_have_count(0)


def test_a_search_hit_in_a_continuation_opens_the_joined_answer(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="The password hint is", finish_reason="length"), Reply(text=" a purple zeppelin."))
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": "Hints"}).json()["session_id"]
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Hint?"}).status_code == 200
        cut = http.get(f"/sessions/{sid}").json()["messages"][-1]["id"]
        assert http.post(f"/sessions/{sid}/messages/{cut}/continue").status_code == 200
    open_app(page)
    page.keyboard.press("Control+k")
    search = page.get_by_role("searchbox", name="Search conversations")
    search.press_sequentially("zeppelin")
    expect(page.locator("#sessions .message-hits .search-hit")).to_have_count(1)
    search.press("Enter")
    expect(page.locator("#session-title")).to_have_text("Hints")
    target = page.locator(f'#messages [data-message-id="{cut}"]')
    expect(target).to_have_text("The password hint is a purple zeppelin.")
    expect(target).to_have_class(re.compile(r"\bsearch-target\b"))


# Until the test lets the real sockets through, every socket the page opens goes to a path Navi has
# no socket at (so it fails and the page retries): the page is drawn and ready, its socket not open.
HOLD_SOCKETS = """
(() => {
  const Real = window.WebSocket;
  window.socketsHeld = true;
  function Held(url, protocols) {
    return new Real(window.socketsHeld ? `ws://${location.host}/ws/held` : url, protocols);
  }
  Held.prototype = Real.prototype;
  for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Held[name] = Real[name];
  window.WebSocket = Held;
})();
"""


def test_continue_clicked_before_the_socket_is_open_waits_for_it(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Left, right,", finish_reason="length"), Reply(text=" left."))
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": "March"}).json()["session_id"]
        assert http.post(f"/sessions/{sid}/messages", json={"content": "March?"}).status_code == 200
    page.add_init_script(HOLD_SOCKETS)
    open_app(page, f"/#/s/{sid}")
    expect(answers(page)).to_have_text(["Left, right,"])
    assert page.evaluate("window.socketsHeld")
    page.locator("article.turn button.continue").click()  # the socket is not open: the frame waits
    page.evaluate("window.socketsHeld = false")
    expect(answers(page)).to_have_text(["Left, right, left."])
    expect(page.locator("article.turn button.continue")).to_have_count(0)
    expect(page.locator("#toast")).to_be_hidden()


def stop_midway(page: Page, question: str, seen: str) -> None:
    open_app(page)
    send(page, question)
    expect(answers(page).last).to_contain_text(seen)
    page.locator("#stop").click()
    wait_idle(page)


def test_a_stopped_answer_offers_continue_and_regenerate_at_once(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(text="Roses are **red and " + "very " * 400, chunk_chars=4, delay=0.02),
        Reply(text=" red.** Violets are blue."),
    )
    stop_midway(page, "A poem?", "very very")
    turn = page.locator("article.turn")
    expect(turn.locator(".notice.stopped")).to_have_text("Stopped.")
    # Drawn as it stands: the open bold is bold, no raw markers.
    expect(answers(page).locator("strong")).to_contain_text("red and very")
    expect(answers(page)).not_to_contain_text("**")
    expect(turn.get_by_role("button", name="Regenerate")).to_be_visible()  # no reload needed
    button = turn.locator("button.continue")
    expect(button).to_be_visible()

    button.click()
    wait_idle(page)
    expect(answers(page)).to_have_count(1)  # the same bubble
    expect(answers(page)).to_contain_text("Violets are blue.")
    expect(answers(page).locator("strong")).to_have_text(re.compile(r"^red and very .* red\.$"))
    expect(turn).to_have_count(1)
    expect(button).to_have_count(0)
    expect(turn.locator(".notice.stopped")).to_have_count(0)
    expect(turn.get_by_role("button", name="Regenerate")).to_have_count(1)
    reload(page)
    expect(answers(page)).to_have_count(1)
    expect(answers(page)).to_contain_text("Violets are blue.")
    expect(page.locator(".notice.stopped")).to_have_count(0)


def test_a_stopped_answer_is_regenerated_live_and_continued_after_a_reload(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(text="First try: " + "word " * 400, chunk_chars=4, delay=0.02),
        Reply(text="Second try: *short " + "word " * 400, chunk_chars=4, delay=0.02),
        Reply(text=" and done.*"),
    )
    stop_midway(page, "Say something", "First try: word")
    page.locator("article.turn").get_by_role("button", name="Regenerate").click()
    expect(answers(page).last).to_contain_text("Second try: short word")
    page.locator("#stop").click()
    wait_idle(page)
    expect(answers(page)).to_have_count(1)
    expect(answers(page)).not_to_contain_text("*")
    sid = session_id(page)
    reload(page)  # read back: the same, Continue offered from the history
    assert session_id(page) == sid
    expect(page.locator(".notice.stopped")).to_have_text("Stopped.")
    expect(answers(page)).not_to_contain_text("*")
    expect(answers(page).locator("em")).to_contain_text("short word")
    page.locator("article.turn button.continue").click()
    wait_idle(page)
    expect(answers(page).locator("em")).to_contain_text(re.compile(r"short word.* and done\.$"))
    expect(page.locator(".notice.stopped")).to_have_count(0)
    expect(page.locator("article.turn .branch-count")).to_have_text("2/2")
