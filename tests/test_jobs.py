"""Background jobs against a live Navi (SQLite): started over REST and by the model's tool, run in
a session of their own while the conversation stays free, listed with their steps, stopped,
limited per user and by their step budget, each user's own; the result is posted back into the
conversation, announced as `job` frames and notified; a job whose worker died is resumed by the
next start of Navi."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.jobs import Job
from navi.storage.database import Database, sqlite_url
from navi.storage.jobs import SqlJobStore
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

_register()


@pytest.fixture
def navi(request: pytest.FixtureRequest, tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    marker = request.node.get_closest_marker("navi")
    with live_navi(
        tmp_path, fake_server, planning_enabled=False, **(marker.kwargs if marker else {})
    ) as server:
        yield server


def wait_job(http: httpx.Client, job_id: str, *states: str, within: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        job = http.get(f"/jobs/{job_id}").json()
        if job["state"] in states:
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never reached {states}: {http.get(f'/jobs/{job_id}').json()}")


def texts(http: httpx.Client, session_id: str) -> list[str]:
    return [str(m.get("content") or "") for m in http.get(f"/sessions/{session_id}").json()["messages"]]


def posted_back(http: httpx.Client, origin: str, within: float = 30.0, start: str = "Background job") -> str:
    """The job's report in the conversation that asked (the last message, starting with `start`):
    it is posted just after the job's state."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        said = texts(http, origin)
        if said and said[-1].startswith(start):
            return said[-1]
        time.sleep(0.05)
    raise AssertionError(f"no report was posted back to {origin}: {texts(http, origin)}")


async def test_a_job_runs_apart_and_posts_its_result_back(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(
            tool_calls=[ScriptedCall("scratchpad", {"action": "write", "section": "notes", "content": "42"})]
        ),
        Reply(text="Report: the answer is 42.", delay=0.05),
    )
    origin = navi.new_session()
    async with navi.socket(origin) as ws:
        with navi.client() as http:
            made = http.post(
                "/jobs", json={"prompt": "Work out the answer", "session_id": origin, "title": "Answer"}
            )
            assert made.status_code == 201, made.text
            job = made.json()
            assert job["state"] in ("queued", "running") and job["origin_session_id"] == origin
            assert job["session_id"] != origin and job["title"] == "Answer"
            # The job's own session is the user's, named after it.
            assert http.get(f"/sessions/{job['session_id']}").json()["name"] == "Job: Answer"
        frames = await frames_until(ws, "job", updates=True)
        seen: list[dict[str, Any]] = [f for f in frames if f["type"] == "job"]
        while not seen or seen[-1]["state"] not in ("done", "failed"):
            seen += [f for f in await frames_until(ws, "job", updates=True) if f["type"] == "job"]
    assert seen[-1]["state"] == "done" and seen[-1]["job_id"] == job["id"]
    assert any(f["state"] == "running" and f["steps"] == 1 and f["last_step"] == "scratchpad" for f in seen)
    with navi.client() as http:
        done = wait_job(http, job["id"], "done")
        assert (
            done["result"] == "Report: the answer is 42." and done["steps"] == 1 and done["progress"] == 1.0
        )
        assert done["last_step"] == "scratchpad" and done["attempts"] == 1
        assert posted_back(http, origin) == "Background job “Answer” is done:\n\nReport: the answer is 42."
        assert "Report: the answer is 42." in texts(http, done["session_id"])
        assert [j["id"] for j in http.get("/jobs").json()] == [job["id"]]
        report_id = http.get(f"/sessions/{origin}").json()["messages"][-1]["id"]
    # The model was asked the job's prompt in the job's session, not in the conversation.
    asked = [
        r for r in fake_server.script.requests if any(m.content == "Work out the answer" for m in r.messages)
    ]
    assert asked
    notifier = navi.app.state.services.notifier
    assert [(s.message.kind, s.message.title, s.message.session_id) for s in notifier.sent] == [
        ("job", "Answer", origin)
    ]
    # Its notification opens the conversation at the report posted there.
    assert notifier.sent[0].message.url == f"/#/s/{origin}?m={report_id}"


