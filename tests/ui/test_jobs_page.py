"""Background jobs in the page: a task typed and sent with Background (beside Send) runs as a job of
this conversation, which stays free; the result is drawn into the conversation when it is posted;
the Jobs panel lists it with its steps, and stops a running one."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, send, session_id, wait_idle

pytestmark = pytest.mark.browser


@pytest.mark.navi(planning_enabled=False)
def test_background_beside_send_and_the_jobs_panel(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        "Hello.",
        Reply(tool_calls=[ScriptedCall("scratchpad", {"action": "write", "section": "n", "content": "B"})]),
        Reply(text="Bike B wins on range.", first_delay=0.5),
    )
    open_app(page)
    send(page, "Hi")
    expect(page.locator("#messages")).to_contain_text("Hello.")
    wait_idle(page)
    origin = session_id(page)
    expect(page.locator("#input")).to_have_value("")
    page.locator("#background").click()
    expect(page.locator(".toast").last).to_contain_text("Write the task first")
    page.locator("#input").fill("Compare bike A and bike B")
    page.locator("#background").click()
    expect(page.locator(".toast").last).to_contain_text("Background job “Compare bike A and bike B” started")
    expect(page.locator("#input")).to_have_value("")
    # The result is posted into this conversation and drawn without a reload.
    expect(page.locator("#messages")).to_contain_text("Background job “Compare bike A and bike B” is done")
    expect(page.locator("#messages")).to_contain_text("Bike B wins on range.")
    assert session_id(page) == origin

    page.locator("#open-jobs").click()
    row = page.locator("#job-list li.job").first
    expect(row).to_have_attribute("data-state", "done")
    expect(row.locator(".job-steps")).to_have_text("1/40 steps")
    expect(row).to_contain_text("latest step: scratchpad")

    script.turn(Reply(text="slow " * 60, chunk_chars=2, delay=0.5))
    page.locator("#close-jobs").click()
    page.locator("#input").fill("A slow survey")
    page.locator("#background").click()
    page.locator("#open-jobs").click()
    slow = page.locator("#job-list li.job").first
    expect(slow).to_contain_text("A slow survey")
    expect(slow).to_have_attribute("data-state", "running")
    slow.get_by_role("button", name="Stop").click()
    expect(page.locator("#job-list li.job").first).to_have_attribute("data-state", "stopped", timeout=20_000)
    # Its own session opens from the panel.
    page.locator("#job-list li.job").first.get_by_role("button", name="Open").click()
    expect(page.locator("#messages")).to_contain_text("A slow survey")
    assert session_id(page) != origin
