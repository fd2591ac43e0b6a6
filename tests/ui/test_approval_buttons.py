"""Approvals on the page: the pending tool card asks (reason, Allow / Deny / Always), the answer goes
on the socket, the buttons go when Navi says the question is answered, and a reload mid-wait asks
again — but not for a question answered before the reload."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, reload, send, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.navi(navi_approval_mode="smart", planning_enabled=False)]


def call(name: str, args: dict) -> Reply:
    return Reply(tool_calls=[ScriptedCall(name, args)])


def test_allow_deny_and_always(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    first, second, third = tmp_path / "first", tmp_path / "second", tmp_path / "third"
    use_script(fake_server).turn(
        call("terminal", {"command": f"touch {first}"}),
        call("filesystem", {"action": "delete", "path": str(first)}),
        call("terminal", {"command": f"touch {second}"}),
        call("terminal", {"command": f"touch {third}"}),  # remembered: no question
        Reply(text="Files are ready."),
    )
    open_app(page)
    send(page, "Make the files")
    cards = page.locator("article.turn details.tool")

    card = cards.nth(0)
    expect(card.locator(".approval-reason")).to_have_text(
        f"Navi asks before running this: it runs a program on this machine: touch {first}"
    )
    expect(card.locator(".tool-args")).to_contain_text(f"touch {first}")  # the card is open
    card.get_by_role("button", name="Allow").click()
    expect(card.locator(".approval-outcome")).to_have_text("Allowed.")
    expect(card.locator(".approval button")).to_have_count(0)
    expect(card.locator(".status")).to_have_text("done")

    card = cards.nth(1)
    expect(card.locator(".approval-reason")).to_contain_text(f"it changes files (delete): {first}")
    expect(card.get_by_role("button", name="Always")).to_be_visible()  # filesystem can be remembered
    card.get_by_role("button", name="Deny").click()
    expect(card.locator(".approval-outcome")).to_have_text("Declined: not run.")
    expect(card.locator(".tool-result")).to_contain_text("the user declined to run this filesystem call")
    expect(card.locator(".status")).to_have_text("declined")  # the user's choice, not a failure
    expect(card).to_have_class("tool declined")

    card = cards.nth(2)
    always = card.get_by_role("button", name="Always")
    expect(always).to_have_attribute(
        "title", "Run it, and from now on allow every terminal command that runs touch without asking"
    )
    always.click()
    expect(card.locator(".approval-outcome")).to_contain_text("remembered")

    expect(page.locator("article.turn").last).to_contain_text("Files are ready.")
    wait_idle(page)
    expect(cards).to_have_count(4)
    expect(cards.nth(3).locator(".approval")).to_have_count(0)  # the remembered program ran unasked
    expect(page.locator(".approval-actions")).to_have_count(0)
    assert first.exists() and second.exists() and third.exists()
    summary = re.compile(r"^Used terminal, you declined filesystem, worked for \d+ s$")
    expect(page.locator("details.steps > summary")).to_have_text(summary)

    # Read back from the history: the declined call is still drawn as declined, nothing as failed.
    reload(page)
    expect(page.locator("details.steps > summary")).to_have_text(summary)
    declined = page.locator("details.tool[data-tool='filesystem']")
    expect(declined).to_have_class("tool declined")
    expect(declined.locator(".status")).to_have_text("declined")
    expect(page.locator("details.tool.failed")).to_have_count(0)


def test_a_reload_while_waiting_asks_again(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    made = tmp_path / "made"
    use_script(fake_server).turn(
        call("terminal", {"command": f"touch {made}"}),
        call("code_exec", {"code": "print('hello')"}),
        Reply(text="All done."),
    )
    open_app(page)
    send(page, "Two steps")
    terminal = page.locator("details.tool[data-tool='terminal']")
    expect(terminal.get_by_role("button", name="Allow")).to_be_visible()

    reload(page, mid_run=True)  # the running turn is replayed: the question is asked again
    terminal = page.locator("details.tool[data-tool='terminal']")
    terminal.get_by_role("button", name="Allow").click()
    expect(terminal.locator(".approval-outcome")).to_have_text("Allowed.")
    code = page.locator("details.tool[data-tool='code_exec']")
    expect(code.get_by_role("button", name="Deny")).to_be_visible()

    reload(page, mid_run=True)  # the replay holds the first answer: only the open question has buttons
    terminal = page.locator("details.tool[data-tool='terminal']")
    code = page.locator("details.tool[data-tool='code_exec']")
    expect(code.get_by_role("button", name="Deny")).to_be_visible()
    expect(terminal.locator(".approval-outcome")).to_have_text("Allowed.")
    expect(terminal.locator(".approval button")).to_have_count(0)
    code.get_by_role("button", name="Deny").click()
    expect(code.locator(".approval-outcome")).to_have_text("Declined: not run.")
    expect(page.locator("article.turn").last).to_contain_text("All done.")
    wait_idle(page)
    assert made.exists()


@pytest.mark.navi(navi_approval_mode="smart", planning_enabled=False, navi_approval_timeout_seconds=1.5)
def test_a_question_nobody_answers_and_one_stopped(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    late, stopped = tmp_path / "late", tmp_path / "stopped"
    use_script(fake_server).turn(
        call("terminal", {"command": f"touch {late}"}),
        Reply(text="Nobody answered."),
        call("terminal", {"command": f"touch {stopped}"}),
    )
    open_app(page)
    send(page, "First")
    card = page.locator("article.turn details.tool").last
    expect(card.get_by_role("button", name="Allow")).to_be_visible()
    expect(card.locator(".approval-outcome")).to_have_text("Not run: nobody answered in time.")
    expect(card.locator(".approval button")).to_have_count(0)
    wait_idle(page)
    expect(card.locator(".status")).to_have_text("not run: nobody answered")
    expect(page.locator("details.steps > summary")).to_have_text(
        re.compile(r"^1 call not run, worked for \d+ s$")
    )

    send(page, "Second")
    card = page.locator("article.turn").last.locator("details.tool")
    expect(card.get_by_role("button", name="Allow")).to_be_visible()
    page.locator("#stop").click()
    expect(card.locator(".approval-outcome")).to_have_text("Not run: stopped.")
    expect(page.locator("article.turn").last.locator(".notice.stopped")).to_be_visible()
    wait_idle(page)
    expect(card.locator(".status")).to_have_text("not run: stopped")
    expect(page.locator("details.tool.failed")).to_have_count(0)
    assert not late.exists() and not stopped.exists()


def test_an_answered_question_folds_its_turn_and_a_declined_call_is_no_error(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    made = tmp_path / "made"
    use_script(fake_server).turn(
        call("terminal", {"command": f"touch {made}"}),
        call("terminal", {"command": f"rm {made}"}),
        Reply(text="I left the file alone.", delay=0.3),
    )
    open_app(page)
    send(page, "Make the file, then remove it")
    steps = page.locator("article.turn details.steps")
    cards = page.locator("article.turn details.tool")
    cards.nth(0).get_by_role("button", name="Allow").click()  # the question opened the turn
    cards.nth(1).get_by_role("button", name="Deny").click()
    expect(page.locator("article.turn .markdown.text")).to_have_text(["I left the file alone."])
    expect(steps).not_to_have_attribute("open", "")  # answered: folded like any turn
    wait_idle(page)
    expect(steps).not_to_have_attribute("open", "")

    for when in ("live", "read back"):
        steps.locator("> summary").click()
        # One level of boxes: the calls show opened, their arguments in view without a second click.
        expect(cards.nth(0).locator(".tool-args")).to_be_visible()
        declined = cards.nth(1)
        expect(declined.locator(".tool-args")).to_be_visible()
        expect(declined.locator(".status")).to_have_text("declined")
        expect(declined.locator(".tool-label").nth(1)).to_have_text("What Navi was told")
        told = declined.locator(".tool-result")
        expect(told).to_contain_text("the user declined to run this terminal call")
        expect(told).not_to_contain_text("Error")
        expect(page.locator("article.turn .notice.error, article.turn [role=alert]")).to_have_count(0)
        if when == "live":
            outcome = declined.locator(".approval-outcome")
            expect(outcome).to_have_text("Declined: not run.")
            text_color = page.evaluate("getComputedStyle(document.querySelector('.turn')).color")
            assert outcome.evaluate("(n) => getComputedStyle(n).color") == text_color  # neutral
            reload(page)
    assert made.exists()