@pytest.mark.navi(navi_jobs_per_user=1, navi_job_max_steps=2)
def test_limits_isolation_stop_and_the_step_budget(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    bob_token = (
        CliRunner()
        .invoke(app, ["users", "add", "bob"], env={"DB_PATH": navi.settings.db_path})
        .stdout.strip()
    )
    script = use_script(fake_server)
    call = ScriptedCall("scratchpad", {"action": "append", "section": "n", "content": "x"})
    script.turn(*[Reply(tool_calls=[call]) for _ in range(5)])
    origin = navi.new_session()
    with (
        navi.client() as http,
        navi.client(anonymous=True, headers={"Authorization": f"Bearer {bob_token}"}) as bob,
    ):
        for bad, words in (
            ({"prompt": "   "}, "empty"),
            ({"prompt": "x", "session_id": "nope"}, "no session"),
        ):
            resp = http.post("/jobs", json=bad)
            assert (
                resp.status_code == 422
                and resp.json()["code"] == "bad_job"
                and words in resp.json()["detail"]
            )
        assert http.post("/jobs", json={"prompt": "x", "every": 1}).status_code == 422
        job = http.post("/jobs", json={"prompt": "Loop on", "session_id": origin}).json()
        second = http.post("/jobs", json={"prompt": "Another"})
        assert second.status_code == 409 and second.json()["code"] == "job_limit"
        # Bob sees none of it, cannot stop it, nor start one from the owner's conversation.
        assert bob.get("/jobs").json() == []
        assert bob.get(f"/jobs/{job['id']}").status_code == 404
        assert bob.post(f"/jobs/{job['id']}/stop").status_code == 404
        assert bob.post("/jobs", json={"prompt": "x", "session_id": origin}).status_code == 422
        failed = wait_job(http, job["id"], "failed", "done")
        assert failed["state"] == "failed" and "step budget (2 steps)" in failed["error"]
        assert posted_back(http, origin).startswith("Background job “Loop on” failed: its step budget")
        # Done: the limit frees a place.
        use_script(fake_server).turn(Reply(text="slow " * 40, delay=0.5, chunk_chars=2))
        running = http.post("/jobs", json={"prompt": "Say slow"}).json()
        wait_job(http, running["id"], "running")
        asked = http.post(f"/jobs/{running['id']}/stop").json()
        assert asked["stop_requested"] is True or asked["state"] == "stopped"
        stopped = wait_job(http, running["id"], "stopped", "done", "failed")
        assert stopped["state"] == "stopped" and stopped["origin_session_id"] is None


async def test_the_model_starts_a_job_and_the_conversation_stays_free(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(
            tool_calls=[
                ScriptedCall(
                    "background_job", {"action": "start", "prompt": "Compare the 30 pages", "title": "Pages"}
                )
            ]
        ),
        Reply(text="I started it; I will post the comparison here."),
        Reply(text="Page 3 is the best.", first_delay=1.0),  # the job's turn
        Reply(text="Still here."),  # the conversation's next turn, while the job runs
    )
    origin = navi.new_session()
    async with navi.socket(origin) as ws:
        await ws.send(json.dumps({"type": "message", "content": "Read these 30 pages and compare them"}))
        frames = await frames_until(ws, "stream_end")
        result = next(f for f in frames if f["type"] == "tool_call")
        assert (
            result["tool"] == "background_job"
            and result["success"]
            and "Started background job" in result["result"]
        )
    with navi.client() as http:
        [job] = http.get("/jobs").json()
        assert job["origin_session_id"] == origin and job["title"] == "Pages"
        # The model in the job cannot start another job (its session is a job's).
    async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth, timeout=60) as client:
        free = await client.post(f"/sessions/{origin}/messages", json={"content": "Are you there?"})
        assert free.status_code == 200 and "Still here." in free.text
    with navi.client() as http:
        done = wait_job(http, job["id"], "done")
        assert done["result"] == "Page 3 is the best."
        assert posted_back(http, origin) == "Background job “Pages” is done:\n\nPage 3 is the best."


def test_a_job_left_running_by_a_dead_worker_is_resumed(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Resumed and finished."))
    with live_navi(tmp_path, fake_server, planning_enabled=False) as first:
        session = first.new_session()
        origin = first.new_session()
        runtime = first.runtime
        job = Job(
            id="a" * 32,
            owner="local",
            title="Long read",
            prompt="Read everything",
            session_id=session,
            origin_session_id=origin,
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
        )
        assert runtime.jobs is not None
        url = sqlite_url(first.settings.db_path)

        async def left_running() -> None:  # what a worker that died mid-job leaves behind
            db = Database(url)
            store = SqlJobStore(db)
            await store.create(job, limit=5)
            claimed = await store.claim("dead-host/1/1/1/x", 0.0)
            assert claimed is not None and claimed.attempts == 1
            await db.dispose()

        first.server.stop()  # no runner of its own to claim it first
        asyncio.run(left_running())
    with live_navi(tmp_path, fake_server, planning_enabled=False) as second, second.client() as http:
        done = wait_job(http, job.id, "done")
        assert done["attempts"] == 2 and done["result"] == "Resumed and finished."
        assert posted_back(http, origin) == "Background job “Long read” is done:\n\nResumed and finished."
    resumed = script.requests[-1].messages[-1].content or ""
    assert "Navi was restarted" in resumed and "Read everything" in resumed
