"""Approvals in the engine: which calls wait for the user, and what each answer does.

The runs are real (scripted model, real tools, real processes); the test answers as the API would,
through the runtime's approval gate, when an `approval_required` event arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from navi.agent.approvals import ApprovalPolicy, subject
from navi.agent.events import AgentEvent, ApprovalRequired, ApprovalResolved, ToolEvent
from navi.agent.gate import ApprovalNotFound
from navi.agent.turns import RunControl
from navi.compose import Runtime
from navi.config import SettingsError, load_settings
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import scripted_runtime, types

Answer = str | None  # "allow", "deny", "always", or None: leave the question unanswered


async def run_answering(
    rt: Runtime,
    session_id: str,
    message: str,
    answers: Sequence[Answer] = (),
    *,
    stop: asyncio.Event | None = None,
    stop_on_ask: bool = False,
) -> list[AgentEvent]:
    """One turn; each approval_required gets the next answer, as a person's click would."""
    pending = list(answers)
    events: list[AgentEvent] = []
    control = RunControl(stop_event=stop or asyncio.Event())
    async for event in rt.agent.run_stream(session_id, message, control=control):
        events.append(event)
        if isinstance(event, ApprovalRequired):
            if stop_on_ask:
                assert stop is not None
                stop.set()
                continue
            answer = pending.pop(0)
            if answer is not None:
                rt.approvals.answer(session_id, event.call_id, answer)  # type: ignore[arg-type]
    assert pending == [], "fewer questions than answers"
    return events


def asked(events: list[AgentEvent]) -> list[ApprovalRequired]:
    return [e for e in events if isinstance(e, ApprovalRequired)]


def resolved(events: list[AgentEvent]) -> list[ApprovalResolved]:
    return [e for e in events if isinstance(e, ApprovalResolved)]


def results(events: list[AgentEvent]) -> list[ToolEvent]:
    return [e for e in events if isinstance(e, ToolEvent)]


async def smart_runtime(tmp_path: Path, *calls: ScriptedCall, **settings: Any) -> tuple[Runtime, Any, str]:
    settings.setdefault("navi_approval_mode", "smart")
    rt, _backend, script = await scripted_runtime(tmp_path, planning_enabled=False, **settings)
    for call in calls:
        script.turn(Reply(tool_calls=[call]))
    script.turn("Done.")
    session = await rt.sessions.create("server_admin")
    return rt, script, session.id


def tool_texts(script: Any) -> list[str]:
    """What the model saw of each tool result, in its last request."""
    return [m.content or "" for m in script.of_kind("turn")[-1].messages if m.role == "tool"]


async def test_smart_terminal_waits_and_allow_runs_it(tmp_path: Path) -> None:
    marker = tmp_path / "made-by-touch"
    rt, script, sid = await smart_runtime(tmp_path, ScriptedCall("terminal", {"command": f"touch {marker}"}))
    events = await run_answering(rt, sid, "make the file", ["allow"])
    assert types(events) == [
        "tool_started",
        "approval_required",
        "approval_resolved",
        "tool_call",
        "stream_delta",
        "stream_end",
    ]
    question = asked(events)[0]
    assert question.tool == "terminal" and question.args == {"command": f"touch {marker}"}
    assert "runs a program on this machine" in question.reason and str(marker) in question.reason
    assert question.always_scope == "every terminal command that runs touch"
    assert question.call_id == results(events)[0].call_id
    answer = resolved(events)[0]
    assert (answer.call_id, answer.decision, answer.by) == (question.call_id, "allow", "user")
    assert results(events)[0].success and marker.exists()
    assert rt.approvals.waiting(sid) == []
    assert await rt.approvals.grants.grants("local") == []  # allow is for this call only
    await rt.aclose()


