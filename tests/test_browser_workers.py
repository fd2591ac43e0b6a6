"""A conversation's browser cookies follow it to another worker, against the test's pages
(tests/helpers/browser_pages.py), on one real PostgreSQL database.

Two real `navi serve` workers: the model signs in through A; asked through B, B's own Chromium
opens the account page signed in (its log says it restored the conversation's state).

Two Navi runtimes (two app instances, each with its own Chromium), turn by turn: the user signs in
through A (the site sets a cookie); the next turn runs on B, whose Chromium has never seen the
conversation, and the account page is open there signed in. B signs out; the turn after that is on
A again, whose context is older than the saved state and is made again from it: signed out. The
saved state is the user's alone, is not in the session's export, the model's `close` drops it (and
a worker's context of it), and it goes with the session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from navi.sandbox import probe
from navi.sessions.archive import export_session
from navi.storage.browser_states import browser_states
from navi.testing.agent_script import AgentScript, kind_of
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script, ScriptedCall, ScriptRequest
from navi.tools.builtin.browser import BrowserSettings, BrowserTool
from tests.agent_helpers import scripted_runtime
from tests.helpers.browser_pages import PageServer, page_guard
from tests.helpers.forked import forks
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


# --- two `navi serve` workers -------------------------------------------------------------------

TOKEN = "browser-workers-test-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def browsing(pages: PageServer) -> Any:
    """The model: "sign in" → the login, field by field, then the button; "balance" → the account."""
    plans = {
        "sign in": [
            {"action": "open", "url": pages.local("/login")},
            {"action": "type", "element": 1, "text": "alice"},
            {"action": "type", "element": 2, "text": "s3cret"},
            {"action": "click", "element": 3},
        ],
        "balance": [{"action": "open", "url": pages.local("/account")}],
    }

    def respond(request: ScriptRequest) -> Reply:
        if kind_of(request) != "turn":
            return Reply(text="A title")
        said = request.last_user_text
        last = max(i for i, m in enumerate(request.messages) if m.role == "user")
        done = sum(1 for m in request.messages[last:] if m.role == "tool")
        plan = next(steps for word, steps in plans.items() if word in said)
        if done < len(plan):
            return Reply(tool_calls=[ScriptedCall("browser", plan[done])])
        return Reply(text="Done.")

    return respond


async def test_two_navi_serve_workers_share_a_conversations_sign_in(
    tmp_path: Path, pg_url: str, pages: PageServer
) -> None:
    env = {
        "DATABASE_URL": pg_url,
        "NAVI_API_TOKEN": TOKEN,
        "PLANNING_ENABLED": "false",
        "NAVI_APPROVAL_MODE": "auto",
        "NAVI_FETCH_ALLOWED_HOSTS": f"127.0.0.1:{pages.port}",
        "LOG_LEVEL": "INFO",  # each worker's log says whose Chromium restored the conversation
    }
    with FakeModelServer(Script(responder=browsing(pages))) as model:
        env["OLLAMA_HOST"] = model.url
        with forks(tmp_path, env) as navi:
            a, b = free_port(), free_port()
            pids = [navi.serve(port, wait=False) for port in (a, b)]
            for port, pid in zip((a, b), pids, strict=True):
                navi.wait_up(port, pid)
            async with (
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{a}", headers=HEADERS, timeout=120) as on_a,
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{b}", headers=HEADERS, timeout=120) as on_b,
            ):
                sid = (await on_a.post("/sessions")).json()["session_id"]
                signed = await on_a.post(f"/sessions/{sid}/messages", json={"content": "sign in to the shop"})
                assert signed.status_code == 200, signed.text
                asked = await on_b.post(f"/sessions/{sid}/messages", json={"content": "my balance?"})
                assert asked.status_code == 200, asked.text
                shown = (await on_b.get(f"/sessions/{sid}")).json()["messages"]
            results = [m["content"] for m in shown if m["role"] == "tool"]
            assert len(results) == 5, results
            assert "Welcome back, alice" in results[3]  # the sign-in, on A
            assert "Welcome back, alice" in results[4] and "Balance: 42 coins" in results[4]  # on B
            assert {"path": "/login", "user": "alice", "password": "s3cret"} in pages.posts
            # B's own Chromium, started from the state A saved in the database.
            assert "browser.restored" in navi.log(pids[1]) and "browser.restored" not in navi.log(pids[0])
            assert "s3cret" not in navi.log(pids[0]) + navi.log(pids[1])
