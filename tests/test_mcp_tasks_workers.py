"""The tasks of Navi's own MCP server kept in the database (issue 48): two Navi processes on one
database — one SQLite file (as `navi serve` beside another), or PostgreSQL (two workers) — each
serving `/mcp`. A task started through A is polled through B to its answer; one started through A
is cancelled through B and the turn on A stops; another user asking B sees no such task. And a
working task whose worker stopped beating it is reported failed, not left working for ever."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from navi.compose import build_runtime
from navi.config import load_settings
from navi.mcp.task_store import STALE_SECONDS, MemoryTaskStore, TaskRecord
from navi.mcp.tasks import TaskCreated, TaskIdParams, TasksServer, TaskState, _TaskRequest
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import live_navi, use_script
from tests.test_mcp_server import folder_settings
from tests.test_mcp_tasks import client_of, get, until_over


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "sqlite":
        return {}
    return {"database_url": request.getfixturevalue("pg_url")}


async def add_user(tmp_path: Path, fake: FakeModelServer, database: dict[str, Any], name: str) -> str:
    settings = load_settings(**folder_settings(tmp_path, fake), **database)
    runtime = await build_runtime(settings, seed_tools=False)
    try:
        return (await runtime.users.add(name))[1]
    finally:
        await runtime.aclose()


async def test_a_task_started_on_one_worker_is_polled_and_cancelled_through_another(
    tmp_path: Path, fake_server: FakeModelServer, database: dict[str, Any]
) -> None:
    alice_token = await add_user(tmp_path, fake_server, database, "alice")
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server, **database) as a, live_navi(tmp_path, fake_server, **database) as b:
        assert a.token == b.token  # one Navi, two processes: the same token file
        async with (
            client_of(a, a.token) as on_a,
            client_of(b, b.token) as on_b,
            client_of(b, alice_token) as alice,
        ):
            script.turn(Reply(text="Answered on A.", chunk_chars=3, delay=0.05))
            handle = await on_a.session.call_tool("ask", {"message": "a long one"}, allow_claimed=True)
            assert isinstance(handle, TaskCreated)
            assert (await get(on_b, handle.task_id)).status == "working"  # B reads it from the database
            with pytest.raises(Exception, match="no task"):  # another user: no such task
                await get(alice, handle.task_id)
            state = await until_over(on_b, handle.task_id)
            assert state.status == "completed", state
            assert json.loads(state.result["content"][0]["text"])["answer"] == "Answered on A."  # type: ignore[index]

            # Cancelled through B: A's run of it stops at its next beat, and every worker says so.
            script.turn(Reply(text="word " * 400, chunk_chars=3, delay=0.05))
            handle = await on_a.session.call_tool("ask", {"message": "talk a lot"}, allow_claimed=True)
            assert isinstance(handle, TaskCreated)
            await asyncio.sleep(0.3)
            cancel = _TaskRequest(method="tasks/cancel", params=TaskIdParams(task_id=handle.task_id))
            await on_b.session.send_request(cancel, TaskState.__base__)  # type: ignore[arg-type]
            state = await until_over(on_b, handle.task_id)
            assert state.status == "cancelled" and state.status_message == "cancelled by the client"
            assert (await get(on_a, handle.task_id)).status == "cancelled"


async def test_a_working_task_whose_worker_stopped_beating_is_reported_failed() -> None:
    store, now = MemoryTaskStore(), 10_000.0
    server = TasksServer(
        ("ask",), owner_of=lambda ctx: "local", store_of=lambda ctx: store, clock=lambda: now
    )
    await store.create(
        TaskRecord("t1", "local", "ask", started=now - 100, beat=now - STALE_SECONDS - 1).row()
    )
    await store.create(TaskRecord("t2", "local", "ask", started=now - 100, beat=now - 2).row())
    gone = await server._get(None, TaskIdParams(task_id="t1"))
    assert gone.status == "failed" and gone.error == {
        "code": -32603,
        "message": "the Navi process running the task stopped",
    }
    assert (await server._get(None, TaskIdParams(task_id="t2"))).status == "working"  # still beating
