"""What the `browser` types into a password field is never stored nor shown again; named sign-ins.

In Debian's Chromium against the test's pages (tests/helpers/browser_pages.py), one Chromium for
the module: a sign-in through the agent loop, then every place the password could have landed is
read — the stored session (display, context and the other branches), its archive, every frame the
run sent (`tool_started`, `approval_required`, `tool_call`), the model's later requests and the
log lines — and the site still got the real password. A one-time code field whose page echoes
what was typed (live, in the next page's URL, text and title) shows the marker instead.

Named profiles: `navi browser login`'s terminal loop (`run_login`, fed the commands a person would
type) signs into the shop and keeps its cookies in a 0600 file without the password; a conversation
opened with that profile asks first and is signed in, another user has no such profile, and
`navi browser profiles` / `forget` list and delete it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from structlog.testing import capture_logs

from navi import runctx
from navi.agent.approvals import ApprovalPolicy
from navi.sessions.archive import export_session
from navi.testing.script import Reply, ScriptedCall
from navi.tools.base import SECRET_MARKER
from navi.tools.builtin.browser import BrowserSettings, BrowserTool
from tests.agent_helpers import scripted_runtime
from tests.helpers.browser_pages import PageServer, page_guard
from tests.test_approvals import asked, results, run_answering

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]
SMART = ApprovalPolicy(mode="smart")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserTool]:
    from navi.sandbox import probe

    files = tmp_path_factory.mktemp("session-files")
    profiles = tmp_path_factory.mktemp("profiles")
    settings = BrowserSettings(
        bwrap=probe().bwrap, files_dir=str(files), profiles_dir=str(profiles), hidden=()
    )
    browser = BrowserTool(settings, guard=page_guard())
    yield browser
    await browser.aclose()


def dumped(value: Any) -> str:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.dumps(value, default=str)


async def test_a_password_typed_through_the_agent_is_stored_nowhere(
    tool: BrowserTool, pages: PageServer, tmp_path: Path
) -> None:
    rt, _backend, script = await scripted_runtime(
        tmp_path, planning_enabled=False, navi_approval_mode="smart"
    )
    rt.tools.register(tool, builtin=True)
    for args in (
        {"action": "open", "url": pages.url("/login")},
        {"action": "type", "element": 1, "text": "alice"},
        {"action": "type", "element": 2, "text": "s3cret"},
        {"action": "click", "element": 3},
    ):
        script.turn(Reply(tool_calls=[ScriptedCall("browser", args)]))
    script.turn("Signed in.")
    session = await rt.sessions.create("secretary")
    with capture_logs() as logs:
        events = await run_answering(rt, session.id, "sign in to my shop", ["allow", "allow", "allow"])
    # The tool typed the real password: the site signed alice in.
    assert {"path": "/login", "user": "alice", "password": "s3cret"} in pages.posts
    done = results(events)
    assert [r.success for r in done] == [True] * 4 and "Welcome back, alice" in done[-1].result
    # The question, the frames and the stored call carry the marker instead.
    question = asked(events)[1]
    assert question.reason == "it types into a password field on pages.test"
    assert question.args == {"action": "type", "element": 2, "text": SECRET_MARKER}
    assert done[2].args == question.args and done[1].args["text"] == "alice"  # a user name is kept
    stored = await rt.sessions.get(session.id)
    assert stored is not None
    calls = [c for m in stored.messages for c in m.tool_calls]
    assert [c.arguments.get("text") for c in calls] == [None, "alice", SECRET_MARKER, None]
    for place, value in {
        "the stored session": [stored.messages, stored.context, stored.others],
        "its archive": export_session(stored),
        "the frames": [e.model_dump(mode="json") for e in events],
        "the model's requests": [r.messages for r in script.requests],
        "the log": logs,
    }.items():
        assert "s3cret" not in dumped(value), place
    # The model's next call saw the marker, not the password.
    last = script.of_kind("turn")[-1].messages
    sent = [c.arguments for m in last for c in m.tool_calls]
    assert {"action": "type", "element": 2, "text": SECRET_MARKER} in sent
    await rt.aclose()


async def test_a_code_the_page_echoes_is_shown_as_the_marker(tool: BrowserTool, pages: PageServer) -> None:
    ctx = runctx.RunContext(session_id="s-pin")
    with runctx.using(ctx):
        form = await tool.execute({"action": "open", "url": pages.url("/pin")})
        assert '[1] input "Code" (password field)' in form.output  # by its autocomplete
        call = {"action": "type", "element": 1, "text": "735912"}
        assert await tool.secret_arguments(call) == {"text"}
        assert await tool.secret_arguments({**call, "element": 9}) == {"text"}  # unknown: hidden
        assert await tool.secret_arguments({"action": "click", "element": 1}) == set()
        facts = await tool.call_facts(call)
        assert SMART.reason("browser", call, facts) == "it types into a password field on pages.test"
        typed = await tool.execute(call)
        assert f"You typed {SECRET_MARKER}" in typed.output and "735912" not in typed.output
        sent = await tool.execute({"action": "click", "element": 2})
    assert sent.success and "Code accepted: [not stored" in sent.output
    view = sent.metadata["browser"]
    assert view["url"] == pages.url(f"/pin-done?code={SECRET_MARKER}")
    assert view["title"] == f"Code {SECRET_MARKER}"
    assert "735912" not in dumped({k: v for k, v in view.items() if k != "screenshot"})
    assert "735912" not in sent.output
    assert ("GET", "/pin-done") in pages.requests  # the site got the code


async def test_a_profile_signed_into_once_opens_signed_in_and_only_for_its_user(
    tool: BrowserTool, pages: PageServer, tmp_path: Path
) -> None:
    from navi.cli.browser import run_login

    typed = iter(["type 1 alice", "password 2", "click 9", "click 3", "save"])
    secrets: list[str] = []
    said: list[str] = []

    def ask_secret(prompt: str) -> str:
        secrets.append(prompt)
        return "s3cret"

    saved = await run_login(
        tool, "local", "shop", pages.url("/login"), lambda _p: next(typed), ask_secret, said.append
    )
    assert saved and secrets == ["password for element [2] (not shown): "]
    assert said[0].startswith("<page>\nTitle: Sign in") and '[2] input[password] "Password"' in said[0]
    assert said[3] == "error: there is no element [9] on this page: read it to see the elements"
    assert "Welcome back, alice" in said[4]
    kept = Path(tool.settings.profiles_dir) / "local" / "shop.json"
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.parent.stat().st_mode & 0o777 == 0o700
    state = json.loads(kept.read_text())
    assert {c["name"]: c["value"] for c in state["cookies"]}["sid"] == "alice-session"
    assert "s3cret" not in kept.read_text() and "s3cret" not in dumped(said)
    assert tool.pool.peek("login:local:shop") is None  # its browser closed

    rt, _backend, script = await scripted_runtime(
        tmp_path, planning_enabled=False, navi_approval_mode="smart"
    )
    rt.tools.register(tool, builtin=True)
    opened = {"action": "open", "url": pages.url("/account"), "profile": "shop"}
    script.turn(Reply(tool_calls=[ScriptedCall("browser", opened)]))
    script.turn(Reply(tool_calls=[ScriptedCall("browser", {"action": "read"})]))
    script.turn("You have 42 coins.")
    session = await rt.sessions.create("secretary")
    events = await run_answering(rt, session.id, "how many coins do I have in the shop?", ["allow"])
    assert [q.reason for q in asked(events)] == [
        "the browser opens pages.test signed in with your profile 'shop'"
    ]
    assert all(r.success for r in results(events)) and "Balance: 42 coins" in results(events)[0].result
    # A conversation without the profile is not signed in; another user has no profile 'shop'.
    with runctx.using(runctx.RunContext(session_id="s-anon")):
        anon = await tool.execute({"action": "open", "url": pages.url("/account")})
        switched = await tool.execute(opened)
    assert "Welcome back" not in anon.output and "Sign in" in anon.output
    assert switched.error == (
        "this conversation's browser is open with no profile: close it (action close) before opening "
        "with profile 'shop'"
    )
    with runctx.using(runctx.RunContext(session_id="s-bob", owner="bob")):
        other = await tool.execute(opened)
    assert other.error == (
        "there is no browser profile 'shop': the user signs into one with `navi browser login shop URL`"
    )
    kept.write_text('{"cookies": [], "origins": []}')
    await tool.pool.close_session(session.id)  # as the session ends: the profile is written back
    assert json.loads(kept.read_text())["cookies"] == state["cookies"]
    # A profile forgotten while a conversation's browser uses it is not made again as it closes.
    with runctx.using(runctx.RunContext(session_id="s-forgot")):
        assert (await tool.execute(opened)).success
    tool.pool.profiles.remove("local", "shop")
    await tool.pool.close_session("s-forgot")
    assert not kept.exists()
    await rt.aclose()


async def test_the_profiles_are_listed_and_forgotten_from_the_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from navi.cli.main import _register, app
    from navi.tools.builtin.browser.profiles import Profiles

    _register()
    env = {
        "DB_PATH": str(tmp_path / "n.db"),
        "NAVI_BROWSER_PROFILES_DIR": str(tmp_path / "bp"),
        "LOG_LEVEL": "WARNING",
    }
    runner = CliRunner()
    assert runner.invoke(app, ["browser", "profiles"], env=env).stdout.startswith("no browser profiles")
    Profiles(tmp_path / "bp").save("local", "shop", {"cookies": [], "origins": []})
    Profiles(tmp_path / "bp").save("local", "mail", {"cookies": [], "origins": []})
    assert runner.invoke(app, ["browser", "profiles"], env=env).stdout == "mail\nshop\n"
    assert (
        runner.invoke(app, ["browser", "forget", "shop"], env=env).stdout
        == "forgot the browser profile 'shop'\n"
    )
    gone = runner.invoke(app, ["browser", "forget", "shop"], env=env)
    assert gone.exit_code == 1 and "there is no browser profile 'shop'" in gone.output
    bad = runner.invoke(app, ["browser", "forget", "../x"], env=env)
    assert bad.exit_code != 0 and "bad browser profile name" in bad.output
    assert runner.invoke(app, ["browser", "profiles"], env=env).stdout == "mail\n"


async def test_at_most_max_sessions_contexts_and_the_least_recent_idle_one_makes_room(
    tool: BrowserTool, pages: PageServer
) -> None:
    from dataclasses import replace

    for key in list(tool.pool.sessions):
        await tool.pool.close_session(key)
    real = tool.pool.settings
    tool.pool.settings = replace(real, max_sessions=2)
    try:

        async def open_in(session: str) -> Any:
            with runctx.using(runctx.RunContext(session_id=session)):
                return await tool.execute({"action": "open", "url": pages.url("/list")})

        await open_in("s-a")
        await open_in("s-b")
        assert (await open_in("s-a")).success  # s-a used again: s-b is now the least recent
        assert (await open_in("s-c")).success
        assert set(tool.pool.sessions) == {"s-a", "s-c"}
        async with tool.pool.sessions["s-a"].lock, tool.pool.sessions["s-c"].lock:  # both acting
            busy = await open_in("s-d")
        assert busy.error == (
            "the browser is busy: 2 conversations are using it now (at most 2); try again in a moment"
        )
        assert set(tool.pool.sessions) == {"s-a", "s-c"}
    finally:
        tool.pool.settings = real
