"""An agent profile names a saved browser sign-in: the `browser` tool opens pages with it in that
profile's conversations, unless the model names another; each user's own sign-in of that name.

In Debian's Chromium against the test's pages (tests/helpers/browser_pages.py), through the agent
loop with the scripted model: a built-in profile given a sign-in by NAVI_AGENT_BROWSER_PROFILES and
a profile made on the page with one; the approval of its first use; the model's own choice; a user
who has not saved that sign-in gets the page signed out, and is told why.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from navi.profiles.custom import CustomProfile, ProfileSpec, as_profile
from navi.sandbox import probe
from navi.testing.script import Reply, ScriptedCall
from navi.tools.builtin.browser import BrowserSettings, BrowserTool
from tests.agent_helpers import scripted_runtime
from tests.helpers.browser_pages import HOST, PageServer, page_guard
from tests.test_approvals import asked, results, run_answering

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserTool]:
    files = tmp_path_factory.mktemp("session-files")
    profiles = tmp_path_factory.mktemp("profiles")
    settings = BrowserSettings(
        bwrap=probe().bwrap, files_dir=str(files), profiles_dir=str(profiles), hidden=()
    )
    browser = BrowserTool(settings, guard=page_guard())
    # Two sign-ins of the owner's: the shop as alice, and "spare", signed in as nobody.
    browser.pool.profiles.save("local", "shop", {"cookies": [sid("alice-session")], "origins": []})
    browser.pool.profiles.save("local", "spare", {"cookies": [sid("nobody")], "origins": []})
    yield browser
    await browser.aclose()


def sid(value: str) -> dict[str, Any]:
    return {"name": "sid", "value": value, "domain": HOST, "path": "/", "expires": -1,
            "httpOnly": True, "secure": False, "sameSite": "Lax"}  # fmt: skip


async def test_the_agent_profiles_sign_in_is_used_unless_the_model_names_another(
    tool: BrowserTool, pages: PageServer, tmp_path: Path
) -> None:
    rt, _backend, script = await scripted_runtime(
        tmp_path,
        planning_enabled=False,
        navi_approval_mode="smart",
        navi_agent_browser_profiles="secretary=shop",
    )
    rt.tools.register(tool, builtin=True)
    assert rt.profiles.get("secretary").browser_profile == "shop"
    account = {"action": "open", "url": pages.url("/account")}

    # The built-in profile's sign-in: asked on its first use, then signed in.
    script.turn(Reply(tool_calls=[ScriptedCall("browser", account)]))
    script.turn(Reply(tool_calls=[ScriptedCall("browser", {**account, "new_tab": True})]))
    script.turn("You have 42 coins.")
    session = await rt.sessions.create("secretary")
    events = await run_answering(rt, session.id, "my balance?", ["allow"])
    assert [q.reason for q in asked(events)] == [
        "the browser opens pages.test signed in with your profile 'shop'"
    ]
    done = results(events)
    assert [r.success for r in done] == [True, True]
    assert "Welcome back, alice" in done[0].result and "Welcome back, alice" in done[1].result

    # The model names another sign-in: that one, not the profile's.
    script.turn(Reply(tool_calls=[ScriptedCall("browser", {**account, "profile": "spare"})]))
    script.turn("Not signed in there.")
    other = await rt.sessions.create("secretary")
    events = await run_answering(rt, other.id, "open it with my spare sign-in", ["allow"])
    assert [q.reason for q in asked(events)] == [
        "the browser opens pages.test signed in with your profile 'spare'"
    ]
    assert "Welcome back" not in results(events)[0].result and "Sign in" in results(events)[0].result
    assert tool.pool.peek(other.id).profile == "spare"

    # A profile made on the page names the sign-in its conversations open with.
    custom = CustomProfile(
        id="custom-shopper",
        owner="local",
        spec=ProfileSpec(name="Shopper", tools=["browser"], browser_profile="shop"),
    )
    rt.profiles.register(as_profile(custom))
    script.turn(Reply(tool_calls=[ScriptedCall("browser", account)]))
    script.turn("42.")
    shopping = await rt.sessions.create("custom-shopper")
    events = await run_answering(rt, shopping.id, "balance?", ["allow"])
    assert len(asked(events)) == 1 and "Welcome back, alice" in results(events)[0].result

    # Bob has no sign-in called "shop": his conversation's page opens signed out, and says why.
    script.turn(Reply(tool_calls=[ScriptedCall("browser", account)]))
    script.turn("You are not signed in.")
    bobs = await rt.sessions.create("secretary", owner="bob")
    events = await run_answering(rt, bobs.id, "my balance?", ["allow"])
    assert [q.reason for q in asked(events)] == [
        "the browser goes to a site it has not been on in this conversation: pages.test"
    ]
    result = results(events)[0]
    assert result.success and "Welcome back" not in result.result
    assert "opens pages signed in with the browser profile 'shop', which you have not saved" in result.result
    assert tool.pool.peek(bobs.id).profile is None
    for gone in (session.id, other.id, shopping.id, bobs.id):
        await tool.pool.close_session(gone)
    await rt.aclose()
