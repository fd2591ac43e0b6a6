"""The header: the open conversation's profile (shown and changed where it is) and its model."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import ScriptRequest
from navi.tools.builtin.browser.profiles import Profiles
from tests.server_helpers import LiveNavi, use_script
from tests.test_user_signins import add_user, bearer
from tests.ui.browser import PHONE, open_app, open_context, reload, send, session_id, wait_idle

pytestmark = pytest.mark.browser


def test_the_header_shows_and_changes_the_open_conversations_profile(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("Hello.", "Now as the home profile.")
    with navi.client() as http:
        profiles = {p["id"]: p for p in http.get("/agents/profiles").json()}
        home = http.post("/sessions", json={"profile_id": "smart_home", "name": "Lights"}).json()
    picker = page.locator("#profile-picker")
    model = page.locator("#model-name")

    # A draft shows the profile it will be created with, and the model that will answer.
    open_app(page)
    expect(picker).to_have_value("secretary")
    expect(model).to_have_text(profiles["secretary"]["model"])
    send(page, "Hi")
    sid = session_id(page)
    wait_idle(page)
    expect(picker).to_have_value("secretary")

    # Another conversation shows its own profile — not the one last picked.
    page.locator(f'#sessions li[data-id="{home["session_id"]}"] .session-open').click()
    expect(page.locator("#session-title")).to_have_text("Lights")
    expect(picker).to_have_value("smart_home")

    # Changing it changes the open conversation, on the server, in the list and after a reload.
    page.locator(f'#sessions li[data-id="{sid}"] .session-open').click()
    expect(picker).to_have_value("secretary")
    picker.select_option("smart_home")
    item = page.locator(f'#sessions li[data-id="{sid}"] .session-meta')
    expect(item).to_contain_text(profiles["smart_home"]["name"])
    with navi.client() as http:
        assert http.get(f"/sessions/{sid}").json()["profile_id"] == "smart_home"
    send(page, "Still there?")
    wait_idle(page)
    reload(page)
    expect(picker).to_have_value("smart_home")
    expect(model).to_have_text(profiles["smart_home"]["model"])

    # In a draft the choice is the new conversation's, and it is remembered for the next draft.
    page.get_by_role("button", name="New conversation", exact=True).click()
    expect(picker).to_have_value("secretary")
    picker.select_option("smart_home")
    reload(page)
    expect(picker).to_have_value("smart_home")
    with navi.client() as http:
        assert len(http.get("/sessions").json()) == 2  # picking a profile creates nothing


def test_the_context_gauge_marks_where_compression_starts_and_lists_the_turns(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    from navi.testing.script import Reply

    use_script(fake_server).turn(
        Reply(text="First.", prompt_tokens=1234, completion_tokens=56),
        Reply(text="Second.", prompt_tokens=2345, completion_tokens=67),
    )
    meter = page.locator("#context-meter")
    mark = page.locator("#context-mark")
    open_app(page)
    for question, answer in (("One", "First."), ("Two", "Second.")):
        send(page, question)
        expect(page.locator("#messages")).to_contain_text(answer)  # the turn ran (not only began)
        wait_idle(page)
    expect(mark).to_be_visible()  # compression starts at 80% of the window (the default threshold)
    assert mark.evaluate("m => m.style.left") == "80%"
    expect(meter).to_have_attribute("title", re.compile(r"1,234 / 56\n  2,345 / 67$"))  # oldest first
    title = meter.get_attribute("title") or ""
    assert "Earlier messages are summarised from 52,428 tokens (80%)." in title
    reload(page)  # the turns come back from the stored history
    expect(mark).to_be_visible()
    expect(meter).to_have_attribute("title", title)


def turn_request(fake: FakeModelServer) -> ScriptRequest:
    """The latest call of a turn (not naming's)."""
    return [r for r in fake.requests if "a short title" not in (r.messages[0].content or "")][-1]


BIG = "gemma4:26b-a4b-it-q4_K_M"


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_instructions_a_profile_and_a_conversations_model_set_on_the_page(
    browser: Browser, navi: LiveNavi, fake_server: FakeModelServer, size: str, tmp_path: Path
) -> None:
    """Custom instructions and a profile of one's own made in Settings, a conversation's own model
    and instructions set beside its title: each reaches the model's request, and the header names
    the model that wrote the answer — on a desktop's screen and a phone's."""
    use_script(fake_server).turn("Soup it is.", "Encore une soupe.")
    phone = size == "phone"
    options = {"viewport": PHONE, "is_mobile": True, "has_touch": True} if phone else {}
    context, watched = open_context(browser, navi, **options)
    page = open_app(context.new_page())

    # Settings: "about me", "how to answer", and a profile with its instructions and model.
    if phone:
        page.locator("#open-sidebar").click()
    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_role("dialog", name="Settings")
    dialog.get_by_label("About me").fill("I live in Porto and cook for four.")
    dialog.get_by_label("How to answer").fill("Metric units, short answers.")
    dialog.get_by_role("button", name="Save instructions").click()
    expect(dialog.locator("#settings-status")).to_contain_text("Instructions saved")
    # A browser sign-in of this user's, which the profile will open pages with.
    Profiles(Path(navi.settings.navi_browser_profiles_dir)).save(
        "local", "shop", {"cookies": [], "origins": []}
    )
    dialog.get_by_role("button", name="New profile").click()
    dialog.get_by_label("Name").fill("Cook")
    dialog.get_by_label("Instructions", exact=True).fill("You are a careful cook.")
    dialog.get_by_label("Model", exact=True).select_option(f"ollama:{BIG}")
    expect(dialog.get_by_role("checkbox", name="todo")).to_be_checked()
    dialog.get_by_label("Browser sign-in").select_option("shop")
    dialog.get_by_role("button", name="Save profile").click()
    expect(dialog.locator("#custom-profile-list li")).to_have_count(1)
    made = httpx.get(f"{navi.url}/agents/profiles", headers=navi.auth).json()
    assert [p["browser_profile"] for p in made if p["name"] == "Cook"] == ["shop"]
    expect(dialog.locator("#custom-profile-list")).to_contain_text("Cook")
    page.screenshot(path=str(tmp_path / f"settings-{size}.png"))
    dialog.get_by_role("button", name="Close settings").click()

    # The new profile is picked for a new conversation: its prompt and model reach the model.
    picker = page.locator("#profile-picker")
    picker.select_option(label="Cook")
    send(page, "Soup?")
    expect(page.locator("#messages")).to_contain_text("Soup it is.")
    wait_idle(page)
    asked = turn_request(fake_server)
    system = asked.messages[0].content or ""
    assert asked.model == BIG and "You are a careful cook." in system
    assert "I live in Porto and cook for four." in system and "Metric units, short answers." in system
    model = page.locator("#model-name")
    expect(model).to_have_text(BIG)
    expect(model).to_be_visible()
    expect(picker).to_be_visible()
    box = picker.bounding_box()  # the picker's name is not cut ("Cook" here; the widest built-in below)
    assert box is not None and picker.evaluate("(s) => s.scrollWidth <= s.clientWidth + 1"), box

    # This conversation's own model and instructions, beside its title.
    page.get_by_role("button", name="Model and instructions for this conversation").click()
    own = page.get_by_role("dialog", name="This conversation")
    own.get_by_label("Model", exact=True).select_option("ollama:plain:1b")
    own.get_by_label("Instructions for this conversation").fill("Answer in French.")
    own.get_by_role("button", name="Save").click()
    expect(own).to_be_hidden()
    expect(model).to_have_text("plain:1b")  # picked: the next answer's model
    send(page, "Again")
    expect(page.locator("#messages")).to_contain_text("Encore une soupe.")
    wait_idle(page)
    asked = turn_request(fake_server)
    assert asked.model == "plain:1b" and "Answer in French." in (asked.messages[0].content or "")
    reload(page)
    expect(model).to_have_text("plain:1b")
    page.get_by_role("button", name="Model and instructions for this conversation").click()
    expect(own.get_by_label("Model", exact=True)).to_have_value("ollama:plain:1b")
    expect(own.get_by_label("Instructions for this conversation")).to_have_value("Answer in French.")
    page.screenshot(path=str(tmp_path / f"options-{size}.png"))
    own.get_by_role("button", name="Close").click()

    # The widest built-in profile's name reads whole in the picker.
    picker.select_option("secretary")
    expect(picker).to_have_value("secretary")
    assert picker.evaluate("(s) => s.scrollWidth <= s.clientWidth + 1")
    context.close()
    assert watched.errors == [] and watched.foreign == []


def test_a_builtin_profiles_model_picked_in_settings_is_used_for_this_user_alone(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    """Settings lists a model picker per built-in profile: the pick is stored for this user, named in
    the header, used by the next run; another user's Secretary keeps the profile's model."""
    use_script(fake_server).turn("On the small model.", "Back on the default.")
    open_app(page)
    model = page.locator("#model-name")
    expect(model).to_have_text("gemma4:e2b-it-q8_0")
    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_role("dialog", name="Settings")
    secretary = dialog.get_by_label("Personal Secretary", exact=True)
    expect(secretary).to_have_value("")
    expect(secretary.locator("option").first).to_have_text("Its own (gemma4:e2b-it-q8_0)")
    secretary.select_option("ollama:plain:1b")
    expect(dialog.locator("#settings-status")).to_have_text(
        "Personal Secretary answers you with plain:1b from the next message on."
    )
    dialog.get_by_role("button", name="Close settings").click()
    expect(model).to_have_text("plain:1b")  # the header names it at once
    expect(model).to_have_attribute("title", re.compile("picked by you for Personal Secretary"))
    with navi.client() as http:
        listed = {p["id"]: p for p in http.get("/agents/profiles").json()}
        assert listed["secretary"]["model_choice"] == "ollama:plain:1b"
        with ThreadPoolExecutor(1) as pool:  # the CLI runs its own event loop, the page's test has one
            bob_token = pool.submit(add_user, navi, "bob").result()
        with bearer(navi, bob_token) as bob:  # another user: the profile's own
            assert {p["id"]: p for p in bob.get("/agents/profiles").json()}["secretary"]["model"] == (
                "gemma4:e2b-it-q8_0"
            )

    send(page, "Hello")
    expect(page.locator("#messages")).to_contain_text("On the small model.")
    wait_idle(page)
    assert turn_request(fake_server).model == "plain:1b"

    # Kept after a reload; "Its own" again puts the profile's model back.
    reload(page)
    expect(model).to_have_text("plain:1b")
    page.get_by_role("button", name="Settings").click()
    expect(secretary).to_have_value("ollama:plain:1b")
    secretary.select_option("")
    expect(dialog.locator("#settings-status")).to_contain_text("its own model (gemma4:e2b-it-q8_0) again")
    dialog.get_by_role("button", name="Close settings").click()
    send(page, "Again")
    expect(page.locator("#messages")).to_contain_text("Back on the default.")
    wait_idle(page)
    assert turn_request(fake_server).model == "gemma4:e2b-it-q8_0"
