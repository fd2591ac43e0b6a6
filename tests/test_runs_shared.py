"""What two real `navi serve` workers on one PostgreSQL database share besides runs.

- A browser signed in through worker A is signed in on B, and signing out through B signs it out
  on A; failed sign-ins add up across workers (the throttle is the database's).
- `session_updated` reaches every connection of the user, whichever worker changed the session.
- A file uploaded through A is readable by a turn that runs on B, where B's disk does not have it
  (it is brought from the database).
- A due schedule is run once, by one of the two.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from navi.api.security import FAILURE_LIMIT
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script
from tests.helpers.forked import forks

pytestmark = pytest.mark.postgres

TOKEN = "shared-state-test-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def two_workers(tmp_path: Path, pg_url: str, model_url: str) -> Iterator[tuple[str, str]]:
    env = {
        "DATABASE_URL": pg_url,
        "OLLAMA_HOST": model_url,
        "NAVI_API_TOKEN": TOKEN,
        "PLANNING_ENABLED": "false",
        "NAVI_APPROVAL_MODE": "auto",
        "NAVI_SCHEDULE_POLL_SECONDS": "0.2",
    }
    with forks(tmp_path, env) as navi:
        ports = [free_port(), free_port()]
        pids = [navi.serve(port, wait=False) for port in ports]
        for port, pid in zip(ports, pids, strict=True):
            navi.wait_up(port, pid)
        yield f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"


async def next_frame(ws: Any, kind: str, within: float = 15.0) -> dict[str, Any]:
    async with asyncio.timeout(within):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] == kind:
                return frame


async def test_sign_ins_and_the_throttle_hold_across_workers(tmp_path: Path, pg_url: str) -> None:
    with FakeModelServer(Script()) as model, two_workers(tmp_path, pg_url, model.url) as (a, b):
        async with httpx.AsyncClient(base_url=a) as on_a, httpx.AsyncClient(base_url=b) as on_b:
            signed = await on_a.post("/login", data={"token": TOKEN})
            assert signed.status_code == 303
            cookie = {"Cookie": f"navi_session={signed.cookies['navi_session']}"}
            assert (await on_b.get("/sessions", headers=cookie)).status_code == 200  # good on B too
            out = await on_b.post("/logout", headers={**cookie, "Origin": b})
            assert out.status_code in (200, 303), out.text
            assert (await on_a.get("/sessions", headers=cookie)).status_code == 401  # out on A too
            # Wrong tokens, half through each worker: together they lock the address out of both.
            for n in range(FAILURE_LIMIT - 1):  # the cookie refused on A counted once already
                wrong = {"Authorization": f"Bearer wrong-{n}"}
                assert (await (on_a if n % 2 else on_b).get("/sessions", headers=wrong)).status_code == 401
            for http in (on_a, on_b):
                locked = await http.get("/sessions", headers=HEADERS)  # even with the right token
                assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0


async def test_updates_uploads_and_schedules_reach_every_worker(tmp_path: Path, pg_url: str) -> None:
    with (
        FakeModelServer(Script(responder=lambda _request: Reply(text="Done."))) as model,
        two_workers(tmp_path, pg_url, model.url) as (a, b),
    ):
        async with (
            httpx.AsyncClient(base_url=a, headers=HEADERS, timeout=15) as on_a,
            httpx.AsyncClient(base_url=b, headers=HEADERS, timeout=15) as on_b,
        ):
            session_id = (await on_a.post("/sessions")).json()["session_id"]
            url = f"{b.replace('http', 'ws')}/ws/sessions/{session_id}"
            async with connect(url, additional_headers=HEADERS, open_timeout=10, close_timeout=0.1) as ws:
                # Renamed through A: B's connection hears of it.
                await on_a.patch(f"/sessions/{session_id}", json={"name": "Renamed through A"})
                # (The session's creation through A may reach B's connection first, under load.)
                update = await next_frame(ws, "session_updated")
                if update["name"] is None:
                    update = await next_frame(ws, "session_updated")
                assert (update["session_id"], update["name"]) == (session_id, "Renamed through A")

                # Uploaded through A; not on the disk B reads (another machine): B brings it.
                content = b"the spare key is under the blue pot\n"
                files = {"file": ("notes.txt", content, "text/plain")}
                uploaded = (await on_a.post(f"/sessions/{session_id}/files", files=files)).json()
                path = Path(uploaded["path"])
                await asyncio.to_thread(path.unlink)
                message = {"type": "message", "content": "read my notes", "files": [uploaded]}
                await ws.send(json.dumps(message))
                start = await next_frame(ws, "stream_start")
                assert start["message"]["files"] == ["notes.txt"]
                brought = await asyncio.to_thread(path.read_bytes)
                assert brought == content  # back on this machine, for the turn's tools
                assert (await next_frame(ws, "stream_end"))["content"] == "Done."

            # A schedule due now runs once, though both workers look for due schedules.
            at = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
            made = await on_b.post("/schedules", json={"prompt": "Say: stretch!", "at": at})
            assert made.status_code == 201, made.text
            schedule_id = made.json()["id"]
            for _ in range(200):
                runs = (await on_a.get(f"/schedules/{schedule_id}")).json()["runs"]
                if runs and runs[0]["status"] == "ok":
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # time for a second run, were there one
            runs = (await on_b.get(f"/schedules/{schedule_id}")).json()["runs"]
            assert [r["status"] for r in runs] == ["ok"]
            ran = (await on_a.get(f"/sessions/{runs[0]['session_id']}")).json()["messages"]
            assert [m["content"] for m in ran if m["role"] == "user"] == ["Say: stretch!"]
