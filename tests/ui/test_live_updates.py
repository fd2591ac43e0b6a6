"""What the page does with Navi's protocol additions: a failed turn kept with Retry, a second window
that draws the message another window sent, lists that follow `session_updated`, and a message
sent while a turn runs that window did not see, which waits in the queue (`queued`) and runs after."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, Page, Route, WebSocketRoute, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, open_context, reload, send, session_id, wait_idle, wait_run_over

pytestmark = pytest.mark.browser


def stored(navi: LiveNavi, sid: str) -> list[dict]:
    with navi.client() as http:
        return http.get(f"/sessions/{sid}").json()["messages"]


def test_a_failed_turn_survives_a_reload_and_retry_answers_it_once(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(status=500, error="model exploded"), Reply(text="Here is the answer after all."))
    open_app(page)
    send(page, "What is the capital of Norway?")
    error = page.locator("article.turn .notice.error")
    expect(error).to_contain_text("model exploded")
    expect(error.get_by_role("button", name="Retry")).to_be_visible()
    wait_idle(page)
    sid = session_id(page)

    # After a reload the error is still under the message, with Retry.
    reload(page)
    expect(page.locator("article.user")).to_have_count(1)
    error = page.locator("article.turn .notice.error")
    expect(error).to_contain_text("model exploded")
    error.get_by_role("button", name="Retry").click()
    expect(page.locator("article.turn").last).to_contain_text("Here is the answer after all.")
    wait_idle(page)
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    expect(page.locator("article.user")).to_have_count(1)

    users = [m for m in stored(navi, sid) if m["role"] == "user"]
    assert [m["content"] for m in users] == ["What is the capital of Norway?"]
    reload(page)
    expect(page.locator("article.user")).to_have_count(1)
    expect(page.locator(".notice.error")).to_contain_text("model exploded")  # the history keeps it
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)  # but it was answered
    expect(page.locator("article.turn").last).to_contain_text("Here is the answer after all.")


def test_a_second_window_draws_the_message_and_both_lists_follow_the_name(
    browser: Browser, page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.title = "Trip to Bergen"
    script.turn(Reply(text="Bergen is rainy."), Reply(text="Pack a coat.", first_delay=3.0))
    open_app(page)
    send(page, "Planning a trip to Bergen")
    wait_idle(page)
    sid = session_id(page)
    expect(page.locator("#session-title")).to_have_text("Trip to Bergen")

    other_context, watched = open_context(browser, navi)
    try:
        other = open_app(other_context.new_page(), f"/#/s/{sid}")
        expect(other.locator("article.user")).to_have_count(1)
        # Window one sends; window two draws the message from stream_start, while the turn runs.
        send(page, "What should I pack?")
        expect(other.locator("article.user .bubble").last).to_have_text("What should I pack?")
        assert other.locator("#stop").is_visible(), "drawn only after the turn ended"
        expect(other.locator("article.turn").last).to_contain_text("Pack a coat.")
        expect(other.locator("article.user")).to_have_count(2)

        # A window on another conversation, which has run nothing: its list follows every change.
        with navi.client() as http:
            second = http.post("/sessions", json={}).json()["session_id"]
        other.goto(f"/#/s/{second}")
        expect(other.locator("#session-title")).to_have_text("New conversation")
        with navi.client() as http:
            http.patch(f"/sessions/{sid}", json={"name": "Bergen, packed"}).raise_for_status()
        expect(page.locator("#session-title")).to_have_text("Bergen, packed")
        for window in (page, other):
            expect(window.locator(f'#sessions li[data-id="{sid}"] .session-name')).to_have_text(
                "Bergen, packed"
            )
        with navi.client() as http:
            http.patch(f"/sessions/{second}", json={"name": "Another trip"}).raise_for_status()
        expect(other.locator("#session-title")).to_have_text("Another trip")
        with navi.client() as http:
            http.delete(f"/sessions/{sid}").raise_for_status()
        expect(other.locator(f'#sessions li[data-id="{sid}"]')).to_have_count(0)
        assert watched.errors == []
    finally:
        other_context.close()


def test_a_list_asked_for_before_a_deletion_does_not_bring_the_session_back(
    page: Page, navi: LiveNavi
) -> None:
    with navi.client() as http:
        keep = http.post("/sessions", json={"name": "Keep me"}).json()["session_id"]
        doomed = http.post("/sessions", json={"name": "Doomed"}).json()["session_id"]
    open_app(page, f"/#/s/{keep}")  # a conversation open: its socket brings the frames
    expect(page.locator("#session-title")).to_have_text("Keep me")
    expect(page.locator(f'#sessions li[data-id="{doomed}"]')).to_have_count(1)

    # The next list is read by the server now, but reaches the page only after the deletion.
    held: list[tuple[Route, object]] = []

    def hold(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))

    page.route(re.compile(r".*/sessions(\?[^/]*)?$"), hold)
    with navi.client() as http:  # a session the page has not seen: it asks for the list
        third = http.post("/sessions", json={"name": "Third"}).json()["session_id"]
    deadline = time.monotonic() + 15
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the page did not ask for the list"
    with navi.client() as http:
        http.delete(f"/sessions/{doomed}").raise_for_status()
    expect(page.locator(f'#sessions li[data-id="{doomed}"]')).to_have_count(0)

    route, stale = held[0]
    route.fulfill(response=stale)  # type: ignore[arg-type]
    expect(page.locator(f'#sessions li[data-id="{third}"]')).to_have_count(1)
    page.wait_for_timeout(300)  # the page has the stale list now; nothing more arrives
    expect(page.locator(f'#sessions li[data-id="{doomed}"]')).to_have_count(0)


def test_a_message_sent_while_an_unseen_turn_runs_waits_in_the_queue(
    browser: Browser, page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Hello."), Reply(text="A slow answer.", first_delay=3.0), Reply(text="Yours now."))
    open_app(page)
    send(page, "Hi")
    wait_idle(page)
    sid = session_id(page)
    # Its post-turn work over too: else "Something slow" waits in the queue, and the second window,
    # which does not see its stream_start, would show it waiting for good (found by CI).
    wait_run_over(page)
    other_context, watched = open_context(browser, navi)
    try:
        other = other_context.new_page()

        # The second window does not hear of the first window's turn (its run frames are dropped on
        # the way), so it lets its person send while that turn runs; Navi queues the message.
        def unaware(route: WebSocketRoute) -> None:
            server = route.connect_to_server()
            server.on_message(lambda message: None if '"seq"' in str(message) else route.send(message))

        other.route_web_socket("**/ws/sessions/**", unaware)
        open_app(other, f"/#/s/{sid}")
        send(page, "Something slow")
        expect(page.locator("article.user")).to_have_count(2)
        send(other, "My own question")
        waiting = ["My own question"]  # nothing is lost: it waits, shown in every window
        expect(other.locator("#queue .queued-msg .bubble")).to_have_text(waiting)
        expect(page.locator("#queue .queued-msg .bubble")).to_have_text(waiting)
        expect(other.locator("#input")).to_have_value("")
        expect(other.locator("article.user .pending, article.user.pending")).to_have_count(0)
        expect(page.locator("article.turn").nth(2)).to_contain_text("Yours now.", timeout=20_000)
        wait_idle(page)
        expect(page.locator("#queue")).to_be_hidden()
        users = [m["content"] for m in stored(navi, sid) if m["role"] == "user"]
        assert users == ["Hi", "Something slow", "My own question"]
        assert watched.errors == []
    finally:
        other_context.close()


def test_a_turn_that_ran_whole_while_the_page_opened_the_session_is_drawn(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """The page read a history ending in an unanswered message, and a turn (another client's) ran
    from start to end before the page's socket was open: no frame of it reached the page, which
    showed no answer until reloaded. The socket's first opening now reads the history again."""
    script = use_script(fake_server)
    script.turn(Reply(text="Stockholm is the capital of Sweden."))
    sid = navi.new_session()
    with navi.client() as http:
        stored = http.post(
            f"/sessions/{sid}/messages", json={"content": "What is the capital of Norway?", "respond": False}
        )
        assert stored.status_code == 200, stored.text
    opened: list[str] = []

    def history_then_a_turn(route: Route) -> None:
        response = route.fetch()  # the history as it is: the message, unanswered, no turn running
        if not opened:
            opened.append(sid)
            with navi.client() as http:  # a whole turn, before the page has its socket
                answered = http.post(f"/sessions/{sid}/messages", json={"content": "And of Sweden?"})
                assert answered.status_code == 200, answered.text
        route.fulfill(response=response)

    page.route(f"**/sessions/{sid}", history_then_a_turn)
    open_app(page, f"/#/s/{sid}")
    expect(page.locator("article.turn").last).to_contain_text("Stockholm is the capital of Sweden.")
    expect(page.locator("article.user")).to_have_count(2)
    assert opened == [sid]


def test_a_message_queued_while_the_page_reads_the_queue_is_shown(
    browser: Browser, page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """The queue the page reads as it opens a conversation can reach it after a `queued` frame that
    is newer (found by CI): the older list must not wipe the message out."""
    script = use_script(fake_server)
    script.turn(Reply(text="A slow answer.", first_delay=4.0), Reply(text="Now yours."))
    open_app(page)
    send(page, "Something slow")
    expect(page.locator("#stop")).to_be_visible()
    sid = session_id(page)
    other_context, watched = open_context(browser, navi)
    try:
        other = other_context.new_page()
        held: list[tuple[Route, object]] = []

        def hold(route: Route) -> None:  # read by the server now (empty), answered later
            if held:
                route.continue_()
            else:
                held.append((route, route.fetch()))

        other.route(re.compile(r".*/sessions/[\w-]+/queue$"), hold)
        open_app(other, f"/#/s/{sid}")
        deadline = time.monotonic() + 15
        while not held and time.monotonic() < deadline:
            other.wait_for_timeout(50)
        assert held, "the page did not read the queue"
        send(page, "Waits its turn")
        waiting = ["Waits its turn"]
        expect(other.locator("#queue .queued-msg .bubble")).to_have_text(waiting)
        route, stale = held[0]
        route.fulfill(response=stale)  # type: ignore[arg-type]
        other.wait_for_timeout(300)
        expect(other.locator("#queue .queued-msg .bubble")).to_have_text(waiting)
        expect(other.locator("article.turn").nth(1)).to_contain_text("Now yours.", timeout=20_000)
        expect(other.locator("#queue")).to_be_hidden()
        assert watched.errors == []
    finally:
        other_context.close()
