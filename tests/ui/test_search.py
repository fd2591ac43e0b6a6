"""The search box finds messages too: a "Messages" group under the title matches, the snippet's
matched words in <mark>, Up/Down/Enter through the hits; a hit opens its session scrolled to the
message, marked for a moment — on the branch that holds it, which a reload keeps. The snippet is
the user's text (never markup); a failed search says so quietly; on a phone the hit closes the
drawer."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, talk, use_script
from tests.ui.browser import PHONE, open_app, open_context, reload, send, wait_idle

pytestmark = pytest.mark.browser

FILLER = "\n\n".join(f"Paragraph {n} of a long answer about something else entirely." for n in range(25))


def test_a_word_from_an_older_message_opens_its_session_there(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(FILLER, FILLER, "Near the north hangar.", FILLER, FILLER)
    script.turn("A lemon cake it is.", "Zest the lemon first.")
    alpha, alpha_messages = talk(
        navi, "Alpha", ["Hello", "More", "Where did we park the zeppelin?", "More", "More"]
    )
    bravo, bravo_messages = talk(navi, "Bravo", ["Bake a cake", "And the lemon?"])
    older = alpha_messages[4]  # in the middle: neither the top nor the end of the conversation shows it
    assert older["role"] == "user" and "zeppelin" in older["content"]

    open_app(page, f"/#/s/{bravo}")
    expect(page.locator("#session-title")).to_have_text("Bravo")
    page.keyboard.press("Control+k")
    search = page.get_by_role("searchbox", name="Search conversations")
    expect(search).to_be_focused()
    search.press_sequentially("zeppelin")

    # No title matches, one message does: its session, its date, the snippet with the word marked.
    hits = page.locator("#sessions .message-hits .search-hit")
    expect(page.locator("#sessions .message-hits .group-label")).to_have_text("Messages")
    expect(hits).to_have_count(1)
    expect(hits.locator(".hit-name")).to_have_text("Alpha")
    expect(hits.locator(".hit-snippet")).to_have_text("Where did we park the zeppelin?")
    expect(hits.locator(".hit-snippet mark")).to_have_text(["zeppelin"])
    expect(hits.locator(".hit-meta")).not_to_be_empty()
    expect(page.locator("#sessions .session")).to_have_count(0)

    # Enter opens the first match: Alpha, scrolled back to that message, which is marked.
    search.press("Enter")
    expect(page.locator("#session-title")).to_have_text("Alpha")
    assert page.url.endswith(f"#/s/{alpha}")
    target = page.locator(f'#messages [data-message-id="{older["id"]}"]')
    expect(target).to_contain_text("Where did we park the zeppelin?")
    expect(target).to_have_class(re.compile(r"\bsearch-target\b"))
    expect(target).to_be_in_viewport()
    for far in (alpha_messages[0], alpha_messages[-1]):
        expect(page.locator(f'#messages [data-message-id="{far["id"]}"]')).not_to_be_in_viewport()
    expect(target).not_to_have_class(re.compile(r"\bsearch-target\b"), timeout=8000)  # for a moment only

    # Up and Down go through the hits (three in Bravo), Enter opens the one with the focus.
    search.fill("lemon")
    expect(hits).to_have_count(3)
    expect(hits.locator(".hit-name")).to_have_text(["Bravo"] * 3)
    answer = next(m for m in bravo_messages if m["role"] == "assistant" and "Zest" in m["content"])
    at = [hit.get_attribute("data-message") for hit in hits.all()].index(answer["id"])
    buttons = hits.locator(".hit-open")
    search.press("ArrowDown")
    expect(buttons.first).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(search).to_be_focused()
    search.press("ArrowDown")
    for _ in range(at):
        page.keyboard.press("ArrowDown")
    expect(buttons.nth(at)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#session-title")).to_have_text("Bravo")
    marked = page.locator(f'#messages [data-message-id="{answer["id"]}"]')
    expect(marked).to_contain_text("Zest the lemon first.")
    expect(marked).to_have_class(re.compile(r"\bsearch-target\b"))

    # Escape in the box clears the search: the whole list again, no hits.
    search.focus()
    search.press("Escape")
    expect(search).to_have_value("")
    expect(hits).to_have_count(0)
    expect(page.locator("#sessions .session")).to_have_count(2)


def test_ctrl_k_jumps_to_a_message_on_another_branch_of_another_session(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        "Booked the zeppelin for Friday.", FILLER, FILLER, "Booked the night train.", "Rain tomorrow."
    )
    trip, old = talk(navi, "Oslo trip", ["Book the zeppelin to Oslo", "What else?", "And then?"])
    with navi.client() as http:  # the first question edited: the zeppelin is on the old branch only
        edit = http.post(f"/sessions/{trip}/messages/{old[0]['id']}/edit", json={"content": "Book the train"})
        assert edit.status_code == 200, edit.text
        assert len(http.get(f"/sessions/{trip}").json()["messages"]) == 2
    home, _ = talk(navi, "At home", ["Weather here?"])
    answer = old[1]
    assert answer["content"] == "Booked the zeppelin for Friday."

    open_app(page, f"/#/s/{home}")
    expect(page.locator("#session-title")).to_have_text("At home")
    page.keyboard.press("Control+k")
    search = page.get_by_role("searchbox", name="Search conversations")
    search.press_sequentially("zeppelin friday")
    hits = page.locator("#sessions .message-hits .search-hit")
    expect(hits).to_have_count(1)
    expect(hits.locator(".hit-name")).to_have_text("Oslo trip")
    search.press("Enter")

    # Oslo trip, on the old branch (‹ 1/2 › at the edited question), the answer in view and marked.
    expect(page.locator("#session-title")).to_have_text("Oslo trip")
    assert page.url.endswith(f"#/s/{trip}")
    questions = page.locator("#messages article.msg.user .bubble")
    expect(questions).to_have_text(["Book the zeppelin to Oslo", "What else?", "And then?"])
    expect(page.locator("#messages article.msg.user").first.locator(".branch-count")).to_have_text("1/2")
    target = page.locator(f'#messages [data-message-id="{answer["id"]}"]')
    expect(target).to_have_text("Booked the zeppelin for Friday.")
    expect(target).to_have_class(re.compile(r"\bsearch-target\b"))
    expect(target).to_be_in_viewport()
    expect(page.locator("#toast")).to_be_hidden()

    # The branch is the session's active one now: a reload shows it again.
    reload(page)
    expect(page.locator("#session-title")).to_have_text("Oslo trip")
    expect(questions).to_have_text(["Book the zeppelin to Oslo", "What else?", "And then?"])
    expect(page.locator("#messages article.msg.user").first.locator(".branch-count")).to_have_text("1/2")
    expect(page.locator("#messages")).not_to_contain_text("Book the train")

    # A hit on the other branch of the conversation that is open: it switches back (‹ 2/2 ›).
    page.keyboard.press("Control+k")
    search.press_sequentially("night train")
    expect(hits).to_have_count(1)
    search.press("Enter")
    expect(questions).to_have_text(["Book the train"])
    expect(page.locator("#messages article.msg.user").first.locator(".branch-count")).to_have_text("2/2")
    expect(page.locator("#messages .search-target")).to_have_text("Booked the night train.")
    expect(page.locator("#toast")).to_be_hidden()


HOSTILE = 'Notes on <script>alert("pwned")</script> and <b>bold</b> "quoted" text'


def test_hostile_text_stays_text_and_a_failed_search_is_quiet_on_a_phone(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("Noted.")
    sid, messages = talk(navi, "Odd notes", [HOSTILE])
    context, watched = open_context(browser, navi, viewport=PHONE, is_mobile=True, has_touch=True)
    dialogs: list[str] = []
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_app(page)
    page.get_by_role("button", name="Show conversations").click()
    search = page.get_by_role("searchbox", name="Search conversations")
    search.press_sequentially("\"<script>alert('pwned')")

    hits = page.locator("#sessions .search-hit")
    expect(hits).to_have_count(1)
    snippet = hits.locator(".hit-snippet")
    expect(snippet).to_have_text(HOSTILE)  # the markup is shown as the text it is
    expect(snippet.locator("mark")).to_have_text(["script", "alert", "pwned", "script"])
    assert page.locator("#sessions script, #sessions b, #sessions img").count() == 0
    expect(page.locator("#sessions .search-error")).to_have_count(0)
    expect(hits.locator(".hit-name")).to_have_text("Odd notes")
    assert hits.locator(".hit-open").bounding_box()["width"] <= PHONE["width"]  # type: ignore[index]

    # A tap opens it: the drawer closes and the message is marked.
    hits.locator(".hit-open").tap()
    expect(page.locator("#sidebar")).not_to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator("#session-title")).to_have_text("Odd notes")
    target = page.locator(f'#messages [data-message-id="{messages[0]["id"]}"]')
    expect(target).to_contain_text('<script>alert("pwned")</script>')
    expect(target).to_have_class(re.compile(r"\bsearch-target\b"))

    # The search failing says so in one quiet line; nothing is thrown, the title matches stay.
    def refuse(route: Route) -> None:
        route.fulfill(status=500, json={"detail": "the index is busy", "code": "internal"})

    page.route(re.compile(r".*/search\?.*"), refuse)
    page.get_by_role("button", name="Show conversations").click()
    search.fill("odd notes")
    failed = page.locator("#sessions .search-error")
    expect(failed).to_have_text("Could not search the messages: the index is busy")
    expect(page.locator("#sessions .session")).to_have_count(1)
    expect(page.locator("#toast")).to_be_hidden()
    context.close()
    assert dialogs == [] and watched.errors == [] and watched.foreign == []


def test_the_search_box_never_finds_the_open_temporary_chat(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """A temporary chat, open on the page, is found neither by its title nor its messages; the same
    word in a kept conversation is."""
    use_script(fake_server).turn("A good name for a dog.", "Noted: Rex and the cat Miso.")
    talk(navi, "Pets", ["My dog is Rex"])
    open_app(page)
    page.locator("#temporary-toggle").check()
    send(page, "My dog Rex and my cat Miso, keep it between us")
    expect(page.locator("#messages")).to_contain_text("Noted: Rex and the cat Miso.")
    wait_idle(page)
    expect(page.locator("#temporary-badge")).to_be_visible()

    search = page.get_by_role("searchbox", name="Search conversations")
    hits = page.locator("#sessions .message-hits .search-hit")
    with page.expect_response(re.compile(r"/search\?q=rex")) as asked:
        search.fill("rex")
    assert asked.value.ok
    expect(hits).to_have_count(1)
    expect(hits.locator(".hit-name")).to_have_text("Pets")
    expect(hits.locator(".hit-snippet")).to_have_text("My dog is Rex")
    with page.expect_response(re.compile(r"/search\?q=miso")) as asked:
        search.fill("miso")
    assert asked.value.json() == []
    expect(hits).to_have_count(0)
    expect(page.locator("#sessions .message-hits")).to_have_count(0)
    expect(page.locator("#temporary-badge")).to_be_visible()  # still open: it exists meanwhile
