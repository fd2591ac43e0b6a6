"""`navi chat` in a real terminal (tmux): `/background TEXT` starts a background job from this
conversation and the prompt is free at once; `/jobs` lists it with its steps and state; its result
is posted into the conversation (read back over REST); `/jobs stop ID` stops a running one;
`/research TEXT` starts a research job (its plan kept on the job, its report posted back)."""

from __future__ import annotations

import time
from pathlib import Path

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.helpers.terminal import NAVI, Terminal
from tests.server_helpers import live_navi, talk, use_script
from tests.test_chat_keys import env_for
from tests.test_jobs import posted_back
from tests.test_research import research_responder


def test_background_and_jobs(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Hello.", Reply(text="The comparison: B wins.", first_delay=1.0))
    with live_navi(tmp_path, fake_server, planning_enabled=False, navi_research_web_search=False) as navi:
        home, _ = talk(navi, "Bikes", ["Hi"])
        term = Terminal([*NAVI, "chat", home], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt("Hello.")
            term.type("/background")
            term.send("Enter")
            term.wait_for("✗ /background needs the task")
            term.type("/background compare bikes A and B")
            term.send("Enter")
            started = term.wait_for("its result will be posted here.")
            assert "“compare bikes A and B” started" in started
            with navi.client() as http:
                deadline = time.monotonic() + 60
                while http.get("/jobs").json()[0]["state"] != "done":
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
                [job] = http.get("/jobs").json()
                last = posted_back(http, home, start="Background job “compare bikes A and B”")
            assert job["origin_session_id"] == home and job["result"] == "The comparison: B wins."
            # The terminal says it is in view: the job's end is not pushed elsewhere.
            notifier = navi.app.state.services.notifier
            deadline = time.monotonic() + 10
            while notifier.sent[-1].message.kind != "job":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert (notifier.sent[-1].message.kind, notifier.sent[-1].outcome) == ("job", "visible")
            assert last == "Background job “compare bikes A and B” is done:\n\nThe comparison: B wins."
            term.type("/jobs")
            term.send("Enter")
            listed = term.wait_for(f"{job['id'][:8]}  done").rsplit("› /jobs", 1)[1]
            assert "0/40  steps  compare bikes A and B" in listed, listed

            script.turn(Reply(text="slow " * 60, chunk_chars=2, delay=0.5))
            term.type("/background a slow one")
            term.send("Enter")
            term.wait_for("“a slow one” started")
            with navi.client() as http:
                slow = next(j for j in http.get("/jobs").json() if j["title"] == "a slow one")
                deadline = time.monotonic() + 30
                while http.get(f"/jobs/{slow['id']}").json()["state"] != "running":
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
            term.type(f"/jobs stop {slow['id'][:8]}")
            term.send("Enter")
            term.wait_for(f"Job {slow['id'][:8]}: running, stopping")
            with navi.client() as http:
                deadline = time.monotonic() + 30
                while http.get(f"/jobs/{slow['id']}").json()["state"] != "stopped":
                    assert time.monotonic() < deadline
                    time.sleep(0.1)

            # /research: a research job of this conversation (no address to read, no web search
            # here: the plan is made, no source is read, and the report says so).
            script.responder = research_responder(script)
            term.type("/research")
            term.send("Enter")
            term.wait_for("✗ /research needs the question")
            term.type("/research the Kestrel 7 battery and weight")
            term.send("Enter")
            term.wait_for("“the Kestrel 7 battery and weight” started; its report will be posted here.")
            with navi.client() as http:
                research = next(j for j in http.get("/jobs").json() if j["mode"] == "research")
                deadline = time.monotonic() + 60
                while (research := http.get(f"/jobs/{research['id']}").json())["state"] != "done":
                    assert time.monotonic() < deadline and research["state"] in ("queued", "running")
                    time.sleep(0.1)
                last = posted_back(http, home, start="Background job “the Kestrel 7 battery and weight”")
            assert research["origin_session_id"] == home and research["sources"] == 0
            assert research["plan"] == ["Kestrel 7 battery range", "Kestrel 7 weight"]
            assert last.startswith("Background job “the Kestrel 7 battery and weight” is done:")
            assert "None of the sources read says anything about the question." in last
        finally:
            term.close()
