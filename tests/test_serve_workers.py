"""`navi serve --workers N`: N processes on one port (PostgreSQL), refused in one line on SQLite."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import httpx
import pytest
from websockets.asyncio.client import connect

from navi.config import Settings
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script
from navi.testing.served import wait_until_up

TOKEN = "workers-test-token-0123456789abcdef"


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    names = {name.upper() for name in Settings.model_fields}
    base = {k: v for k, v in os.environ.items() if k.upper() not in names}  # nothing from the shell
    base.update(
        TOOLS_DIR=str(tmp_path / "tools"),
        SESSION_FILES_DIR=str(tmp_path / "files"),
        LOG_LEVEL="WARNING",
        NAVI_API_TOKEN=TOKEN,
        **extra,
    )
    return base


def children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry))
    return found


def start(args: list[str], env: dict[str, str], cwd: Path, log: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "navi", *args], env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT
    )


def test_workers_on_sqlite_are_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "navi", "serve", "--workers", "2", "--port", str(free_port())],
        env=environment(tmp_path, DB_PATH=str(tmp_path / "navi.db")),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "navi: --workers 2 needs PostgreSQL (DATABASE_URL): workers share runs, sign-ins and uploads "
        "through it; on SQLite one `navi serve` serves (run it without --workers)"
    ]
    assert not (tmp_path / "navi.db").exists()


@pytest.mark.postgres
async def test_two_workers_serve_one_port_and_a_dead_one_is_replaced(tmp_path: Path, pg_url: str) -> None:
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    with FakeModelServer(Script(responder=lambda _request: Reply(text="Done."))) as model:
        env = environment(tmp_path, DATABASE_URL=pg_url, OLLAMA_HOST=model.url, PLANNING_ENABLED="false")
        proc = start(["serve", "--workers", "2", "--port", str(port)], env, tmp_path, log)
        log.close()
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(url, within=60, proc=proc, output=(tmp_path / "serve.log").read_text)
            for _ in range(100):  # both answer on the one port once both started
                if len(children(proc.pid)) == 2:
                    break
                await asyncio.sleep(0.1)
            first = children(proc.pid)
            assert len(first) == 2
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx.AsyncClient(base_url=url, headers=headers, timeout=15) as http:
                sessions = [(await http.post("/sessions")).json()["session_id"] for _ in range(4)]
                for session_id in sessions:  # each socket reaches one worker or the other
                    ws_url = f"ws://127.0.0.1:{port}/ws/sessions/{session_id}"
                    async with connect(ws_url, additional_headers=headers, open_timeout=10) as ws:
                        await ws.send(json.dumps({"type": "message", "content": "hello"}))
                        while (frame := json.loads(await ws.recv()))["type"] != "stream_end":
                            assert frame["type"] != "error", frame
                        assert frame["content"] == "Done."
                killed = sorted(first)[0]
                os.kill(killed, signal.SIGKILL)
                for _ in range(150):  # the supervisor starts another in its place
                    now = children(proc.pid)
                    if len(now) == 2 and killed not in now:
                        break
                    await asyncio.sleep(0.1)
                assert len(now) == 2 and killed not in now
                listed = (await http.get("/sessions")).json()
                assert {s["id"] for s in listed} == set(sessions)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
            assert children(proc.pid) == set()
        finally:
            if proc.poll() is None:
                for child in children(proc.pid):
                    os.kill(child, signal.SIGKILL)
                proc.kill()
                proc.wait()
