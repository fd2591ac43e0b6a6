"""The page's side of schedules: the panel creates, pauses, resumes, runs and deletes schedules and
shows the server's refusals; a scheduled run's session gets an unread badge that showing it
clears; a browser notification (captured by wrapping window.Notification) says the run ended, and
clicking it opens the session. The draft view has no WebSocket, so the first test also covers the
page's poll; the second a run that streams into the open conversation through its socket."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, open_context, send, session_id, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.navi(tz="Europe/Berlin", navi_schedule_poll_seconds=0.2)]

BROWSER_ZONE = "America/New_York"  # not Navi's: the moment typed is the browser's local time

# Every notification the page makes is recorded (title, body, and the object, to click it); their
# count is put on <html data-notes> for the test to wait on (waiting on a script needs eval, which
# the page's CSP forbids).
CAPTURE = """
window.__notes = [];
const RealNotification = window.Notification;
window.Notification = class extends RealNotification {
  constructor(title, options = {}) {
    const entry = { title, body: options.body };
    window.__notes.push(entry);
    document.documentElement.dataset.notes = String(window.__notes.length);
    super(title, options);
    entry.note = this;
  }
};
"""


@pytest.fixture
def notifying(browser: Browser, navi: LiveNavi) -> Iterator[tuple[BrowserContext, Page]]:
    context, watched = open_context(browser, navi, timezone_id=BROWSER_ZONE)
    context.grant_permissions(["notifications"], origin=navi.url)
    context.add_init_script(CAPTURE)
    page = context.new_page()
    yield context, page
    context.close()
    assert watched.foreign == [] and watched.errors == [], (watched.foreign, watched.errors)


def schedules(navi: LiveNavi) -> list[dict[str, Any]]:
    with navi.client() as http:
        return list(http.get("/schedules").json())


def unread(navi: LiveNavi, sid: str) -> bool:
    with navi.client() as http:
        return next(s["unread"] for s in http.get("/sessions").json() if s["id"] == sid)


def open_panel(page: Page) -> None:
    page.get_by_role("button", name="Schedules").click()
    expect(page.get_by_role("dialog", name="Schedules")).to_be_visible()


def test_a_one_off_made_in_the_panel_badges_its_session_and_notifies(
    notifying: tuple[BrowserContext, Page], navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    _, page = notifying
    script = use_script(fake_server)
    script.turn(Reply(text="Time to water the plants."))
    open_app(page)  # the draft view: no WebSocket, the page polls
    open_panel(page)
    page.get_by_label("Notify me").check()
    expect(page.locator("#notify-note")).to_contain_text("You will be notified")

    page.get_by_label("What should Navi do?").fill("Remind me to water the plants")
    page.get_by_label("Title").fill("Plants")
    # Far enough ahead that typing and sending it on a loaded machine never lands in the past (3 s
    # did once: "at … is in the past"), near enough for the run to come within expect's 15 s.
    moment = (datetime.now(ZoneInfo(BROWSER_ZONE)) + timedelta(seconds=8)).replace(microsecond=0)
    if moment.second == 0:  # Chromium shows HH:MM:00 as HH:MM, and Playwright's fill calls that malformed
        moment += timedelta(seconds=1)
    page.get_by_label("At (your browser's time)").fill(moment.strftime("%Y-%m-%dT%H:%M:%S"))
    page.get_by_role("button", name="Create schedule").click()
    row = page.locator("#schedule-list li.schedule")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Plants")
    expect(row).to_contain_text("Once,")
    expect(row).to_contain_text("Europe/Berlin")
    [made] = schedules(navi)
    assert made["kind"] == "at" and made["title"] == "Plants"
    assert datetime.fromisoformat(made["at"]) == moment  # New York's clock, as one instant
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog", name="Schedules")).to_be_hidden()

    # The run makes a new session: listed with a badge, and the notification says what it answered.
    badge = page.locator("#sessions li .unread-badge")
    expect(badge).to_have_count(1)
    sid = badge.locator("xpath=ancestor::li").get_attribute("data-id")
    assert sid and unread(navi, sid)
    expect(page.locator("html")).to_have_attribute("data-notes", "1")
    notes = page.evaluate("window.__notes.map(({title, body}) => ({title, body}))")
    assert notes == [{"title": "Plants", "body": "Time to water the plants."}]

    # Clicking it opens the session, which is read: the badge goes, here and on the server.
    with page.expect_response(lambda r: r.url.endswith(f"/sessions/{sid}/read") and r.ok):
        page.evaluate("window.__notes[0].note.onclick()")
    assert session_id(page) == sid
    expect(page.locator("article.turn").last).to_contain_text("Time to water the plants.")
    expect(badge).to_have_count(0)
    assert unread(navi, sid) is False


def test_run_now_in_this_conversation_streams_there_and_leaves_it_read(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Hello."), Reply(text="Your daily summary: all quiet."))
    open_app(page)
    send(page, "Hi")
    wait_idle(page)
    sid = session_id(page)

    open_panel(page)
    page.get_by_label("What should Navi do?").fill("Summarise my day")
    page.get_by_role("radio", name="This conversation").check()
    page.get_by_label("Repeatedly").check()
    page.get_by_label("Every", exact=True).fill("2")
    page.get_by_label("Unit").select_option("hours")
    page.get_by_role("button", name="Create schedule").click()
    row = page.locator("#schedule-list li.schedule")
    expect(row).to_contain_text("Every 2 hours")
    [made] = schedules(navi)
    assert made["every_seconds"] == 7200 and made["session_id"] == sid

    # The page shows this session: the run's end marks it read at once, no badge appears.
    with page.expect_response(lambda r: r.url.endswith(f"/sessions/{sid}/read") and r.ok):
        row.get_by_role("button", name="Run now").click()
        expect(row.locator(".schedule-last")).to_contain_text("Last run: ok")
    row.get_by_role("button", name="Runs").click()
    run = row.locator(".schedule-runs li")
    expect(run).to_contain_text("Your daily summary: all quiet.")
    page.keyboard.press("Escape")
    expect(page.locator("article.user .bubble").last).to_have_text("Summarise my day")
    expect(page.locator("article.turn").last).to_contain_text("Your daily summary: all quiet.")
    expect(page.locator("#sessions .unread-badge")).to_have_count(0)
    assert unread(navi, sid) is False


# Mail is set up (its server is never reached: nothing is delivered here), so a schedule may send
# its answers by mail; Matrix is not, so one that would send them to a room is refused.
@pytest.mark.navi(
    tz="Europe/Berlin",
    navi_schedule_poll_seconds=0.2,
    navi_email_address="navi@example.org",
    navi_email_imap_host="127.0.0.1",
    navi_email_imap_port=9,
    navi_email_smtp_host="127.0.0.1",
    navi_email_smtp_port=9,
    navi_email_poll_seconds=3600,
)
def test_a_bad_cron_is_explained_and_pause_resume_delete_reach_the_server(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    open_app(page)
    opener = page.get_by_role("button", name="Schedules")
    opener.focus()
    page.keyboard.press("Enter")  # the keyboard opens it, and Escape gives the focus back
    dialog = page.get_by_role("dialog", name="Schedules")
    expect(dialog).to_be_visible()
    expect(page.get_by_label("What should Navi do?")).to_be_focused()
    expect(dialog.locator("#schedule-empty")).to_be_visible()

    page.get_by_label("What should Navi do?").fill("Check the disks")
    page.get_by_label("By a cron expression").check()
    cron = page.get_by_label("Cron (minute hour day month weekday, in Navi's time zone)")
    cron.fill("61 * * * *")
    page.get_by_role("button", name="Create schedule").click()
    expect(page.locator("#schedule-error")).to_contain_text("cron '61 * * * *' is not valid")
    expect(cron).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("What should Navi do?")).to_have_value("Check the disks")  # kept
    expect(cron).to_have_value("61 * * * *")
    assert schedules(navi) == []

    # Where else the answer goes: CHANNEL:TO, checked before it is sent, kept when refused.
    cron.fill("0 3 * * *")
    deliver = page.get_by_label("Also send each answer to")
    deliver.fill("ana@example.org")
    page.get_by_role("button", name="Create schedule").click()
    expect(page.locator("#schedule-error")).to_contain_text("as channel:address")
    expect(deliver).to_have_attribute("aria-invalid", "true")
    assert schedules(navi) == []
    deliver.fill("matrix:!room:example.org")  # a channel this Navi has not set up: refused, saying why
    page.get_by_role("button", name="Create schedule").click()
    expect(page.locator("#schedule-error")).to_contain_text("matrix: that channel is not set up")
    expect(page.locator("#schedule-error")).to_contain_text("NAVI_MATRIX_HOMESERVER")
    expect(deliver).to_have_attribute("aria-invalid", "true")
    assert schedules(navi) == []
    deliver.fill("Email:ana@example.org")
    page.get_by_role("button", name="Create schedule").click()
    row = dialog.locator("#schedule-list li.schedule")
    expect(row).to_contain_text("Every day at 03:00 · Europe/Berlin")
    expect(row.locator(".schedule-deliver")).to_have_text("Also sent to email: ana@example.org")
    assert [s["deliver"] for s in schedules(navi)] == [{"channel": "email", "to": "ana@example.org"}]
    expect(deliver).to_have_value("")
    expect(page.locator("#schedule-error")).to_be_hidden()
    expect(page.get_by_label("What should Navi do?")).to_have_value("")

    # Every control of the panel has a name a screen reader can say.
    unnamed = [
        line
        for line in dialog.aria_snapshot().splitlines()
        if re.match(
            r"^\s*- (button|textbox|combobox|link|checkbox|radio|spinbutton)\s*(\[[^\]]*\])?:?$", line
        )
    ]
    assert unnamed == [], unnamed
    expect(row.get_by_role("button", name="Pause: Check the disks")).to_be_visible()

    row.get_by_role("button", name="Pause").focus()
    page.keyboard.press("Enter")
    expect(row.locator(".schedule-state")).to_have_text("Paused")
    expect(row.get_by_role("button", name="Resume")).to_be_focused()  # the redraw keeps the place
    assert [s["paused"] for s in schedules(navi)] == [True]
    row.get_by_role("button", name="Resume").click()
    expect(row.locator(".schedule-state")).to_have_count(0)
    assert [s["paused"] for s in schedules(navi)] == [False]

    # Run now: answered, but ana@example.org is on no allowlist, so the mail is not sent — the run
    # says so (an answer that did not go where the schedule sends it is not just "ok").
    use_script(fake_server).turn("The disks are fine.")
    row.get_by_role("button", name="Run now").click()
    expect(row.locator(".schedule-last")).to_contain_text("Not delivered to email:ana@example.org")
    expect(row.locator(".schedule-last")).to_contain_text("The disks are fine.")

    row.get_by_role("button", name="Delete").click()
    question = page.get_by_role("dialog", name="Delete this schedule?")  # asked in the page, over the panel
    expect(question).to_contain_text("The conversations it answered in stay.")
    question.get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    assert schedules(navi) == []
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(opener).to_be_focused()
