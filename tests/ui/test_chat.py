"""The chat page in Chromium against a live Navi and the fake model server: a whole turn, reload, stop."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from playwright.sync_api import Page, expect

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, use_script
from tests.ui.browser import open_app, reload, send, session_id, wait_idle

pytestmark = pytest.mark.browser

FINAL = (
    "## Your checklist\n\nEverything is **ready**.\n\n```python\ndef greet(name):\n"
    '    return f"hello {name}"\n```\n\nSee [the docs](https://example.org/docs).'
)


def test_a_turn_with_thinking_plan_tools_and_a_subagent(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.plan("1. Write the checklist\n2. Have a helper check it")
    script.turn(
        Reply(
            thinking="A checklist first.",
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Pack"]})],
        ),
        Reply(tool_calls=[ScriptedCall("spawn_agent", {"task": "Check the checklist."})]),
        # the subagent: thinks, uses a tool, answers
        Reply(
            thinking="Helper reasoning.",
            tool_calls=[ScriptedCall("scratchpad", {"action": "write", "section": "notes", "content": "ok"})],
        ),
        Reply(text="The checklist is fine."),
        # back in the main agent: the answer, thinking slowly enough to be seen open
        Reply(
            thinking="Now I can answer the person properly. " * 4,
            text=FINAL,
            prompt_tokens=1500,
            completion_tokens=40,
            chunk_chars=6,
            delay=0.05,
        ),
    )
    open_app(page)
    expect(page.locator("#empty-state")).to_be_visible()
    send(page, "Make me a travel checklist")
    sid = session_id(page)

    # While it runs: Stop is offered and the box takes messages to queue; the final thinking streams open.
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator("#input")).to_have_attribute("placeholder", re.compile("^Queue a message"))
    expect(page.locator("#send")).to_be_hidden()
    # The steps are one line that says what Navi is doing; inside it the thinking streams open.
    steps = page.locator("article.turn details.steps")
    expect(steps.locator("> summary")).to_have_text("Planned, used todo, asked a helper · thinking…")
    expect(steps).to_have_attribute("data-live", "true")
    streaming = page.locator("details.thinking", has_text="Now I can answer")
    expect(streaming).to_have_attribute("open", "")
    expect(streaming.locator("summary")).to_have_text("Thinking…")
    wait_idle(page)
    expect(streaming).not_to_have_attribute("open", "")  # collapsed at thinking_end
    expect(streaming.locator("summary")).to_have_text("Thought")
    expect(steps).to_have_attribute("data-live", "false")
    expect(steps.locator("> summary")).to_have_text(
        re.compile(r"^Planned, used todo, asked a helper, thought for \d+ s$")
    )

    turn = page.locator("article.turn")
    expect(page.locator("article.msg.user .bubble")).to_have_text("Make me a travel checklist")
    steps.locator("> summary").click()  # the steps open on a click
    plan = turn.locator("details.plan")
    expect(plan).to_contain_text("Write the checklist")
    expect(plan.locator("ol li")).to_have_count(2)
    # turn thinking of the tool-calling step, collapsed
    first_thought = turn.locator(".steps-body > details.thinking", has_text="A checklist first.")
    expect(first_thought).not_to_have_attribute("open", "")

    todo = turn.locator('details.tool[data-tool="todo"]')
    expect(todo).to_have_class("tool ok")
    expect(todo.locator(".status")).to_have_text("done")
    expect(todo.locator(".tool-args")).to_contain_text('"tasks"')
    expect(todo.locator(".tool-result")).to_contain_text("Pack")

    spawn = turn.locator('.steps-body > details.tool[data-tool="spawn_agent"]')
    expect(spawn).to_have_class("tool ok")
    expect(spawn.locator("> .tool-body > .tool-result")).to_contain_text("The checklist is fine.")
    nested = spawn.locator('.subcalls details.tool[data-tool="scratchpad"]')
    expect(nested).to_have_class("tool ok")
    expect(spawn.locator(".subcalls details.thinking")).to_contain_text("Helper reasoning.")
    top_level = turn.locator('.steps-body > details.tool[data-tool="scratchpad"]')
    expect(top_level).to_have_count(0)  # nested in the helper's card, not at top level

    # Markdown rendered and code highlighted.
    answer = turn.locator(".markdown.text").last
    expect(answer.locator("h2")).to_have_text("Your checklist")
    expect(answer.locator("strong")).to_have_text("ready")
    expect(answer.locator("pre code.hljs .hljs-keyword").first).to_have_text("def")
    link = answer.locator("a", has_text="the docs")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")

    # The context meter from stream_end, and the session in the sidebar with its new name.
    expect(page.locator("#context-text")).to_have_text("1,540 / 65,536 tokens")
    item = page.locator(f'#sessions li[data-id="{sid}"]')
    expect(item).to_have_class("session current")
    expect(item.locator(".session-name")).not_to_have_text("New conversation")
    expect(page.locator("#session-title")).to_have_text(item.locator(".session-name").inner_text())

    # Read back after a reload: the same blocks from the stored history.
    reload(page)
    turn = page.locator("article.turn")
    expect(turn.locator("details.steps > summary")).to_have_text(
        re.compile(r"^Planned, used todo, asked a helper, thought for \d+ s$")
    )
    expect(turn.locator("details.plan")).to_contain_text("Have a helper check it")
    expect(turn.locator('details.tool[data-tool="todo"].ok .tool-result')).to_contain_text("Pack")
    expect(turn.locator('details.tool[data-tool="spawn_agent"].ok')).to_have_count(1)
    expect(turn.locator(".markdown.text h2")).to_have_text("Your checklist")
    expect(page.locator("#context-text")).to_have_text("1,540 / 65,536 tokens")


def test_reload_mid_stream_shows_the_turn_so_far_and_carries_on(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    words = " ".join(f"word{i}" for i in range(120))
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Listen"]})]),
        Reply(text=words, chunk_chars=6, delay=0.04),
    )
    open_app(page)
    send(page, "Tell me a long story")
    session_id(page)
    answer = page.locator("article.turn .markdown.text")
    expect(answer).to_contain_text("word10")
    reload(page, mid_run=True)
    # Everything so far is back — the user's message once, the tool card, the text — and it goes on.
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator("#input")).to_have_attribute("placeholder", re.compile("^Queue a message"))
    expect(page.locator("article.msg.user")).to_have_count(1)
    expect(page.locator('details.tool[data-tool="todo"].ok')).to_have_count(1)
    expect(answer).to_contain_text("word0 word1 word2")
    expect(answer).to_contain_text("word119")
    wait_idle(page)
    assert answer.inner_text().strip() == words
    expect(page.locator("article.turn")).to_have_count(1)


def test_stop_button_and_escape_stop_a_run(page: Page, navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    long = "slowly " * 200
    script.turn(Reply(text=long, chunk_chars=7, delay=0.05), Reply(text=long, chunk_chars=7, delay=0.05))
    open_app(page)
    send(page, "Go on and on")
    sid = session_id(page)
    answer = page.locator("article.turn .markdown.text").first
    expect(answer).to_contain_text("slowly slowly slowly")
    page.locator("#stop").click()
    expect(page.locator("article.turn .notice.stopped")).to_have_text("Stopped.")
    wait_idle(page)
    shown = answer.inner_text()
    assert 0 < len(shown) < len(long)

    send(page, "Again")
    expect(page.locator("article.turn").nth(1).locator(".markdown.text")).to_contain_text("slowly slowly")
    page.keyboard.press("Escape")
    expect(page.locator("article.turn").nth(1).locator(".notice.stopped")).to_be_visible()
    wait_idle(page)

    # The partial answers were saved as stopped and read back as such.
    with navi.client() as http:
        stored = http.get(f"/sessions/{sid}").json()["messages"]
    assert [m["stopped"] for m in stored if m["role"] == "assistant"] == [True, True]
    page.reload()
    expect(page.locator("article.turn .notice.stopped")).to_have_count(2)


@pytest.mark.navi(ollama_num_ctx=16384, context_keep_recent=1)
def test_profile_switch_error_and_compression_are_shown(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    with navi.client() as http:
        profiles = {p["id"]: p["name"] for p in http.get("/agents/profiles").json()}
    script.turn(
        Reply(tool_calls=[ScriptedCall("switch_profile", {"profile_id": "smart_home"})]),
        Reply(text="I switched.", prompt_tokens=800),
        Reply(status=500, error="model exploded"),
        Reply(text="Short answer.", prompt_tokens=800),
        Reply(text="Long conversation now.", prompt_tokens=14_500, completion_tokens=10),
    )
    script.summary("Summary: the person switched to the home profile.")
    open_app(page)
    first = page.locator("#profile-picker option").first.inner_text()
    send(page, "Switch to the home profile")
    wait_idle(page)
    expect(page.locator("#profile-picker")).to_have_value("smart_home")
    assert profiles["smart_home"] != first

    send(page, "This one fails")
    error = page.locator("article.turn .notice.error")
    expect(error).to_contain_text("model exploded")
    wait_idle(page)
    expect(page.locator("#input")).to_have_value("")  # it was sent; the failure is on the model's side

    send(page, "Third")
    wait_idle(page)
    send(page, "Fourth, a big one")
    marker = page.locator(".notice.compressed")
    expect(marker).to_contain_text("Context compressed")
    reload(page)
    expect(page.locator(".notice.compressed")).to_have_count(1)
    expect(page.locator("#profile-picker")).to_have_value("smart_home")


def test_status_while_the_model_reads_then_a_cut_off_answer_says_so(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.plan("DIRECT")
    script.turn(Reply(text="A long answer that stops in the mid", first_delay=2.0, finish_reason="length"))
    open_app(page)
    send(page, "Tell me everything")
    # Before the first token the turn says what Navi is doing; the line goes when text arrives.
    status = page.locator(".turn .status-line")
    expect(status).to_contain_text("Waiting for the model")
    expect(status).to_contain_text("tokens")
    wait_idle(page)
    expect(status).to_have_count(0)
    expect(page.locator(".turn").last).to_contain_text("A long answer that stops in the mid")
    expect(page.locator(".notice.cut")).to_have_text("The reply was cut off at its length limit.")


@pytest.mark.navi(planning_enabled=False)
def test_a_turn_without_thinking_says_worked_for_not_thought_for(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    # A model that does not think may still stream blank "thinking" (a newline or two).
    script = use_script(fake_server)
    script.turn(
        Reply(thinking="\n\n", tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Buy milk"]})]),
        Reply(thinking=" \n", text="Milk is on the list."),
    )
    open_app(page)
    send(page, "Remember milk")
    expect(page.locator("article.turn .markdown.text")).to_have_text(["Milk is on the list."])
    wait_idle(page)
    steps = page.locator("details.steps > summary")
    expect(steps).to_have_text(re.compile(r"^Used todo, worked for \d+ s$"))
    expect(page.locator("article.turn details.thinking")).to_have_count(0)
    reload(page)  # read back from the history, the same
    expect(steps).to_have_text(re.compile(r"^Used todo, worked for \d+ s$"))
    expect(page.locator("article.turn details.thinking")).to_have_count(0)


def test_copy_under_an_answer_gives_its_markdown_or_its_text(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn(Reply(text="Use **bold** and `code`:\n\n- one\n- two"))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=navi.url)
    open_app(page)
    send(page, "Show me formatting")
    wait_idle(page)
    actions = page.locator("article.turn").last.locator(".msg-actions")
    actions.get_by_role("button", name="Copy", exact=True).click()
    expect(actions.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("() => navigator.clipboard.readText()") == "Use **bold** and `code`:\n\n- one\n- two"
    reload(page)  # drawn from the history: the same
    actions = page.locator("article.turn").last.locator(".msg-actions")
    actions.get_by_role("button", name="Copy text").click()
    expect(actions.get_by_role("button", name="Copied")).to_be_visible()
    plain = page.evaluate("() => navigator.clipboard.readText()")
    assert "**" not in plain and "`" not in plain and "Use bold and code:" in plain and "two" in plain

    # Each message says when it was written; the exact moment on hover.
    with navi.client() as http:
        stored = http.get(f"/sessions/{session_id(page)}").json()["messages"]
    shown = page.locator("article.msg .msg-actions time.msg-time")
    expect(shown).to_have_count(2)
    for node, message in zip(shown.all(), stored, strict=True):
        at = datetime.fromisoformat(str(node.get_attribute("datetime")).replace("Z", "+00:00"))
        assert abs((at - datetime.fromisoformat(message["created_at"])).total_seconds()) < 0.01
        assert re.fullmatch(r"\d\d:\d\d( [AP]M)?", node.inner_text()), node.inner_text()
        assert node.get_attribute("title")


def test_an_answer_is_rated_kept_and_shown_in_the_debug_panel(
    page: Page, navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn("A fine answer.")
    open_app(page)
    send(page, "Rate me")
    wait_idle(page)
    actions = page.locator("article.turn").last.locator(".msg-actions")
    actions.get_by_role("button", name="A good answer").click()
    expect(actions.get_by_role("button", name="A good answer")).to_have_attribute("aria-pressed", "true")
    sid = session_id(page)
    with navi.client() as http:
        answer = http.get(f"/sessions/{sid}").json()["messages"][-1]
    assert answer["role"] == "assistant" and answer["metadata"]["feedback"] == "up"
    reload(page)  # drawn from the history with its rating; changed to 👎
    actions = page.locator("article.turn").last.locator(".msg-actions")
    expect(actions.get_by_role("button", name="A good answer")).to_have_attribute("aria-pressed", "true")
    actions.get_by_role("button", name="A poor answer").click()
    expect(actions.get_by_role("button", name="A poor answer")).to_have_attribute("aria-pressed", "true")
    expect(actions.get_by_role("button", name="A good answer")).to_have_attribute("aria-pressed", "false")
    page.goto(f"/debug?session={sid}")
    expect(page.locator("#debug-messages .entry[data-role='assistant'] .flags")).to_contain_text("rated 👎")
