"""Background jobs in the page: a task typed and sent with Background (beside Send) runs as a job of
this conversation, which stays free; the result is drawn into the conversation when it is posted;
the Jobs panel lists it with its steps, and stops a running one. A question sent with Research
runs as a research job over pages the test serves: the panel shows its phase, sub-questions and
sources read; the report comes back with its Markdown and PDF files, downloaded from the page."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from navi.documents.extract import extract
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall, ScriptRequest
from navi.testing.threaded import ThreadedServer
from tests.server_helpers import LiveNavi, use_script
from tests.test_research import pages, research_responder  # noqa: F401 (pages: the test's site)
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


@pytest.mark.navi(
    planning_enabled=False,
    ollama_num_ctx=4096,
    navi_fetch_allowed_hosts="127.0.0.1",  # the pages served by the test; nothing else
    navi_research_web_search=False,
)
def test_research_beside_send_its_progress_and_its_report_files(
    page: Page,
    navi: LiveNavi,
    fake_server: FakeModelServer,
    pages: ThreadedServer,  # noqa: F811 (the fixture imported above)
) -> None:
    script = use_script(fake_server)
    played = research_responder(script)
    writing = threading.Event()

    def respond(request: ScriptRequest) -> Reply | str:
        answer = played(request)
        if request.system_text.startswith("You write a research report") and isinstance(answer, str):
            # Held after its first words until the panel was seen saying so (a fixed delay was
            # too short on a loaded machine: CI saw the job done before the panel drew the phase).
            return Reply(text=answer, chunk_chars=40, hold=writing, wait_after=1)
        return answer

    script.responder = respond
    open_app(page)
    page.locator("#research").click()
    expect(page.locator(".toast").last).to_contain_text("Write the question first")
    page.locator("#input").fill(f"The Kestrel 7: battery range and weight. Start at {pages.url}/index.html")
    page.locator("#research").click()
    expect(page.locator(".toast").last).to_contain_text("Research “The Kestrel 7: battery range")
    origin = session_id(page)

    # The Jobs panel: a research job, its phase, sub-questions and the sources read as it goes.
    page.locator("#open-jobs").click()
    row = page.locator("#job-list li.job").first
    expect(row).to_have_attribute("data-mode", "research")
    expect(row.locator(".job-kind")).to_have_text("Research")
    expect(row.locator(".job-detail")).to_have_text(
        "researching: writing the report from 4 sources", timeout=30_000
    )
    writing.set()
    expect(row.locator(".job-plan li")).to_have_text(["Kestrel 7 battery range", "Kestrel 7 weight"])
    expect(row.locator(".job-sources")).to_have_text("4 sources read")
    expect(row).to_have_attribute("data-state", "done", timeout=30_000)
    page.locator("#close-jobs").click()

    # The report is posted into the conversation, with its Markdown and PDF files to download.
    messages = page.locator("#messages")
    expect(messages).to_contain_text("is done:")
    expect(messages.locator("h2", has_text="Sources")).to_have_count(1)
    links = messages.locator(".answer-files a.chip")
    expect(links).to_have_count(2)
    md_name, pdf_name = links.nth(0).inner_text().strip(), links.nth(1).inner_text().strip()
    assert md_name.startswith("research-") and md_name.endswith(".md")
    assert pdf_name == md_name.removesuffix(".md") + ".pdf"
    with page.expect_download() as got:
        links.nth(1).click()
    download = got.value
    assert download.suggested_filename == pdf_name
    pdf_text = " ".join(extract(Path(download.path()).read_bytes(), pdf_name).text.split())
    assert "Sub-questions 1. Kestrel 7 battery range 2. Kestrel 7 weight" in pdf_text
    assert "The Kestrel 7 battery gives a range of 85 km" in pdf_text
    markdown = page.request.get(str(links.nth(0).get_attribute("href")))
    assert markdown.ok and markdown.text().startswith("# Research: The Kestrel 7")
    assert session_id(page) == origin
