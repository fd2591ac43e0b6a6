"""Schedules over REST and the WebSocket feed, against a live Navi with a short poll interval:
bad input answers 422 saying what is wrong, another user's schedule is not found, a due run
starts within a few seconds through the normal agent loop (a page watching the session sees
it), the owner's connections get `schedule_run` frames, the session is marked unread, the
webhook receives the answer, and a run that needs an approval waits for it and says so.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

_register()


class Hook:
    """A local HTTP server standing in for ntfy: it keeps what it was sent."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.arrived = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                hook.received.append({"path": self.path, "headers": dict(self.headers), "body": body})
                hook.arrived.set()
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/navi-topic"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    h = Hook()
    try:
        yield h
    finally:
        h.close()


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer, hook: Hook) -> Iterator[LiveNavi]:
    with live_navi(
        tmp_path,
        fake_server,
        tz="Europe/Berlin",
        navi_schedule_poll_seconds=0.2,
        navi_notify_webhook_url=hook.url,
        navi_notify_webhook_token="hook-secret",
        navi_notify_webhook_headers="Priority: high",
    ) as live:
        yield live


def _soon(seconds: float = 1.0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


async def _until_status(http: httpx.AsyncClient, schedule_id: str, *statuses: str) -> dict[str, Any]:
    """Poll the schedule until its latest run has one of `statuses` (a bounded number of polls)."""
    for _ in range(300):
        detail = (await http.get(f"/schedules/{schedule_id}")).json()
        if detail["runs"] and detail["runs"][0]["status"] in statuses:
            return dict(detail)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no run reached {statuses}: {detail}")


def test_bad_input_gets_a_clear_422(navi: LiveNavi) -> None:
    session = navi.new_session()
    with navi.client() as http:
        cases = [
            ({"prompt": "x", "cron": "61 * * * *"}, "cron '61 * * * *' is not valid"),
            ({"prompt": "x", "cron": "0 9 * *"}, "must have five fields"),
            ({"prompt": "x", "at": "2020-01-01T09:00"}, "is in the past"),
            (
                {"prompt": "x", "cron": "0 9 * * *", "every_seconds": 60},
                "exactly one of cron, every_seconds or at",
            ),
            ({"prompt": "x"}, "exactly one of cron, every_seconds or at"),
            ({"prompt": "x", "every_seconds": 4}, "at least 5"),
            ({"prompt": "x", "every_seconds": 60, "profile_id": "nope"}, "no profile 'nope'"),
            (
                {"prompt": "x", "every_seconds": 60, "session_id": "6f1c1f3e-0000-4000-8000-000000000000"},
                "no session",
            ),
            ({"prompt": "x", "at": "whenever you like"}, "could not read"),
        ]
        for body, said in cases:
            resp = http.post("/schedules", json=body)
            assert resp.status_code == 422, (body, resp.text)
            assert said in resp.json()["detail"], (body, resp.json())
        resp = http.post("/schedules", json={"prompt": "x", "every_seconds": 60, "every": 5})
        assert resp.status_code == 422 and "every" in resp.json()["detail"]
        assert http.get("/schedules").json() == []
        made = http.post(
            "/schedules", json={"prompt": "Check the disks", "cron": "0 3 * * *", "session_id": session}
        )
        assert made.status_code == 201, made.text
        body = made.json()
        assert body["id"] and body["kind"] == "cron" and body["timezone"] == "Europe/Berlin"
        assert body["missed"] == "skip" and body["title"] == "Check the disks"
        # 03:00 in Berlin is 01:00 or 02:00 UTC, depending on the season.
        assert datetime.fromisoformat(body["next_run_at"]).astimezone(UTC).hour in (1, 2)
        bad = http.patch(f"/schedules/{body['id']}", json={"every_seconds": 1})
        assert bad.status_code == 422 and "at least 5" in bad.json()["detail"]


def test_owner_only_and_the_crud_round(navi: LiveNavi, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["users", "add", "bob"], env={"DB_PATH": navi.settings.db_path, "LOG_LEVEL": "WARNING"}
    )
    bob_token = result.stdout.strip()
    with (
        navi.client() as http,
        navi.client(anonymous=True, headers={"Authorization": f"Bearer {bob_token}"}) as bob,
    ):
        made = http.post("/schedules", json={"prompt": "Water the plants", "every_seconds": 3600}).json()
        sid = made["id"]
        assert [s["id"] for s in http.get("/schedules").json()] == [sid]
        assert bob.get("/schedules").json() == []
        for method, path, body in (
            ("GET", f"/schedules/{sid}", None),
            ("PATCH", f"/schedules/{sid}", {"paused": True}),
            ("DELETE", f"/schedules/{sid}", None),
            ("POST", f"/schedules/{sid}/run", None),
        ):
            resp = bob.request(method, path, json=body)
            assert resp.status_code == 404 and resp.json()["code"] == "not_found", (method, path)
        # Bob cannot aim a schedule at the owner's session either.
        mine = navi.new_session()
        resp = bob.post("/schedules", json={"prompt": "x", "every_seconds": 60, "session_id": mine})
        assert resp.status_code == 422 and "no session" in resp.json()["detail"]

        paused = http.patch(f"/schedules/{sid}", json={"paused": True}).json()
        assert paused["paused"] is True and paused["prompt"] == "Water the plants"
        edited = http.patch(f"/schedules/{sid}", json={"cron": "15 8 * * 1", "title": "Plants"}).json()
        assert edited["kind"] == "cron" and edited["every_seconds"] is None and edited["title"] == "Plants"
        assert edited["paused"] is True  # editing the timing does not resume it
        detail = http.get(f"/schedules/{sid}").json()
        assert detail["runs"] == [] and detail["cron"] == "15 8 * * 1"
        assert http.delete(f"/schedules/{sid}").json() == {"ok": True}
        assert http.get(f"/schedules/{sid}").status_code == 404
        assert http.get("/schedules").json() == []


async def test_a_due_one_off_runs_through_the_agent_and_notifies(
    navi: LiveNavi, fake_server: FakeModelServer, hook: Hook
) -> None:
    script = use_script(fake_server)
    script.turn(
        "Time to call Anna.\nHer number is in your contacts.\n"
        + "\n".join(f"Line {n}" for n in ("three", "four", "five", "six", "seven"))
    )
    watched = navi.new_session()
    async with navi.socket(watched) as ws, httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http:
        resp = await http.post(
            "/schedules", json={"prompt": "Remind me to call Anna", "at": _soon(), "title": "Call Anna ☎"}
        )
        assert resp.status_code == 201, resp.text
        sid = resp.json()["id"]
        started = await frames_until(ws, "schedule_run")
        assert started[-1]["status"] == "running" and started[-1]["schedule_id"] == sid
        finished = [f for f in await frames_until(ws, "schedule_run") if f["type"] == "schedule_run"][-1]
        assert (
            finished["status"] == "ok" and finished["title"] == "Call Anna ☎" and finished["unread"] is True
        )
        assert finished["preview"].startswith("Time to call Anna.\nHer number is in your contacts.")
        run_session = finished["session_id"]
        assert run_session and run_session != watched  # a new session per run

        detail = await _until_status(http, sid, "ok")
        assert detail["done"] is True and detail["next_run_at"] is None  # a one-off stays listed, done
        assert [s["id"] for s in (await http.get("/schedules")).json()] == [sid]
        run = detail["runs"][0]
        assert run["session_id"] == run_session and run["id"] == finished["schedule_run_id"]
        session = (await http.get(f"/sessions/{run_session}")).json()
        assert [m["role"] for m in session["messages"]] == ["user", "assistant"]
        assert session["messages"][0]["content"] == "Remind me to call Anna"
        assert session["name"] in ("Call Anna ☎", "Scripted title") and session["unread"] is True
        listed = {s["id"]: s for s in (await http.get("/sessions")).json()}
        assert listed[run_session]["unread"] is True and listed[watched]["unread"] is False
        assert (await http.post(f"/sessions/{run_session}/read")).json() == {"ok": True}
        assert (await http.get("/sessions")).json()[0]["unread"] is False

    for _ in range(100):
        if hook.received:
            break
        await asyncio.sleep(0.05)
    pushed = hook.received[0]
    assert pushed["path"] == "/navi-topic"
    assert pushed["headers"]["Title"] == "=?UTF-8?B?Q2FsbCBBbm5hIOKYjg==?="  # "Call Anna ☎", RFC 2047
    assert (
        pushed["headers"]["Authorization"] == "Bearer hook-secret" and pushed["headers"]["Priority"] == "high"
    )
    assert pushed["body"].splitlines()[0] == "Time to call Anna." and "Line seven" not in pushed["body"]


async def test_run_now_in_a_watched_session_streams_to_its_page(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Disk use is at 41%.")
    session = navi.new_session()
    async with navi.socket(session) as ws, httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http:
        sid = (
            await http.post(
                "/schedules",
                json={"prompt": "How full are the disks?", "cron": "0 3 * * *", "session_id": session},
            )
        ).json()["id"]
        started = await http.post(f"/schedules/{sid}/run")
        assert started.status_code == 202 and started.json()["status"] == "running"
        frames = await frames_until(ws, "stream_end")
        kinds = [f["type"] for f in frames]
        assert kinds.index("stream_start") < kinds.index("stream_end")
        start = next(f for f in frames if f["type"] == "stream_start")
        assert start["message"]["content"] == "How full are the disks?"
        assert frames[-1]["content"] == "Disk use is at 41%."
        detail = await _until_status(http, sid, "ok")
        assert detail["runs"][0]["manual"] is True and detail["runs"][0]["session_id"] == session
        assert detail["next_run_at"] is not None and detail["done"] is False  # its timing is untouched


async def test_a_run_that_needs_approval_waits_and_notifies(
    tmp_path: Path, fake_server: FakeModelServer, hook: Hook
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(tool_calls=[ScriptedCall("terminal", {"command": "df -h"})]), "Checked.")
    with live_navi(
        tmp_path,
        fake_server,
        navi_approval_mode="always",
        navi_schedule_poll_seconds=0.2,
        navi_notify_webhook_url=hook.url,
    ) as navi:
        session = navi.new_session()
        async with (
            navi.socket(session) as ws,
            httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http,
        ):
            sid = (
                await http.post(
                    "/schedules", json={"prompt": "Check disks", "at": _soon(), "session_id": session}
                )
            ).json()["id"]
            asked = (await frames_until(ws, "approval_required"))[-1]
            waiting = [f for f in await frames_until(ws, "schedule_run") if f["type"] == "schedule_run"][-1]
            assert waiting["status"] == "waiting_approval" and waiting["tool"] == "terminal"
            assert (await _until_status(http, sid, "waiting_approval"))["runs"][0]["session_id"] == session
            for _ in range(100):
                if hook.received:
                    break
                await asyncio.sleep(0.05)
            assert hook.received[0]["body"].startswith("Waiting for your approval: terminal")
            await ws.send(json.dumps({"type": "approval", "call_id": asked["call_id"], "decision": "deny"}))
            await frames_until(ws, "stream_end")
            assert (await _until_status(http, sid, "ok"))["runs"][0]["preview"] == "Checked."
