"""The memory panel: facts by category, where one came from (a link that opens its conversation at
the message that said it), edit (the old value in its history, with its dates and source), delete
after a confirm, add, search; each user sees only their own facts; usable by touch on a phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import Watched, open_app, open_context, wait_ready
from tests.ui.test_phone import no_sideways_scroll
from tests.ui.test_user_sign_in import users

pytestmark = pytest.mark.browser

SAID = "By the way, I live in Lisbon these days."


def remembered(navi: LiveNavi, fake_server: FakeModelServer) -> tuple[str, str]:
    """A conversation in which the user said where they live and the model remembered it: its id
    and the message's."""
    use_script(fake_server).turn(
        Reply(
            tool_calls=[
                ScriptedCall("remember", {"category": "location", "key": "home city", "value": "Lisbon"})
            ]
        ),
        Reply(text="Noted."),
    )
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": "Moving house"}).json()["session_id"]
        assert http.post(f"/sessions/{sid}/messages", json={"content": SAID}).status_code == 200
        said = next(m for m in http.get(f"/sessions/{sid}").json()["messages"] if m["role"] == "user")
        for category, key, value in (("pets", "cat", "Miso"), ("work", "employer", "Acme <b>Labs</b>")):
            assert (
                http.post(
                    "/memory/facts", json={"category": category, "key": key, "value": value}
                ).status_code
                == 200
            )
        assert [f["key"] for f in http.get("/memory/facts").json()] == ["home_city", "cat", "employer"]
    return sid, said["id"]


@pytest.mark.navi(planning_enabled=False)
def test_the_panel_lists_edits_deletes_adds_and_searches_facts(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    sid, message_id = remembered(navi, fake_server)
    open_app(page)
    page.get_by_role("button", name="Memory").click()
    dialog = page.get_by_role("dialog", name="Memory")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".memory-category h3")).to_have_text(["location", "pets", "work"])
    expect(dialog.locator("li.fact .fact-value")).to_have_text(
        ["Lisbon", "Miso", "Acme <b>Labs</b>"]
    )  # text, not markup
    expect(dialog.locator("li.fact b")).to_have_count(0)
    home = dialog.locator('li.fact:has(.fact-key:text-is("home city"))')
    expect(home.locator(".fact-meta")).to_contain_text("remembered when you asked")

    # Where it came from: the conversation and the message that said it.
    home.get_by_role("button", name="Where from: home city").click()
    expect(home.locator(".fact-source")).to_contain_text("You said it in “Moving house” on")
    expect(home.locator(".fact-quote")).to_have_text(SAID)
    expect(home.locator(".fact-history-empty")).to_have_text("No former values.")
    # Its link opens the conversation at that message.
    home.get_by_role("link", name="“Moving house”").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#session-title")).to_have_text("Moving house")
    assert page.url.endswith(f"#/s/{sid}")
    target = page.locator(f'#messages [data-message-id="{message_id}"]')
    expect(target).to_have_class(re.compile(r"\bsearch-target\b"))
    page.get_by_role("button", name="Memory").click()
    expect(dialog).to_be_visible()
    expect(home.locator(".fact-details")).to_have_count(0)  # read afresh: memory may have changed
    home.get_by_role("button", name="Where from: home city").click()
    expect(home.locator(".fact-history-empty")).to_have_text("No former values.")

    # Edit: the new value shows, the old one is in its history with its source.
    home.get_by_role("button", name="Edit: home city").click()
    box = home.get_by_role("textbox", name="New value for home city")
    expect(box).to_be_focused()
    box.fill("Porto")
    home.get_by_role("button", name="Save").click()
    expect(dialog.locator("#memory-status")).to_have_text("Changed home city: Lisbon → Porto.")
    expect(home.locator(".fact-main .fact-value")).to_have_text("Porto")
    former = home.locator(".fact-history li")
    expect(former).to_have_count(1)
    expect(former.locator(".fact-value")).to_have_text("Lisbon")
    expect(former.locator(".fact-when")).to_contain_text("remembered when you asked")
    expect(home.locator(".fact-meta").first).to_contain_text("corrected by you")
    expect(home.locator(".fact-source")).to_have_text("Corrected by you, not from a conversation.")
    expect(former.get_by_role("link", name="“Moving house”")).to_be_visible()  # where the old value was said
    with navi.client() as http:
        facts = {f["key"]: f for f in http.get("/memory/facts").json()}
        assert facts["home_city"]["value"] == "Porto"
        assert [h["value"] for h in http.get(f"/memory/facts/{facts['home_city']['id']}/history").json()] == [
            "Lisbon"
        ]

    # Escape in the box gives up the edit (not the panel); Enter saves.
    work = dialog.locator('li.fact:has(.fact-key:text-is("employer"))')
    work.get_by_role("button", name="Edit: employer").click()
    work.get_by_role("textbox", name="New value for employer").fill("Nobody")
    page.keyboard.press("Escape")
    expect(dialog).to_be_visible()
    expect(work.locator(".fact-main .fact-value")).to_have_text("Acme <b>Labs</b>")
    work.get_by_role("button", name="Edit: employer").click()
    work.get_by_role("textbox", name="New value for employer").fill("Acme Labs")
    page.keyboard.press("Enter")
    expect(work.locator(".fact-main .fact-value")).to_have_text("Acme Labs")

    # Delete asks first; Cancel keeps it, Delete removes it.
    cat = dialog.locator('li.fact:has(.fact-key:text-is("cat"))')
    cat.get_by_role("button", name="Delete: cat").click()
    confirm = page.get_by_role("dialog", name="Delete this fact?")
    confirm.get_by_role("button", name="Cancel").click()
    expect(cat).to_have_count(1)
    cat.get_by_role("button", name="Delete: cat").click()
    confirm.get_by_role("button", name="Delete").click()
    expect(cat).to_have_count(0)
    expect(dialog.locator(".memory-category h3")).to_have_text(["location", "work"])
    expect(dialog.locator("#memory-status")).to_have_text("Deleted: cat.")

    # Add: a missing part is named, nothing typed is lost; then it is listed.
    dialog.get_by_role("textbox", name="Category", exact=True).fill("pets")
    dialog.get_by_role("textbox", name="What", exact=True).fill("dog")
    dialog.get_by_role("button", name="Add").click()
    expect(dialog.locator("#memory-error")).to_have_text("Fill in the value.")
    expect(dialog.get_by_role("textbox", name="Category", exact=True)).to_have_value("pets")
    dialog.get_by_role("textbox", name="Value", exact=True).fill("Rex")
    dialog.get_by_role("button", name="Add").click()
    expect(dialog.locator("#memory-status")).to_have_text("Added: dog = Rex.")
    expect(dialog.locator("#memory-error")).to_be_hidden()
    expect(dialog.locator('li.fact:has(.fact-key:text-is("dog")) .fact-value')).to_have_text("Rex")
    with navi.client() as http:
        assert sorted(f["value"] for f in http.get("/memory/facts").json()) == [
            "Acme Labs",
            "Porto",
            "Rex",
        ]

    # Search filters the list; clearing it shows everything again.
    search = dialog.get_by_role("searchbox", name="Search memory")
    search.fill("porto")
    expect(dialog.locator("li.fact .fact-main .fact-value")).to_have_text(["Porto"])
    search.fill("zeppelin")
    expect(dialog.locator("li.fact")).to_have_count(0)
    expect(dialog.locator("#memory-empty")).to_have_text("Nothing remembered matches “zeppelin”.")
    search.fill("")
    expect(dialog.locator("li.fact")).to_have_count(3)


