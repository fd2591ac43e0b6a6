"""A conversation's browser cookies follow it to another worker: two Navi runtimes (two app
instances, each with its own Chromium) on one real PostgreSQL database, against the test's pages
(tests/helpers/browser_pages.py).

The user signs in through A (the site sets a cookie); the next turn runs on B, whose Chromium has
never seen the conversation, and the account page is open there signed in. B signs out; the turn
after that is on A again, whose context is older than the saved state and is made again from it:
signed out. The saved state is the user's alone, is not in the session's export, and goes with the
session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from navi.sandbox import probe
from navi.sessions.archive import export_session
from navi.storage.browser_states import browser_states
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from navi.tools.builtin.browser import BrowserSettings, BrowserTool
from tests.agent_helpers import scripted_runtime
from tests.helpers.browser_pages import PageServer, page_guard
from tests.test_approvals import results, run_answering

pytestmark = [pytest.mark.postgres, pytest.mark.browser]


@pytest.fixture
def pages() -> AsyncIterator[PageServer]:
    server = PageServer().start()
    yield server  # type: ignore[misc]
    server.stop()


@pytest.fixture
async def two(tmp_path: Path, pg_url: str) -> AsyncIterator[tuple[Any, Any, AgentScript]]:
    script = AgentScript()
    made = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        rt, _, _ = await scripted_runtime(
            tmp_path / name, script, sql=True, database_url=pg_url, planning_enabled=False
        )
        assert rt.db is not None and rt.db.dialect == "postgresql" and rt.browser is not None
        settings = BrowserSettings(bwrap=probe().bwrap, files_dir=str(tmp_path / name / "files"), hidden=())
        # The runtime's own store of browser states (the database), with a guard that lets the
        # test's pages through.
        rt.tools.register(
            BrowserTool(settings, guard=page_guard(), states=rt.browser.pool.states), builtin=True
        )
        made.append(rt)
    try:
        yield made[0], made[1], script
    finally:
        for rt in made:
            tool = rt.tools.get("browser")
            await tool.aclose()
            await rt.aclose()


def turn(script: AgentScript, *calls: dict[str, Any]) -> None:
    for args in calls:
        script.turn(Reply(tool_calls=[ScriptedCall("browser", args)]))
    script.turn("Done.")


async def test_the_cookies_of_a_sign_in_on_one_worker_are_there_on_the_other(
    two: tuple[Any, Any, AgentScript], pages: PageServer
) -> None:
    a, b, script = two
    session = await a.sessions.create("secretary")
    turn(
        script,
        {"action": "open", "url": pages.url("/login")},
        {"action": "type", "element": 1, "text": "alice"},
        {"action": "type", "element": 2, "text": "s3cret"},
        {"action": "click", "element": 3},
    )
    signed_in = results(await run_answering(a, session.id, "sign in to the shop"))
    assert [r.success for r in signed_in] == [True] * 4 and "Welcome back, alice" in signed_in[-1].result

    # The next turn on B: a page that is only shown with the cookie.
    turn(script, {"action": "read"}, {"action": "open", "url": pages.url("/account")})
    on_b = results(await run_answering(b, session.id, "my balance?"))
    assert not on_b[0].success and on_b[0].result == (
        "Error: no page is open: this conversation's browser was closed since the last call (its cookies "
        f"are kept); open the page again, it was {pages.url('/account')}"
    )
    assert (
        on_b[1].success and "Welcome back, alice" in on_b[1].result and "Balance: 42 coins" in on_b[1].result
    )
    b_tool = b.tools.get("browser")
    assert b_tool.pool.peek(session.id) is not None  # B's own Chromium holds it now

    # What is kept: the user's, never in the session's export, never in a tool's result.
    states = b.browser.pool.states
    saved = await states.load(session.id, session.owner)
    assert (
        saved is not None
        and {c["name"]: c["value"] for c in saved.state["cookies"]}["sid"] == "alice-session"
    )
    assert await states.load(session.id, "bob") is None
    stored = await a.sessions.get(session.id)
    assert "alice-session" not in str(export_session(stored))
    assert all("alice-session" not in (r.result or "") for r in [*signed_in, *on_b])

    # B signs out; A's context (older than the saved state) is made again from it: signed out.
    turn(script, {"action": "open", "url": pages.url("/logout")})
    assert results(await run_answering(b, session.id, "sign me out"))[0].success
    turn(script, {"action": "open", "url": pages.url("/account")})
    back_on_a = results(await run_answering(a, session.id, "my balance again?"))[0]
    assert back_on_a.success and "Welcome back" not in back_on_a.result and "Sign in" in back_on_a.result

    # The model's close drops it for good; a deleted session's row goes with it.
    turn(script, {"action": "close"})
    assert (
        "Closed this conversation's browser"
        in results(await run_answering(a, session.id, "close it"))[0].result
    )
    assert await states.version(session.id, session.owner) == 0
    turn(script, {"action": "open", "url": pages.url("/list")})
    await run_answering(b, session.id, "fruit?")
    fresh = await states.load(session.id, session.owner)  # B's old context (its theme cookie) was let go
    assert fresh is not None and fresh.version == 1 and fresh.state["cookies"] == []
    await a.sessions.delete(session.id)
    query = select(browser_states.c.session_id)
    assert await a.db.read(lambda conn: conn.execute(query).all()) == []
