"""Background jobs on two real `navi serve` workers sharing one PostgreSQL database: jobs started
through either worker each run exactly once, and a job whose worker is killed (SIGKILL) mid-run is
resumed and finished by the other worker once its lease has run out, its result posted into the
conversation that asked."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from navi.testing.agent_script import kind_of
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, Script, ScriptRequest
from tests.helpers.forked import Forks, forks
from tests.test_jobs import posted_back

pytestmark = pytest.mark.postgres

TOKEN = "two-workers-jobs-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
LEASE = 2.0


def respond(request: ScriptRequest) -> Reply:
    said = next((m.content or "" for m in reversed(request.messages) if m.role == "user"), "")
    if kind_of(request) != "turn":
        return Reply(text="A title")
    if "Navi was restarted" in said:
        return Reply(text="Finished after the restart.")
    if "slow job" in said:
        return Reply(text="word " * 200, chunk_chars=5, delay=0.25)  # about 50 s: killed before
    if "quick job" in said:
        return Reply(text=f"Answer to {said.split()[-1]}.")
    return Reply(text="Done.")


@pytest.fixture
def model(fake_server: FakeModelServer) -> FakeModelServer:
    fake_server.script = Script(responder=respond)
    return fake_server


@pytest.fixture
def navi(tmp_path: Path, pg_url: str, model: FakeModelServer) -> Iterator[Forks]:
    env = {
        "DATABASE_URL": pg_url,
        "OLLAMA_HOST": model.url,
        "NAVI_API_TOKEN": TOKEN,
        "PLANNING_ENABLED": "false",
        "NAVI_APPROVAL_MODE": "auto",
        "RUN_LEASE_SECONDS": str(LEASE),
    }
    with forks(tmp_path, env) as helper:
        yield helper


def client(port: int) -> httpx.Client:
    return httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=HEADERS, timeout=30)


def wait_job(http: httpx.Client, job_id: str, *states: str, within: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        job = http.get(f"/jobs/{job_id}").json()
        if job["state"] in states:
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never reached {states}: {http.get(f'/jobs/{job_id}').json()}")


def test_jobs_run_once_across_workers_and_a_killed_workers_job_is_finished(navi: Forks) -> None:
    port_a, port_b = free_port(), free_port()
    pid_a = navi.serve(port_a)
    with client(port_a) as a:
        origin = a.post("/sessions").json()["session_id"]
        slow = a.post(
            "/jobs", json={"prompt": "Do the slow job", "session_id": origin, "title": "Slow"}
        ).json()
        wait_job(a, slow["id"], "running")  # claimed by A, the only worker yet
    pid_b = navi.serve(port_b)
    with client(port_a) as a, client(port_b) as b:
        # Quick jobs through both workers, with both runners looking: each runs exactly once.
        quick = [
            (a if n % 2 else b).post("/jobs", json={"prompt": f"quick job {n}", "title": f"Q{n}"}).json()
            for n in range(2)
        ]
        for job in quick:
            done = wait_job(b, job["id"], "done", "failed")
            assert done["state"] == "done" and done["attempts"] == 1, done
            answers = [
                m
                for m in b.get(f"/sessions/{done['session_id']}").json()["messages"]
                if m["role"] == "assistant"
            ]
            assert [m["content"] for m in answers] == [done["result"]]
        assert sorted(j["result"] for j in (b.get(f"/jobs/{q['id']}").json() for q in quick)) == [
            "Answer to 0.",
            "Answer to 1.",
        ]
        assert b.get(f"/jobs/{slow['id']}").json()["state"] == "running"
    navi.kill(pid_a)  # mid-answer
    with client(port_b) as b:
        finished = wait_job(b, slow["id"], "done", "failed", within=90)
        assert finished["state"] == "done", (finished, navi.log(pid_b)[-3000:])
        assert finished["attempts"] == 2 and finished["result"] == "Finished after the restart."
        assert posted_back(b, origin) == "Background job “Slow” is done:\n\nFinished after the restart."
