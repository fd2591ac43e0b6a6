"""MCP Tasks (`io.modelcontextprotocol/tasks`, 2026-07-28): Navi's own server runs `ask` as a task
for a client that declared the extension, and Navi's client waits for a task by polling it.

Over HTTP against a live Navi on the fake model: the SDK's client sees the task handle, polls
`tasks/get` until the turn's answer is there, cannot see another user's task, and cancels one
with `tasks/cancel` (the turn stops); Navi's own `ServerConnection`, pointed at that same `/mcp`,
gets the answer of a call that ran as a task, each poll a short request of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from navi.mcp.config import ServerConfig
from navi.mcp.connection import ServerConnection
from navi.mcp.tasks import TaskCreated, TaskIdParams, TasksClient, TaskState, _TaskRequest
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.test_mcp_server import prepare


@asynccontextmanager
async def client_of(navi: LiveNavi, token: str, *, tasks: bool = True) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        transport = streamable_http_client(f"{navi.url}/mcp", http_client=http)
        extensions = [TasksClient()] if tasks else []
        async with Client(transport, mode="auto", cache=None, extensions=extensions) as client:
            assert client.protocol_version == "2026-07-28"
            yield client


async def get(client: Client, task_id: str) -> TaskState:
    request = _TaskRequest(method="tasks/get", params=TaskIdParams(task_id=task_id))
    return await client.session.send_request(request, TaskState)


async def until_over(client: Client, task_id: str) -> TaskState:
    for _ in range(300):
        state = await get(client, task_id)
        if state.status in ("completed", "failed", "cancelled"):
            return state
        await asyncio.sleep(0.1)
    raise AssertionError(f"task {task_id} never ended")


async def test_ask_runs_as_a_task_for_a_client_that_can_poll(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    tokens = await prepare(tmp_path, fake_server, {}, ["alice"])
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        async with client_of(navi, navi.token) as client, client_of(navi, tokens["alice"]) as alice:
            # The handle, as the wire has it (allow_claimed: no transparent polling).
            script.turn(Reply(text="Done as a task.", chunk_chars=4, delay=0.05))
            handle = await client.session.call_tool("ask", {"message": "a long one"}, allow_claimed=True)
            assert isinstance(handle, TaskCreated) and handle.status == "working"
            assert handle.poll_interval_ms == 1000 and handle.ttl_ms == 3_600_000
            with pytest.raises(MCPError, match="no task"):  # another user's task does not exist for them
                await get(alice, handle.task_id)
            state = await until_over(client, handle.task_id)
            assert state.status == "completed"
            answer = json.loads(state.result["content"][0]["text"])  # type: ignore[index]
            assert answer["answer"] == "Done as a task." and not answer["stopped"]

            # The SDK client with the extension polls by itself: the caller just gets the result.
            script.turn("Answered through polling.")
            result = await client.call_tool("ask", {"message": "again", "session_id": answer["session_id"]})
            assert result.structured_content is not None
            assert result.structured_content["answer"] == "Answered through polling."

            # Cancelled: the turn stops, the task says so.
            script.turn(Reply(text="word " * 400, chunk_chars=3, delay=0.05))
            handle = await client.session.call_tool("ask", {"message": "talk a lot"}, allow_claimed=True)
            assert isinstance(handle, TaskCreated)
            await asyncio.sleep(0.5)
            cancel = _TaskRequest(method="tasks/cancel", params=TaskIdParams(task_id=handle.task_id))
            await client.session.send_request(cancel, TaskState.__base__)  # type: ignore[arg-type]
            state = await until_over(client, handle.task_id)
            assert state.status == "cancelled"

        # A client without the extension gets the answer in the call itself, as before.
        async with client_of(navi, navi.token, tasks=False) as plain:
            script.turn("Answered directly.")
            result = await plain.call_tool("ask", {"message": "quick"})
            assert result.structured_content is not None
            assert result.structured_content["answer"] == "Answered directly."


async def test_navis_client_waits_for_a_task(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        config = ServerConfig(name="other", url=f"{navi.url}/mcp", headers=dict(navi.auth), timeout=60)
        connection = ServerConnection(config)
        connection.start()
        try:
            assert await connection.wait_started(30), connection.error
            assert connection.protocol_version == "2026-07-28"
            script.turn(Reply(text="Polled to the end.", chunk_chars=3, delay=0.05))
            result = await connection.call("ask", {"message": "take your time"}, shown_as="other__ask")
        finally:
            await connection.aclose()
    assert result.success, result.to_message_content()
    assert json.loads(result.to_message_content())["answer"] == "Polled to the end."


async def test_a_background_job_as_a_task(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """`background_job` starts a Navi job (docs/jobs.md) and, as a task, is polled until the job's
    runner has finished it: the task's result is the job's answer, in the job's own session."""
    script = use_script(fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        async with client_of(navi, navi.token) as client:
            script.turn("The job compared the two pages.")
            handle = await client.session.call_tool(
                "background_job", {"prompt": "compare the two pages", "title": "Compare"}, allow_claimed=True
            )
            assert isinstance(handle, TaskCreated)
            state = await until_over(client, handle.task_id)
            assert state.status == "completed", state
            outcome = state.result["structuredContent"]  # type: ignore[index]
            assert outcome["state"] == "done" and outcome["result"] == "The job compared the two pages."
        with navi.client() as http:  # the page sees the job and its session
            [job] = http.get("/jobs").json()
            assert (job["id"], job["state"], job["title"]) == (outcome["job_id"], "done", "Compare")
