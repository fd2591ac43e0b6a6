"""Continue over a real server: the `continue` frame and `POST /sessions/{id}/messages/{mid}/continue`,
on the fake model server with a scripted agent."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

_register()  # the CLI's subcommands (`navi users add`)


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer):
    with live_navi(tmp_path, fake_server, planning_enabled=False) as server:
        yield server


def cut_off_session(navi: LiveNavi, fake: FakeModelServer, *rest: Reply) -> tuple[str, str]:
    """A session whose answer was cut off by the token cap, and that answer's id."""
    script = use_script(fake)
    script.turn(Reply(text="Roses are red, violets", finish_reason="length"), *rest)
    sid = navi.new_session()
    with navi.client() as http:
        answer = http.post(f"/sessions/{sid}/messages", json={"content": "A poem?"})
        assert answer.json()["finish_reason"] == "length", answer.text
        return sid, http.get(f"/sessions/{sid}").json()["messages"][-1]["id"]


async def test_the_continue_frame_streams_the_rest_of_the_answer(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    sid, cut = cut_off_session(navi, fake_server, Reply(text=" are blue."))
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "continue", "message_id": cut}))
        frames = await frames_until(ws, "stream_end")
        start = frames[0]
        assert start["type"] == "stream_start" and start["continues"] == cut and start["message"] is None
        deltas = "".join(f["delta"] for f in frames if f["type"] == "stream_delta")
        assert deltas == " are blue." and frames[-1]["content"] == " are blue."
        assert frames[-1]["finish_reason"] == "stop"

        await ws.send(json.dumps({"type": "continue", "message_id": cut}))  # not cut off any more
        refused = await frames_until(ws, "error")
        assert refused[-1]["code"] == "nothing_to_continue" and "seq" not in refused[-1]
        await ws.send('{"type": "continue"}')
        assert (await frames_until(ws, "error"))[-1]["code"] == "bad_frame"
    with navi.client() as http:
        messages = http.get(f"/sessions/{sid}").json()["messages"]
        assert [m["content"] for m in messages] == ["A poem?", "Roses are red, violets are blue."]
        assert messages[-1]["id"] == cut and messages[-1]["metadata"].get("finish_reason") is None


def test_continue_over_rest_and_its_refusals(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    sid, cut = cut_off_session(navi, fake_server, Reply(text=" are", finish_reason="length"), Reply(" blue."))
    with navi.client() as http:
        first = http.post(f"/sessions/{sid}/messages/{cut}/continue")
        assert first.status_code == 200, first.text
        assert first.json()["content"] == " are" and first.json()["finish_reason"] == "length"
        shown = http.get(f"/sessions/{sid}").json()["messages"]
        assert shown[-1]["content"] == "Roses are red, violets are"
        assert shown[-1]["metadata"]["finish_reason"] == "length"

        second = http.post(f"/sessions/{sid}/messages/{cut}/continue")
        assert second.status_code == 200 and second.json()["content"] == " blue."
        again = http.post(f"/sessions/{sid}/messages/{cut}/continue")
        assert again.status_code == 422 and again.json()["code"] == "nothing_to_continue", again.text
        question = shown[0]["id"]
        assert http.post(f"/sessions/{sid}/messages/{question}/continue").status_code == 422
        missing = http.post(f"/sessions/{sid}/messages/nope/continue")
        assert missing.status_code == 404 and missing.json()["code"] == "message_not_found"
        assert [m["content"] for m in http.get(f"/sessions/{sid}").json()["messages"]] == [
            "A poem?",
            "Roses are red, violets are blue.",
        ]


def test_another_users_session_is_not_found(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    sid, cut = cut_off_session(navi, fake_server)
    added = CliRunner().invoke(
        app, ["users", "add", "bob"], env={"DB_PATH": str(navi.settings.db_path), "LOG_LEVEL": "WARNING"}
    )
    assert added.exit_code == 0, added.output
    bob = {"Authorization": f"Bearer {added.stdout.strip()}"}
    with httpx.Client(base_url=navi.url, headers=bob, timeout=30) as as_bob:
        resp = as_bob.post(f"/sessions/{sid}/messages/{cut}/continue")
        assert resp.status_code == 404 and resp.json()["code"] == "session_not_found", resp.text
    with navi.client() as http:
        assert http.get(f"/sessions/{sid}").json()["messages"][-1]["content"] == "Roses are red, violets"


async def test_continue_while_a_turn_runs_is_busy(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    sid, cut = cut_off_session(navi, fake_server, Reply(text="Slow new answer.", delay=0.2))
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "message", "content": "Another question"}))
        await frames_until(ws, "stream_delta")
        await ws.send(json.dumps({"type": "continue", "message_id": cut}))
        frames = await frames_until(ws, "error", "stream_end")
        refusal = next(f for f in frames if f["type"] == "error")
        assert refusal["code"] == "busy" and "seq" not in refusal
        await frames_until(ws, "stream_end")
    with navi.client() as http:
        shown = [m["content"] for m in http.get(f"/sessions/{sid}").json()["messages"]]
    assert shown == ["A poem?", "Roses are red, violets", "Another question", "Slow new answer."]


async def test_a_stopped_answer_can_be_continued(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(text="Roses are **red**, violets " + "and more " * 200, chunk_chars=4, delay=0.02),
        Reply(text=" are blue."),
    )
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "message", "content": "A poem?"}))
        said = ""
        while not said.startswith("Roses are"):  # stopped once these words have streamed
            said += str((await frames_until(ws, "stream_delta"))[-1]["delta"])
        with navi.client() as http:
            assert http.post(f"/sessions/{sid}/stop").json()["ok"] is True
        stopped = (await frames_until(ws, "stream_stopped"))[-1]
        with navi.client() as http:
            shown = http.get(f"/sessions/{sid}").json()["messages"]
        part = shown[-1]
        assert part["stopped"] is True and part["content"].startswith("Roses are")
        assert stopped["message_id"] == part["id"]  # what the page's Continue names

        await ws.send(json.dumps({"type": "continue", "message_id": part["id"]}))
        frames = await frames_until(ws, "stream_end")
        assert frames[0]["type"] == "stream_start" and frames[0]["continues"] == part["id"]
        assert frames[-1]["content"] == " are blue." and frames[-1]["finish_reason"] == "stop"
        await ws.send(json.dumps({"type": "continue", "message_id": part["id"]}))  # finished now
        assert (await frames_until(ws, "error"))[-1]["code"] == "nothing_to_continue"
    with navi.client() as http:
        messages = http.get(f"/sessions/{sid}").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    joined = messages[-1]
    assert joined["id"] == part["id"] and joined["content"] == part["content"] + " are blue."
    assert joined["stopped"] is False and joined["metadata"].get("finish_reason") is None
    request = script.of_kind("turn")[-1]
    assert request.messages[-2].content == part["content"]  # the model sees what it had written


async def test_a_stop_before_any_text_leaves_nothing_to_continue(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    use_script(fake_server).turn(Reply(text="Too late.", first_delay=3))
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "message", "content": "Hello?"}))
        await frames_until(ws, "stream_start")
        with navi.client() as http:
            assert http.post(f"/sessions/{sid}/stop").json()["ok"] is True
        stopped = (await frames_until(ws, "stream_stopped"))[-1]
        assert "message_id" not in stopped
