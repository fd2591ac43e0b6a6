"""Two real `navi serve` workers on one real PostgreSQL database.

A run started through worker A is followed live through worker B and replayed there after a
reconnect (`?since=N&run=…`); stop and an approval's answer sent to B reach the run on A; when A is
killed (SIGKILL) mid-turn, B's socket gets `worker_lost` within `RUN_LEASE_SECONDS`, the message
is kept, and Retry through B answers it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from navi.testing.agent_script import kind_of
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script, ScriptedCall, ScriptRequest
from tests.helpers.forked import Forks, forks
from tests.server_helpers import joined

pytestmark = pytest.mark.postgres

TOKEN = "two-workers-test-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
LEASE = 2.0  # RUN_LEASE_SECONDS of both workers


ASKED: dict[str, int] = {}


def respond(request: ScriptRequest) -> Reply:
    """Slow answers to "slowly" (the first time for "very slowly"), a `terminal` call (then a reply)
    to "make the file"."""
    last = request.messages[-1] if request.messages else None
    said = next((m.content or "" for m in reversed(request.messages) if m.role == "user"), "")
    if kind_of(request) != "turn":
        return Reply(text="A title")
    if "make the file" in said:
        if last is not None and last.role == "tool":
            return Reply(text="I did not make it.")
        return Reply(tool_calls=[ScriptedCall("terminal", {"command": "touch /tmp/navi-never-made"})])
    if "very slowly" in said:
        ASKED[said] = ASKED.get(said, 0) + 1
        if ASKED[said] == 1:
            return Reply(text="word " * 60, chunk_chars=5, delay=0.25)  # about 15 s
        return Reply(text="word word, at last.")
    if "slowly" in said:
        return Reply(text="Once upon a time, " * 8, chunk_chars=4, delay=0.05)
    return Reply(text="Done.")


@contextmanager
def two_workers(
    tmp_path: Path, pg_url: str, model: FakeModelServer
) -> Iterator[tuple[Forks, list[int], list[int]]]:
    env = {
        "DATABASE_URL": pg_url,
        "OLLAMA_HOST": model.url,
        "NAVI_API_TOKEN": TOKEN,
        "PLANNING_ENABLED": "false",
        "NAVI_APPROVAL_MODE": "smart",
        "RUN_LEASE_SECONDS": str(LEASE),
    }
    with forks(tmp_path, env) as navi:
        ports = [free_port(), free_port()]
        pids = [navi.serve(port, wait=False) for port in ports]
        for port, pid in zip(ports, pids, strict=True):
            navi.wait_up(port, pid)
        yield navi, ports, pids


@asynccontextmanager
async def socket(port: int, session_id: str, query: str = "") -> AsyncIterator[ClientConnection]:
    url = f"ws://127.0.0.1:{port}/ws/sessions/{session_id}{query}"
    async with connect(url, open_timeout=10, additional_headers=HEADERS, close_timeout=0.1) as ws:
        yield ws


async def until(ws: ClientConnection, *types: str, within: float = 15.0) -> list[dict[str, Any]]:
    """Run frames up to and including the first of `types` (`session_updated` left out)."""
    got: list[dict[str, Any]] = []
    async with asyncio.timeout(within):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] == "session_updated":
                continue
            got.append(frame)
            if frame["type"] in types:
                return got


async def send(ws: ClientConnection, frame: dict[str, Any]) -> None:
    await ws.send(json.dumps(frame))


def client(port: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=HEADERS, timeout=15)


async def test_a_run_on_worker_a_is_followed_replayed_stopped_and_approved_through_worker_b(
    tmp_path: Path, pg_url: str
) -> None:
    with (
        FakeModelServer(Script(responder=respond)) as model,
        two_workers(tmp_path, pg_url, model) as (
            _navi,
            (a, b),
            _pids,
        ),
    ):
        async with client(a) as http_a, client(b) as http_b:
            session_id = (await http_a.post("/sessions")).json()["session_id"]
            async with socket(a, session_id) as on_a, socket(b, session_id) as on_b:
                # Followed live through B, then replayed through B after a reconnect.
                await send(on_a, {"type": "message", "content": "tell it slowly"})
                through_a = asyncio.create_task(until(on_a, "stream_end"))
                seen = await until(on_b, "stream_delta")
                seen += [json.loads(await on_b.recv()) for _ in range(3)]
                assert seen[0]["type"] == "stream_start" and seen[0]["message"]["content"] == "tell it slowly"
                last = seen[-1]
                query = f"?since={last['seq']}&run={last['run_id']}"
                async with socket(b, session_id, query) as again:  # the page on B reconnects mid-run
                    rest = await until(again, "stream_end")
                # The same frames, run_id and seq, none twice (either socket may have had deltas joined).
                assert joined(seen + rest) == joined(await through_a)
                assert rest[0]["seq"] > last["seq"]
            # Back on B after the run ended on A: what it missed, from the rows A kept.
            for _ in range(300):
                if not (await http_b.get(f"/sessions/{session_id}")).json()["active"]:
                    break
                await asyncio.sleep(0.05)
            async with socket(b, session_id, query) as after_the_end:
                late = await until(after_the_end, "stream_end")
            assert joined(late) == joined(rest)

            # Stop, sent to B, reaches the run on A.
            async with socket(a, session_id) as on_a:
                await send(on_a, {"type": "message", "content": "tell it very slowly"})
                await until(on_a, "stream_delta")
                stopped = await http_b.post(f"/sessions/{session_id}/stop")
                assert stopped.json() == {"ok": True, "reason": None}
                assert (await until(on_a, "stream_stopped"))[-1]["type"] == "stream_stopped"

                # An approval the run on A waits for is listed by B and answered through B's socket.
                await asyncio.sleep(0.3)  # A lets go of the stopped run
                await send(on_a, {"type": "message", "content": "make the file"})
                asked = (await until(on_a, "approval_required"))[-1]
                listed = (await http_b.get(f"/sessions/{session_id}/approvals")).json()
                assert [item["call_id"] for item in listed] == [asked["call_id"]]
                async with socket(b, session_id) as on_b:
                    replayed = await until(on_b, "approval_required")  # B's replay asks too
                    assert replayed[-1] == asked
                    await send(on_b, {"type": "approval", "call_id": asked["call_id"], "decision": "deny"})
                    resolved = (await until(on_b, "approval_resolved"))[-1]
                assert (resolved["decision"], resolved["by"]) == ("deny", "user")
                end = (await until(on_a, "stream_end"))[-1]
                assert end["content"] == "I did not make it."
                twice = await http_b.post(
                    f"/sessions/{session_id}/approvals/{asked['call_id']}", json={"decision": "allow"}
                )
                assert twice.status_code == 404  # the first answer counted


async def test_a_killed_worker_s_turn_ends_on_the_other_worker_with_worker_lost(
    tmp_path: Path, pg_url: str
) -> None:
    with (
        FakeModelServer(Script(responder=respond)) as model,
        two_workers(tmp_path, pg_url, model) as (
            navi,
            (a, b),
            (pid_a, _pid_b),
        ),
    ):
        async with client(b) as http_b:
            session_id = (await http_b.post("/sessions")).json()["session_id"]
            async with socket(a, session_id) as on_a, socket(b, session_id) as on_b:
                await send(on_a, {"type": "message", "content": "tell it very slowly, once"})
                started = (await until(on_a, "stream_start"))[-1]
                followed = await until(on_b, "stream_delta")  # B follows the run on A
                navi.kill(pid_a)
                killed = time.monotonic()
                frames = await until(on_b, "error", within=LEASE + 10)
                took = time.monotonic() - killed
                error = frames[-1]
                assert (error["code"], error["run_id"]) == ("worker_lost", started["run_id"])
                assert error["seq"] == (followed + frames)[-2]["seq"] + 1  # after the last frame B saw
                assert took <= LEASE, f"worker_lost after {took:.1f} s, more than RUN_LEASE_SECONDS"
                # The message is kept, with the failure under it; Retry through B answers it.
                shown = (await http_b.get(f"/sessions/{session_id}")).json()["messages"]
                assert [m["content"] for m in shown if m["role"] == "user"] == ["tell it very slowly, once"]
                assert shown[-1]["metadata"]["error"]["code"] == "worker_lost"
                await send(on_b, {"type": "retry"})
                retried = await until(on_b, "stream_start", "error")
                assert retried[-1]["type"] == "stream_start", retried[-1]
                assert (
                    retried[-1]["retry"] is True and retried[-1]["message"]["id"] == started["message"]["id"]
                )
                answer = (await until(on_b, "stream_end", "error"))[-1]
                assert answer["type"] == "stream_end" and answer["content"] == "word word, at last."
