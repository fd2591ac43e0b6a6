"""Two real `navi serve` processes on one SQLite file never run two turns in one session.

Each process takes the session's lease (a row of the shared database) before a turn starts, so a
message sent through the second while the first answers waits in the session's queue (also in the
database), and the first runs it once its turn is over; once the first has let go, the second
answers. A process killed mid-turn leaves a lease its machine can see is dead: the
other process frees the session at once, records the turn as failed (`worker_lost`) under the
stored message, and a Retry through it answers that message.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from navi.testing.agent_script import kind_of
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script, ScriptRequest
from tests.helpers.forked import Forks, forks

TOKEN = "one-turn-per-session-test-token"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def respond(request: ScriptRequest) -> Reply:
    """A slow answer (about 3 s) to a message that asks for one; a quick one to anything else."""
    last = request.messages[-1].content or "" if request.messages else ""
    if kind_of(request) == "turn" and "slowly" in last:
        return Reply(text="Once upon a time, " * 6, chunk_chars=4, delay=0.1)
    if kind_of(request) == "naming":
        return Reply(text="A story")
    return Reply(text="Done.")


@asynccontextmanager
async def socket(port: int, session_id: str) -> AsyncIterator[ClientConnection]:
    url = f"ws://127.0.0.1:{port}/ws/sessions/{session_id}"
    async with connect(url, open_timeout=10, additional_headers=HEADERS, close_timeout=0.1) as ws:
        yield ws


async def until(ws: ClientConnection, *types: str, within: float = 15.0) -> dict[str, Any]:
    """The next frame of one of `types` (frames of other types are passed over)."""
    async with asyncio.timeout(within):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] in types:
                return frame


async def send(ws: ClientConnection, frame: dict[str, Any]) -> None:
    await ws.send(json.dumps(frame))


async def send_when_free(
    ws: ClientConnection, port: int, session_id: str, frame: dict[str, Any]
) -> dict[str, Any]:
    """Send `frame` once no turn holds the session (the other process's post-turn work may hold
    it for a moment after its answer: a message sent then would wait in the queue, and run in that
    process); its `stream_start`."""
    deadline = time.monotonic() + 10
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=HEADERS, timeout=10) as http:
        for _ in range(200):
            detail = await http.get(f"/sessions/{session_id}")
            if not detail.json()["active"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
    await send(ws, frame)
    got = await until(ws, "error", "stream_start", "queued")
    assert got["type"] == "stream_start", got
    return got


def history(port: int, session_id: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=HEADERS, timeout=10) as http:
        detail = http.get(f"/sessions/{session_id}")
    assert detail.status_code == 200, detail.text
    return list(detail.json()["messages"])


def new_session(port: int) -> str:
    with httpx.Client(headers=HEADERS) as http:
        return str(http.post(f"http://127.0.0.1:{port}/sessions").json()["session_id"])


def two(navi: Forks) -> tuple[tuple[int, int], tuple[int, int]]:
    """Two `navi serve` on the same database: ((port, pid), (port, pid))."""
    ports = free_port(), free_port()
    pids = [navi.serve(port, wait=False) for port in ports]
    for port, pid in zip(ports, pids, strict=True):
        navi.wait_up(port, pid)
    return (ports[0], pids[0]), (ports[1], pids[1])


async def test_two_processes_on_one_sqlite_file_never_run_two_turns_in_one_session(tmp_path: Path) -> None:
    env = {
        "DB_PATH": str(tmp_path / "navi.db"),
        "NAVI_API_TOKEN": TOKEN,
        "PLANNING_ENABLED": "false",
        "NAVI_APPROVAL_MODE": "auto",
    }
    with (
        FakeModelServer(Script(responder=respond)) as model,
        forks(tmp_path, {**env, "OLLAMA_HOST": model.url}) as navi,
    ):
        (a, pid_a), (b, _pid_b) = two(navi)
        session_id = new_session(a)
        async with socket(a, session_id) as on_a, socket(b, session_id) as on_b:
            await send(on_a, {"type": "message", "content": "tell it slowly"})
            await until(on_a, "stream_start")
            await send(on_b, {"type": "message", "content": "a quick question meanwhile"})
            queued = await until(on_b, "error", "stream_start", "queued")  # it waits: no second turn
            assert (queued["type"], queued.get("position")) == ("queued", 1), queued
            await until(on_a, "stream_end")
            # The queue is in the shared database: A runs what waits once its turn is over.
            after = await until(on_a, "stream_start")
            assert after["message"]["id"] == queued["message_id"]
            assert (await until(on_a, "stream_end"))["content"] == "Done."
            # Through B once A has let go of the session (A may still be naming it for a moment).
            await send_when_free(on_b, b, session_id, {"type": "message", "content": "a quick question now"})
            assert (await until(on_b, "stream_end"))["content"] == "Done."

            # A is killed mid-turn: B frees the session at once and records the turn as lost.
            again = {"type": "message", "content": "tell it slowly, again"}
            started = await send_when_free(on_a, a, session_id, again)
            navi.kill(pid_a)
            await send(on_b, {"type": "retry"})
            retried = await until(on_b, "stream_start", "error")
            assert retried["type"] == "stream_start", retried
            assert retried["retry"] is True and retried["message"]["id"] == started["message"]["id"]
            assert (await until(on_b, "stream_end"))["content"].startswith("Once upon a time")
        shown = [(m["role"], m["content"], m.get("metadata", {})) for m in history(b, session_id)]
        assert [(role, content) for role, content, _ in shown[:7]] == [
            ("user", "tell it slowly"),
            ("assistant", "Once upon a time, " * 6),
            ("user", "a quick question meanwhile"),
            ("assistant", "Done."),
            ("user", "a quick question now"),
            ("assistant", "Done."),
            ("user", "tell it slowly, again"),
        ]
        lost = shown[7][2]
        assert shown[7][0] == "assistant" and lost["error"]["code"] == "worker_lost"
        assert lost["failed_turn"] == started["message"]["id"]
        assert shown[8][:2] == ("assistant", "Once upon a time, " * 6) and len(shown) == 9