async def test_deny_gives_the_model_a_declined_result_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "never-made"
    rt, script, sid = await smart_runtime(tmp_path, ScriptedCall("terminal", {"command": f"touch {marker}"}))
    events = await run_answering(rt, sid, "make the file", ["deny"])
    assert resolved(events)[0].decision == "deny"
    result = results(events)[0]
    assert not result.success and "the user declined to run this terminal call" in result.result
    assert not marker.exists()
    assert any("the user declined to run this terminal call" in t for t in tool_texts(script))
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.messages[-1].content == "Done."
    assert stored.messages[-2].metadata["status"] == "error"
    await rt.aclose()


async def test_always_is_remembered_per_program_and_survives_a_restart(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("terminal", {"command": f"touch {first}"}),
        ScriptedCall("terminal", {"command": f"touch {second}"}),  # same program: no question
        ScriptedCall("terminal", {"command": f"ls {tmp_path}"}),  # another program: asks
        sql=True,
    )
    events = await run_answering(rt, sid, "two files and a listing", ["always", "deny"])
    assert [q.args["command"] for q in asked(events)] == [f"touch {first}", f"ls {tmp_path}"]
    assert [r.decision for r in resolved(events)] == ["always", "deny"]
    assert first.exists() and second.exists()
    assert [r.success for r in results(events)] == [True, True, False]
    grants = await rt.approvals.grants.grants("local")
    assert [(g.tool, g.subject) for g in grants] == [("terminal", "touch")]
    await rt.aclose()

    # A new runtime on the same database: the grant is still there.
    third = tmp_path / "three"
    rt, script, sid = await smart_runtime(
        tmp_path, ScriptedCall("terminal", {"command": f"touch {third}"}), sql=True
    )
    events = await run_answering(rt, sid, "one more")
    assert asked(events) == [] and third.exists()
    await rt.aclose()


async def test_no_answer_in_time_denies(tmp_path: Path) -> None:
    marker = tmp_path / "never-made"
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("code_exec", {"code": f"open({str(marker)!r}, 'w').close()"}),
        navi_approval_timeout_seconds=0.2,
    )
    events = await run_answering(rt, sid, "run code", [None])
    answer = resolved(events)[0]
    assert (answer.decision, answer.by) == ("deny", "timeout")
    result = results(events)[0]
    assert not result.success and "did not answer within 0.2 s" in result.result
    assert not marker.exists()
    with pytest.raises(ApprovalNotFound):  # a late answer finds nothing waiting
        rt.approvals.answer(sid, answer.call_id, "allow")
    await rt.aclose()


async def test_stop_while_waiting_ends_the_run(tmp_path: Path) -> None:
    marker = tmp_path / "never-made"
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("terminal", {"command": f"touch {marker}"}),
        navi_approval_timeout_seconds=300,
    )
    stop = asyncio.Event()
    # The approval timeout is five minutes: the run can only end this soon because stop woke it.
    events = await asyncio.wait_for(run_answering(rt, sid, "make it", stop=stop, stop_on_ask=True), 5)
    assert types(events) == [
        "tool_started",
        "approval_required",
        "approval_resolved",
        "tool_call",
        "stream_stopped",
    ]
    answer = resolved(events)[0]
    assert (answer.decision, answer.by) == ("deny", "stop")
    assert results(events)[0].result == "Error: not run: the user stopped the agent"
    assert not marker.exists() and rt.approvals.waiting(sid) == []
    stored = await rt.sessions.get(sid)
    assert stored is not None and stored.messages[-1].metadata["status"] == "stopped"
    await rt.aclose()


async def test_auto_mode_asks_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "made"
    rt, script, sid = await smart_runtime(
        tmp_path, ScriptedCall("terminal", {"command": f"touch {marker}"}), navi_approval_mode="auto"
    )
    events = await run_answering(rt, sid, "make it")
    assert asked(events) == [] and marker.exists()
    await rt.aclose()