def test_each_user_sees_only_their_facts_in_the_panel(browser: Browser, page: Page, navi: LiveNavi) -> None:
    bob = users(navi, "add", "bob")
    with navi.client() as http:
        http.post("/memory/facts", json={"category": "pets", "key": "cat", "value": "Miso"})
    with navi.client(anonymous=True, headers={"Authorization": f"Bearer {bob}"}) as as_bob:
        as_bob.post("/memory/facts", json={"category": "pets", "key": "dog", "value": "Rex"})
    context, watched = open_context(browser, navi, signed_in=False)
    theirs = context.new_page()
    theirs.goto("/login")
    theirs.get_by_label("Access token").fill(bob)
    theirs.get_by_role("button", name="Sign in").click()
    wait_ready(theirs)
    for shown, value in ((theirs, "Rex"), (open_app(page), "Miso")):
        shown.get_by_role("button", name="Memory").click()
        expect(shown.get_by_role("dialog", name="Memory").locator("li.fact .fact-value")).to_have_text(
            [value]
        )
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_the_panel_works_by_touch_on_a_phone(phone: tuple[BrowserContext, Watched], navi: LiveNavi) -> None:
    with navi.client() as http:
        http.post("/memory/facts", json={"category": "location", "key": "home city", "value": "Lisbon"})
    context, _ = phone
    page = open_app(context.new_page())
    page.get_by_role("button", name="Show conversations").tap()
    page.locator("#open-memory").tap()
    dialog = page.get_by_role("dialog", name="Memory")
    expect(dialog).to_be_visible()
    expect(page.locator("#sidebar")).not_to_have_class("sidebar open")  # the list closed under it
    assert page.evaluate("() => document.activeElement.tagName") != "INPUT"  # no keyboard over the list
    no_sideways_scroll(page, "the memory panel")
    home = dialog.locator("li.fact")
    edit = home.get_by_role("button", name="Edit: home city")
    box = edit.bounding_box()
    assert box is not None and box["height"] >= 40, box  # big enough for a finger
    edit.tap()
    home.get_by_role("textbox", name="New value for home city").fill("Porto")
    home.get_by_role("button", name="Save").tap()
    expect(home.locator(".fact-main .fact-value")).to_have_text("Porto")
    home.get_by_role("button", name="Where from: home city").tap()
    expect(home.locator(".fact-history li .fact-value")).to_have_text("Lisbon")
    no_sideways_scroll(page, "a fact opened")
    home.get_by_role("button", name="Delete: home city").tap()
    page.get_by_role("dialog", name="Delete this fact?").get_by_role("button", name="Delete").tap()
    expect(dialog.locator("li.fact")).to_have_count(0)
    dialog.get_by_role("button", name="Close memory").tap()
    expect(dialog).to_be_hidden()
