"""An MCP server's question (elicitation) answered through another worker (issue 48), as approvals
are: two runtimes on one PostgreSQL database, each with its run manager on the PostgreSQL bus. A
run on worker A calls `shop__book` of `tests/mcp_ask_server.py` (the 2026 SDK), which asks for a
form; worker B lists the question, refuses an answer that does not fit the form (the question
keeps waiting), passes on one larger than NOTIFY carries (it travels in the question's row), and
refuses a second answer; the run on A gets the answer and the tool's result says so."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from navi.mcp.elicitation import ElicitationInvalid, ElicitationNotFound
from navi.testing.agent_script import AgentScript
from navi.testing.script import Reply, ScriptedCall
from tests.agent_helpers import scripted_runtime
from tests.test_runs_pg import Worker, frames

pytestmark = pytest.mark.postgres

ASK_SERVER = Path(__file__).with_name("mcp_ask_server.py")


@pytest.fixture
async def workers(tmp_path: Path, pg_url: str) -> AsyncIterator[tuple[Worker, Worker, AgentScript]]:
    servers = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(ASK_SERVER)], "approval": "auto"}
    servers.write_text(json.dumps({"mcpServers": {"shop": entry}}))
    script = AgentScript()
    made = []
    for name in ("a", "b"):  # only A has the MCP server: B can answer only through the database
        extra: dict[str, Any] = {"mcp_servers_file": str(servers)} if name == "a" else {}
        rt, _, _ = await scripted_runtime(
            tmp_path / name, script, sql=True, database_url=pg_url, planning_enabled=False, **extra
        )
        made.append(await Worker.start(rt, elicitations=rt.mcp.elicitations))
    try:
        yield made[0], made[1], script
    finally:
        for worker in made:
            await worker.stop()


async def test_a_question_asked_on_one_worker_is_answered_through_another(
    workers: tuple[Worker, Worker, AgentScript],
) -> None:
    a, b, script = workers
    for _ in range(600):  # the MCP server starts in the background
        if a.runtime.tools.get("shop__book") is not None:
            break
        await asyncio.sleep(0.05)
    assert a.runtime.tools.get("shop__book") is not None
    script.turn(
        Reply(tool_calls=[ScriptedCall("shop__book", {"day": "friday"})]), Reply(text="Your table is booked.")
    )
    session = await a.runtime.sessions.create("secretary")
    run = await a.runs.start(session.id, "Book a table for friday")
    sub = run.subscribe()
    asked = (await frames(sub, "elicitation_required", within=60))[-1]
    eid = asked["elicitation_id"]

    # B lists it (once A's writer has stored it), exactly as the frame described it.
    for _ in range(200):
        if listed := await b.runs.controls.questions(session.id):
            break
        await asyncio.sleep(0.05)
    assert listed == [{k: v for k, v in asked.items() if k not in ("type", "run_id", "seq")}]
    assert b.runtime.mcp.elicitations.waiting(session.id) == []  # not B's own: it waits on A

    # An answer that does not fit the form is refused on B; the question keeps waiting.
    with pytest.raises(ElicitationInvalid, match="'guests' must be a number"):
        await b.runs.controls.answer_question(session.id, eid, "accept", {"guests": "three", "name": "Ada"})
    assert len(await b.runs.controls.questions(session.id)) == 1
    with pytest.raises(ElicitationNotFound):  # another session's question is not this one
        await b.runs.controls.answer_question("another-session", eid, "accept", {"guests": 3, "name": "A"})

    # The answer goes through B, larger than NOTIFY's 8,000 bytes: it travels in the row.
    name = "Ada " + "L" * 8_500
    await b.runs.controls.answer_question(
        session.id, eid, "accept", {"guests": 3, "name": name, "terrace": True}
    )
    with pytest.raises(ElicitationNotFound):  # the first answer counts
        await b.runs.controls.answer_question(session.id, eid, "decline", None)

    resolved = (await frames(sub, "elicitation_resolved", within=30))[-1]
    assert (resolved["elicitation_id"], resolved["action"], resolved["by"]) == (eid, "accept", "user")
    rest = await frames(sub, "stream_end", within=30)
    [result] = [f for f in rest if f["type"] == "tool_call"]
    assert result["success"] and result["result"] == f"booked friday for 3 under {name} on the terrace"
    assert rest[-1]["content"] == "Your table is booked."
    await asyncio.wait_for(run.finished.wait(), 10)
    for _ in range(100):  # the row goes with the resolution (A's writer)
        if await b.runs.controls.questions(session.id) == []:
            break
        await asyncio.sleep(0.05)
    assert await b.runs.controls.questions(session.id) == []