async def test_overrides_replace_the_mode_for_one_tool(tmp_path: Path) -> None:
    marker = tmp_path / "made"
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("terminal", {"command": f"touch {marker}"}),  # smart would ask; auto here
        ScriptedCall("todo", {"action": "read"}),  # smart would not ask; always here
        navi_approval_overrides="terminal=auto, todo=always",
    )
    events = await run_answering(rt, sid, "go", ["allow"])
    assert [q.tool for q in asked(events)] == ["todo"]
    assert asked(events)[0].reason == "every todo call asks first (NAVI_APPROVAL_OVERRIDES is always)"
    assert marker.exists()
    await rt.aclose()


async def test_http_get_runs_but_post_asks(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/nothing-listens-here"
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("http_request", {"method": "GET", "url": url}),
        ScriptedCall("http_request", {"method": "HEAD", "url": url}),
        ScriptedCall("http_request", {"method": "POST", "url": url, "json": {"on": True}}),
    )
    events = await run_answering(rt, sid, "call the API", ["deny"])
    assert [q.args["method"] for q in asked(events)] == ["POST"]
    assert asked(events)[0].reason == f"it sends an HTTP POST to {url}, which may change something there"
    assert "the user declined" in results(events)[2].result
    await rt.aclose()


async def test_filesystem_read_runs_but_delete_asks(tmp_path: Path) -> None:
    kept = tmp_path / "keep.txt"
    kept.write_text("precious")
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("filesystem", {"action": "read", "path": str(kept)}),
        ScriptedCall("filesystem", {"action": "list", "path": str(tmp_path)}),
        ScriptedCall("filesystem", {"action": "delete", "path": str(kept)}),
    )
    events = await run_answering(rt, sid, "tidy up", ["deny"])
    assert [q.args["action"] for q in asked(events)] == ["delete"]
    assert asked(events)[0].reason == f"it changes files (delete): {kept}"
    assert "precious" in results(events)[0].result and kept.read_text() == "precious"
    await rt.aclose()


async def test_always_mode_asks_every_call_but_internal_ones(tmp_path: Path) -> None:
    rt, script, sid = await smart_runtime(
        tmp_path,
        ScriptedCall("todo", {"action": "read"}),
        ScriptedCall("list_tools", {}),
        ScriptedCall("memory_search", {"query": "cats"}),
        navi_approval_mode="always",
    )
    events = await run_answering(rt, sid, "look around", ["allow"])
    assert [q.tool for q in asked(events)] == ["memory_search"]
    assert asked(events)[0].reason == "every memory_search call asks first (NAVI_APPROVAL_MODE is always)"
    assert all(r.success for r in results(events))
    await rt.aclose()


async def test_a_subagents_call_asks_in_the_parent_session(tmp_path: Path) -> None:
    marker = tmp_path / "from-the-subagent"
    rt, _backend, script = await scripted_runtime(
        tmp_path, planning_enabled=False, navi_approval_mode="smart"
    )
    script.turn(
        Reply(tool_calls=[ScriptedCall("spawn_agent", {"task": "make the file"})]),
        Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {marker}"})]),  # the subagent
        Reply(text="The subagent made it."),  # the subagent's answer
        Reply(text="Done."),
    )
    session = await rt.sessions.create("server_admin")
    events = await run_answering(rt, session.id, "delegate", ["allow"])
    question = asked(events)[0]
    assert (question.tool, question.is_subagent) == ("terminal", True)
    assert resolved(events)[0].is_subagent and marker.exists()
    assert types(events)[:6] == [
        "tool_started",  # spawn_agent
        "tool_started",  # the subagent's terminal call
        "approval_required",
        "approval_resolved",
        "tool_call",
        "tool_call",  # spawn_agent
    ]
    await rt.aclose()


