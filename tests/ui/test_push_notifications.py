"""Web Push in Chromium: the service worker receives a push delivered through the DevTools protocol
(`ServiceWorker.deliverPushMessage`, as a push service would hand it over) and shows the
notification; its click opens the conversation in the open Navi window, at the answer it names
(`?m=`); an approval's Allow action answers the waiting call with the browser's own sign-in, and
the turn goes on.

Headless Chromium has no notification centre to click, so the click is the `notificationclick`
event dispatched in the service worker on the notification it showed (what Chromium does when a
person clicks it)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, CDPSession, Page, Route, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import Watched, open_app, open_context, send, session_id, wait_idle

pytestmark = pytest.mark.browser

CONTROLLED = "navigator.serviceWorker.ready.then(() => navigator.serviceWorker.controller !== null)"
SHOWN = """navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((notes) =>
  notes.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data,
                     actions: n.actions.map((a) => a.action), requireInteraction: n.requireInteraction })))"""
CLICK = """async ([tag, action]) => {
  const [note] = await self.registration.getNotifications({ tag });
  const event = new NotificationEvent("notificationclick", { notification: note, action });
  self.dispatchEvent(event);
  return Boolean(note);
}"""


@pytest.fixture
def granted(browser: Browser, navi: LiveNavi) -> Iterator[tuple[BrowserContext, Watched]]:
    context, watched = open_context(browser, navi, service_workers="allow")  # the push arrives there
    context.grant_permissions(["notifications"], origin=navi.url)
    yield context, watched
    context.close()
    assert watched.errors == [] and watched.foreign == []


def worker_ready(page: Page) -> None:
    for _ in range(150):
        if page.evaluate(CONTROLLED):
            return
        page.wait_for_timeout(100)
    raise AssertionError("the service worker never took the page")


def registration_id(cdp: CDPSession, navi: LiveNavi) -> str:
    found: list[dict[str, Any]] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: found.extend(event["registrations"]))
    cdp.send("ServiceWorker.enable")
    for _ in range(100):
        ids = [r["registrationId"] for r in found if r["scopeURL"] == navi.url + "/" and not r["isDeleted"]]
        if ids:
            return str(ids[0])
        cdp.send("Runtime.evaluate", {"expression": "1"})  # lets the events arrive
    raise AssertionError(f"no registration for {navi.url}/: {found}")


def push(cdp: CDPSession, navi: LiveNavi, registration: str, payload: dict[str, Any]) -> None:
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": navi.url, "registrationId": registration, "data": json.dumps(payload)},
    )


def delivered(
    page: Page, cdp: CDPSession, navi: LiveNavi, registration: str, payload: dict[str, Any]
) -> dict[str, Any]:
    """The notification the service worker showed for `payload`, pushed to `registration`. A push
    service sends a message again when the browser did not take it; so here, once, after 10 s
    without the notification (seen once in a full run on the loaded machine)."""
    for attempt in range(2):
        push(cdp, navi, registration, payload)
        for _ in range(100 * (attempt + 1)):
            for note in page.evaluate(SHOWN):
                if note["tag"] == payload["tag"]:
                    return dict(note)
            page.wait_for_timeout(100)
    raise AssertionError(f"no notification tagged {payload['tag']}: {page.evaluate(SHOWN)}")


def click(context: BrowserContext, tag: str, action: str = "") -> None:
    workers = context.service_workers
    assert workers, "no service worker"
    assert workers[0].evaluate(CLICK, [tag, action]), f"no notification tagged {tag} to click"


def stored_answer(navi: LiveNavi, session: str, within: float = 30.0) -> str:
    """The id of the session's latest answer, once stored (the page may be idle a moment before)."""
    deadline = time.monotonic() + within
    with navi.client() as http:
        while True:
            said = http.get(f"/sessions/{session}").json()["messages"]
            found = [m["id"] for m in said if m["role"] == "assistant"]
            if found:
                return str(found[-1])
            assert time.monotonic() < deadline, said
            time.sleep(0.1)


