"""How answers are drawn: no raw Markdown markers while an answer streams, quotes with their bar,
plain code left uncoloured (only code that names its language is highlighted), a scheduled run's
preview read as text, and monospace lines that keep their underscores."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, send, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.navi(planning_enabled=False, navi_schedule_poll_seconds=0.2)]

STREAMED = "Before **the bold part of it** and `some code` then *a slanted bit* after.\n\n```\nplain\n```"


def test_an_answer_never_shows_raw_markers_while_it_streams(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn(Reply(text=STREAMED, chunk_chars=2, delay=0.06))
    open_app(page)
    send(page, "Stream something")
    answer = page.locator("article.turn .markdown.text")
    expect(answer).to_contain_text("Before")
    seen: list[tuple[str, int]] = []
    deadline = time.monotonic() + 30
    while page.locator("#stop").is_visible() and time.monotonic() < deadline:
        seen.append(answer.evaluate("(n) => [n.innerText, n.querySelectorAll('strong').length]"))
        page.wait_for_timeout(40)
    wait_idle(page)
    assert len(seen) > 10, "the answer should have been looked at many times while it streamed"
    raw = [text for text, _ in seen if "*" in text or "`" in text]
    assert raw == [], raw[:3]
    # While "the bold part" streamed it was already drawn bold, not waiting for its closing marker.
    assert any(bold and "the bold part" in text and "after" not in text for text, bold in seen)
    expect(answer.locator("strong")).to_have_text("the bold part of it")
    expect(answer.locator("em")).to_have_text("a slanted bit")


def test_quotes_plain_code_and_highlighted_code(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    text = (
        "> A quoted line.\n\nPlain output:\n\n```\nfoo: bar;\n.box { color: red }\n```\n\n"
        "Python:\n\n```python\ndef f():\n    return 1\n```"
    )
    use_script(fake_server).turn(text)
    open_app(page)
    send(page, "Show me")
    wait_idle(page)
    quote = page.locator("article.turn blockquote")
    expect(quote).to_have_text("A quoted line.")
    assert float(quote.evaluate("(n) => parseFloat(getComputedStyle(n).borderLeftWidth)")) >= 2
    blocks = page.locator("article.turn .code-block pre code")
    expect(blocks).to_have_count(2)
    expect(blocks.nth(0).locator("span")).to_have_count(0)  # not guessed to be SCSS
    expect(blocks.nth(0)).to_have_text("foo: bar;\n.box { color: red }\n")
    expect(blocks.nth(1).locator(".hljs-keyword").first).to_have_text("def")


def test_a_runs_preview_reads_as_text_and_the_debug_panel_keeps_underscores(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("**Done**: the `OLLAMA_HOST` check is _quiet_.")
    with navi.client() as http:
        made = http.post("/schedules", json={"prompt": "Check it", "every_seconds": 3600}).json()
        assert http.post(f"/schedules/{made['id']}/run").status_code == 202
        for _ in range(200):
            if http.get(f"/schedules/{made['id']}").json()["runs"][0]["status"] == "ok":
                break
            time.sleep(0.05)
    open_app(page)
    page.get_by_role("button", name="Schedules").click()
    page.locator("#schedule-list li.schedule").get_by_role("button", name="Runs").click()
    run = page.locator("#schedule-list .schedule-runs li")
    expect(run).to_contain_text("ok · ")
    expect(run).to_contain_text("Done: the OLLAMA_HOST check is quiet.")  # read as text, not Markdown
    expect(run).not_to_contain_text("*")
    page.keyboard.press("Escape")

    # The debug panel's monospace: a line with underscores is drawn with room below it.
    session = page.evaluate("fetch('/sessions').then((r) => r.json()).then((s) => s[0].id)")
    page.goto(f"/debug?session={session}")
    entry = page.locator("#debug-messages .entry pre", has_text="OLLAMA_HOST").first
    expect(entry).to_be_visible()
    line, font = entry.evaluate(
        "(n) => [parseFloat(getComputedStyle(n).lineHeight), parseFloat(getComputedStyle(n).fontSize)]"
    )
    assert line >= 1.35 * font, (line, font)
    assert entry.evaluate("(n) => n.scrollHeight <= n.clientHeight")  # nothing cut at the bottom