async def test_an_answer_must_name_a_waiting_call_of_that_session(tmp_path: Path) -> None:
    rt, script, sid = await smart_runtime(tmp_path, ScriptedCall("terminal", {"command": "true"}))
    other = (await rt.sessions.create("secretary")).id
    events: list[AgentEvent] = []
    async for event in rt.agent.run_stream(sid, "go"):
        events.append(event)
        if isinstance(event, ApprovalRequired):
            assert [p.call_id for p in rt.approvals.waiting(sid)] == [event.call_id]
            with pytest.raises(ApprovalNotFound):
                rt.approvals.answer(other, event.call_id, "allow")  # another session's call
            with pytest.raises(ApprovalNotFound):
                rt.approvals.answer(sid, "no-such-call", "allow")
            rt.approvals.answer(sid, event.call_id, "allow")
            with pytest.raises(ApprovalNotFound):  # answered already
                rt.approvals.answer(sid, event.call_id, "deny")
    assert resolved(events)[0].decision == "allow"
    await rt.aclose()


# --- the rules -------------------------------------------------------------------------------------


def test_smart_rules_read_the_arguments() -> None:
    smart = ApprovalPolicy()
    assert smart.reason("filesystem", {"action": "info", "path": "/x"}) is None
    assert smart.reason("filesystem", {"action": "find", "path": "/x", "pattern": "*"}) is None
    for action in ("write", "append", "mkdir", "move", "copy", "delete", "shred"):  # an unknown one too
        assert smart.reason("filesystem", {"action": action, "path": "/x"}) is not None, action
    assert smart.reason("filesystem", {"action": "move", "path": "/a", "destination": "/b"}) == (
        "it changes files (move): /a → /b"
    )
    for method in ("GET", "head", "OPTIONS"):
        assert smart.reason("http_request", {"method": method, "url": "http://x"}) is None
    for method in ("POST", "PUT", "PATCH", "DELETE", ""):
        assert smart.reason("http_request", {"method": method, "url": "http://x"}) is not None
    for tool in ("code_exec", "write_tool", "ssh_exec", "terminal"):
        assert smart.reason(tool, {"command": "x", "host": "h", "code": "1", "name": "t"}) is not None
    for tool in ("web_search", "web_view", "image_view", "spawn_agent", "memory_search", "a_user_tool"):
        assert smart.reason(tool, {}) is None


def test_always_is_offered_only_where_it_can_be_pinned_down() -> None:
    assert subject("terminal", {"command": "ls -la /tmp"}) == "ls"
    assert subject("terminal", {"command": "/usr/bin/ls"}) == "/usr/bin/ls"  # as typed, not a basename
    assert subject("http_request", {"method": "POST"}) == ""  # the whole tool
    for command in (
        "sudo rm -rf /",
        "env X=1 ls",
        "/bin/sh -c ls",
        "ls; rm x",
        "ls | wc",
        "echo $(id)",
        "'ls",
    ):
        assert subject("terminal", {"command": command}) is None, command