def test_a_push_shows_a_notification_whose_click_opens_the_conversation(
    granted: tuple[BrowserContext, Watched], navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    context, _ = granted
    use_script(fake_server).turn(Reply(text="The tide turns at four."))
    page = open_app(context.new_page())
    worker_ready(page)
    send(page, "When does the tide turn?")
    wait_idle(page)
    answered = session_id(page)
    answer_id = stored_answer(navi, answered)
    page.locator("#new-session-button").click()
    expect(page).not_to_have_url(f"{navi.url}/#/s/{answered}")

    cdp = context.new_cdp_session(page)
    registration = registration_id(cdp, navi)
    note = delivered(
        page,
        cdp,
        navi,
        registration,
        {
            "kind": "answer",
            "title": "Tide question",
            "body": "The tide turns at four.",
            "url": f"/#/s/{answered}?m={answer_id}",  # as Navi sends an answer's: at the answer
            "session_id": answered,
            "message_id": answer_id,
            "tag": f"navi-{answered}",
        },
    )
    assert note["title"] == "Tide question" and note["body"] == "The tide turns at four."
    assert note["data"]["url"] == f"/#/s/{answered}?m={answer_id}" and note["actions"] == []
    click(context, f"navi-{answered}")
    expect(page).to_have_url(f"{navi.url}/#/s/{answered}")
    # Opened at the answer: it is shown marked, as a search hit is.
    revealed = page.locator(f'[data-message-id="{answer_id}"]')
    expect(revealed).to_have_text("The tide turns at four.")
    expect(revealed).to_have_class(re.compile(r"\bsearch-target\b"))
    # The click closed the notification.
    assert all(n["tag"] != f"navi-{answered}" for n in page.evaluate(SHOWN))


@pytest.mark.navi(navi_approval_mode="smart", planning_enabled=False)
def test_allow_on_an_approval_notification_answers_it(
    granted: tuple[BrowserContext, Watched], navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    context, _ = granted
    target = tmp_path / "made-from-the-notification"
    use_script(fake_server).turn(
        Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {target}"})]),
        Reply(text="Made it."),
    )
    page = open_app(context.new_page())
    worker_ready(page)
    send(page, "Make the file")
    expect(
        page.locator("article.turn details.tool").first.get_by_role("button", name="Allow")
    ).to_be_visible()
    sid = session_id(page)
    with navi.client() as http:
        [waiting] = http.get(f"/sessions/{sid}/approvals").json()
    cdp = context.new_cdp_session(page)
    note = delivered(
        page,
        cdp,
        navi,
        registration_id(cdp, navi),
        {
            "kind": "approval",
            "title": "Navi waits for you",
            "body": f"terminal: touch {target}",
            "url": f"/#/s/{sid}",
            "session_id": sid,
            "approval_id": waiting["call_id"],
            "tag": "navi-approval",
            "actions": [{"action": "allow", "title": "Allow"}, {"action": "deny", "title": "Deny"}],
        },
    )
    assert note["actions"] == ["allow", "deny"] and note["requireInteraction"] is True
    click(context, "navi-approval", "allow")
    expect(page.locator("article.turn").last.locator(".markdown.text")).to_have_text("Made it.")
    wait_idle(page)
    assert target.exists()


def test_the_settings_choose_kinds_and_quiet_hours(page: Page, navi: LiveNavi) -> None:
    open_app(page)
    page.locator("#open-settings").click()
    form = page.locator("#notify-settings")
    expect(form.locator('input[name="answers"]')).to_be_checked()
    expect(form.locator('input[name="quiet"]')).not_to_be_checked()
    form.locator('input[name="answers"]').uncheck()
    expect(page.locator("#settings-status")).to_have_text("Notification settings saved.")
    page.locator("#quiet-start").fill("23:15")
    page.locator("#quiet-end").fill("06:45")
    form.locator('input[name="quiet"]').check()
    with navi.client() as http:
        for _ in range(50):
            chosen = http.get("/push/settings").json()
            if chosen["quiet"]:
                break
            page.wait_for_timeout(100)
    assert chosen["answers"] is False and chosen["approvals"] is True
    assert chosen["quiet"] == {"start": "23:15", "end": "06:45"}
    page.reload()
    page.locator("#open-settings").click()
    expect(page.locator("#notify-settings input[name='answers']")).not_to_be_checked()
    expect(page.locator("#notify-settings input[name='quiet']")).to_be_checked()
    expect(page.locator("#quiet-start")).to_have_value("23:15")


def test_a_setting_changed_while_they_load_again_is_kept(page: Page, navi: LiveNavi) -> None:
    """The settings are read each time the dialog opens; a change made while that read is on its way
    must not be undone by its answer, which is older (found by CI: the checkbox clicked back)."""
    held: list[tuple[Route, object]] = []

    def hold_the_second_read(route: Route) -> None:
        if route.request.method != "GET":
            route.continue_()
            return
        reads.append(1)
        if len(reads) == 2:
            held.append((route, route.fetch()))  # the server's answer now (answers on), sent later
        else:
            route.continue_()

    reads: list[int] = []
    page.route(re.compile(r".*/push/settings$"), hold_the_second_read)
    open_app(page)
    page.locator("#open-settings").click()
    answers = page.locator('#notify-settings input[name="answers"]')
    expect(answers).to_be_checked()
    page.keyboard.press("Escape")
    page.locator("#open-settings").click()
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the dialog did not read the settings again"
    answers.uncheck()
    expect(page.locator("#settings-status")).to_have_text("Notification settings saved.")
    route, stale = held[0]
    route.fulfill(response=stale)  # type: ignore[arg-type]
    page.wait_for_timeout(300)
    expect(answers).not_to_be_checked()
    with navi.client() as http:
        assert http.get("/push/settings").json()["answers"] is False
