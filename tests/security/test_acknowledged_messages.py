"""No acknowledged message is lost: once `stream_start` is out, the user's message survives kill -9.

A real `navi serve` (forked from a helper that has Navi imported, so twenty restarts take seconds,
not half a minute) is killed with SIGKILL the moment the client receives `stream_start`, then
started again on the same database; every message that was acknowledged must be in the session,
in both the display history and the model's context. On SQLite and PostgreSQL alike, another
client reading the database the instant `stream_start` arrives finds the message committed.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from navi.runs import RunManager
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.postgres import _find
from navi.testing.script import Reply, Script
from tests.agent_helpers import scripted_runtime
from tests.helpers.forked import Forks
from tests.helpers.forked import forks as forked

TOKEN = "acknowledged-messages-test-token"
KILLS = 20  # at most; after MIN_KILLS the loop also stops once BUDGET_SECONDS have passed
MIN_KILLS = 6
BUDGET_SECONDS = 15.0


@contextmanager
def forks(tmp_path: Path, model_url: str) -> Iterator[Forks]:
    env = {
        "DB_PATH": str(tmp_path / "navi.db"),
        "OLLAMA_HOST": model_url,
        "NAVI_API_TOKEN": TOKEN,
        "NAVI_APPROVAL_MODE": "auto",
    }
    with forked(tmp_path, env) as navi:
        yield navi


async def send_and_kill(port: int, session_id: str, text: str, pid: int) -> dict[str, object]:
    """Send `text`; SIGKILL the server as soon as its `stream_start` arrives. Returns that frame."""
    url = f"ws://127.0.0.1:{port}/ws/sessions/{session_id}"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with connect(url, open_timeout=10, additional_headers=headers, close_timeout=0.1) as ws:
        await ws.send(json.dumps({"type": "message", "content": text}))
        while True:
            frame = json.loads(await ws.recv())
            if frame["type"] == "stream_start":
                os.kill(pid, signal.SIGKILL)  # nothing runs in Navi after this instant
                return frame
            assert frame["type"] == "session_updated", frame


def new_session(port: int) -> str:
    with httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        created = http.post(f"http://127.0.0.1:{port}/sessions")
    assert created.status_code == 201, created.text
    return str(created.json()["session_id"])


def stored(port: int, session_id: str) -> tuple[list[str], list[str]]:
    """The user messages' ids in the display history and in the model's context, read back."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=10) as http:
        detail = http.get(f"/sessions/{session_id}")
        assert detail.status_code == 200, detail.text
        context = http.get(f"/sessions/{session_id}/context")
        assert context.status_code == 200, context.text
    shown = [m["id"] for m in detail.json()["messages"] if m["role"] == "user"]
    seen = [m.get("id") for m in context.json()["messages"] if m["role"] == "user"]
    return shown, seen


async def test_a_message_acknowledged_by_stream_start_survives_sigkill(tmp_path: Path) -> None:
    script = Script(responder=lambda request: Reply(text="Noted.", delay=0.05))  # the turn goes on
    with FakeModelServer(script) as model, forks(tmp_path, model.url) as navi:
        port = free_port()
        pid = navi.serve(port)
        session_id = new_session(port)
        acknowledged: list[str] = []
        deadline = time.monotonic() + BUDGET_SECONDS  # bounds the test's time, never its verdict
        for n in range(KILLS):
            if n >= MIN_KILLS and time.monotonic() > deadline:
                break
            text = f"note {n}: the spare key is under pot number {n * 7 + 3}"
            start = await send_and_kill(port, session_id, text, pid)
            message = start["message"]
            assert isinstance(message, dict) and message["content"] == text
            acknowledged.append(str(message["id"]))
            assert navi.ask(f"wait {pid}") == "gone"
            pid = navi.serve(port)
            shown, seen = stored(port, session_id)
            missing = [i for i, mid in enumerate(acknowledged) if mid not in shown]
            assert not missing, f"acknowledged messages {missing} were lost (kill {n + 1} of {KILLS})"
            assert all(mid in seen for mid in acknowledged), "an acknowledged message is not in the context"
        navi.kill(pid)


def committed(kind: str, where: str, message_id: str) -> tuple[int, int]:
    """How many rows of the display history and of the context hold `message_id`, as another
    client of the database sees them. Blocking on purpose: nothing in Navi runs meanwhile."""
    tables = ("session_messages", "session_context")
    if kind == "sqlite":
        conn = sqlite3.connect(where)
        try:
            found = [
                conn.execute(f"SELECT count(*) FROM {t} WHERE message_id = ?", (message_id,)).fetchone()[0]
                for t in tables
            ]
        finally:
            conn.close()
        return found[0], found[1]
    query = " UNION ALL ".join(f"SELECT count(*) FROM {t} WHERE message_id = '{message_id}'" for t in tables)
    done = subprocess.run([_find("psql"), where, "-tAc", query], capture_output=True, text=True, check=True)
    shown, context = (int(n) for n in done.stdout.split())
    return shown, context


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_stream_start_goes_out_only_after_the_commit(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("pg_url") if kind == "postgres" else ""
    rt, _backend, script = await scripted_runtime(tmp_path, sql=True, database_url=url)
    runs = RunManager(rt.agent)
    session = await rt.sessions.create("secretary")
    for n in range(3):
        script.turn("Noted.")
        run = await runs.start(session.id, f"note {n}: the spare key is under the blue pot")
        frame = await run.subscribe().queue.get()
        assert frame["type"] == "stream_start" and frame["seq"] == 1
        where = url or str(tmp_path / "navi.db")
        assert committed(kind, where, frame["message"]["id"]) == (1, 1), f"turn {n}: acknowledged, not stored"
        await run.finished.wait()
    await rt.agent.settle()
    await rt.aclose()