async def test_always_without_a_program_is_allow_once(tmp_path: Path) -> None:
    rt, script, sid = await smart_runtime(tmp_path, ScriptedCall("terminal", {"command": "env"}))
    events = await run_answering(rt, sid, "show the environment", ["always"])
    assert asked(events)[0].always_scope is None
    assert resolved(events)[0].decision == "allow"
    assert await rt.approvals.grants.grants("local") == []
    await rt.aclose()


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"navi_approval_mode": "sometimes"}, "NAVI_APPROVAL_MODE"),
        ({"navi_approval_overrides": "terminal"}, "NAVI_APPROVAL_OVERRIDES"),
        ({"navi_approval_overrides": "terminal=never"}, "NAVI_APPROVAL_OVERRIDES"),
        ({"navi_approval_timeout_seconds": 0}, "NAVI_APPROVAL_TIMEOUT_SECONDS"),
    ],
)
def test_bad_approval_settings_name_the_variable(settings: dict[str, Any], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        load_settings(**settings)


def test_approval_settings_defaults_and_overrides() -> None:
    settings = load_settings()
    assert (settings.navi_approval_mode, settings.navi_approval_timeout_seconds) == ("smart", 300.0)
    settings = load_settings(
        navi_approval_mode="Always", navi_approval_overrides=" terminal=auto ,todo=SMART,"
    )
    assert settings.navi_approval_mode == "always"
    assert settings.approval_overrides == {"terminal": "auto", "todo": "smart"}


# --- the browser's rule: the call's arguments and what the tool says about them ----------------------
BUTTON_POST = {"id": 3, "tag": "button", "label": "Pay", "submits": "post"}
PASSWORD = {"id": 2, "tag": "input", "type": "password", "password": True}


@pytest.mark.parametrize(
    ("args", "facts", "says"),
    [
        (
            {"action": "open", "url": "https://a.example/"},
            {"site": "a.example", "new_site": True},
            "not been on",
        ),
        ({"action": "open", "url": "https://a.example/x"}, {"site": "a.example", "new_site": False}, None),
        ({"action": "open", "url": "https://a.example/"}, None, "not been on"),  # no facts: the worst
        (
            {"action": "click", "element": 3},
            {"site": "a.example", "element": BUTTON_POST},
            "submits a form (POST)",
        ),
        ({"action": "click", "element": 4}, {"site": "a.example", "element": {"tag": "a"}}, None),
        ({"action": "click", "element": 4}, {"new_site": True, "link_site": "b.example"}, "b.example"),
        (
            {"action": "type", "element": 2, "text": "x"},
            {"site": "a.example", "element": PASSWORD},
            "password",
        ),
        ({"action": "type", "element": 1, "text": "x"}, {"element": {"tag": "input"}}, None),
        (
            {"action": "type", "element": 1, "text": "x", "submit": True},
            {"element": {"tag": "input"}},
            "Enter",
        ),
        ({"action": "select", "element": 1, "value": "x"}, {}, None),
        ({"action": "screenshot"}, {}, None),
        ({"action": "teleport"}, {}, "not one the approval rules know"),
    ],
)
def test_the_browser_asks_for_new_sites_forms_and_passwords(
    args: dict[str, Any], facts: dict[str, Any] | None, says: str | None
) -> None:
    reason = ApprovalPolicy(mode="smart").reason("browser", args, facts)
    assert (reason is None) == (says is None), reason
    if says is not None:
        assert reason is not None and says in reason
    assert ApprovalPolicy(mode="auto").reason("browser", args, facts) is None


def test_always_for_the_browser_is_remembered_per_site() -> None:
    assert subject("browser", {"action": "click"}, {"site": "shop.example"}) == "site:shop.example"
    assert subject("browser", {"action": "click"}, {}) is None  # no site: asks every time
    assert subject("browser", {"action": "click"}) is None


def test_smart_browser_asks_before_a_button_a_page_script_may_act_on() -> None:
    """A click on a button that submits no form may still send something (its page script decides,
    e.g. a fetch POST): it asks in smart mode; a plain link on a visited site, and a field, do not."""
    smart = ApprovalPolicy(mode="smart")
    click = {"action": "click", "element": 3}
    site = {"site": "shop.test", "new_site": False}
    for element in (
        {"tag": "button", "type": "button", "label": "Buy now"},
        {"tag": "input", "type": "button", "label": "Delete"},
        {"tag": "div", "role": "button", "label": "Send"},
    ):
        why = smart.reason("browser", click, {**site, "element": element})
        said = "the click presses a button on shop.test, whose page script may send something"
        assert why == f"{said}: {element['label']!r}"
    link = {"tag": "a", "href": "https://shop.test/cart", "role": "button", "label": "Cart"}
    assert smart.reason("browser", click, {**site, "element": link}) is None
    assert smart.reason("browser", click, {**site, "element": {"tag": "input", "type": "text"}}) is None
    assert (
        ApprovalPolicy(mode="auto").reason("browser", click, {**site, "element": {"tag": "button"}}) is None
    )
