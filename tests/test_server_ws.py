"""The WebSocket protocol over real TCP: Navi under uvicorn, Ollama backend, fake model server."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from navi.agent.engine import Agent
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import frames_until, joined, kinds, live_navi, use_script


async def test_simple_answer_sequence(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(thinking="Easy one.", text="Hello there, friend!", prompt_tokens=300, completion_tokens=8)
    )
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "Hi"}))
            frames = await frames_until(ws, "stream_end")
    assert kinds(frames) == ["stream_start", "thinking_delta", "thinking_end", "stream_delta", "stream_end"]
    seqs = [f["seq"] for f in frames]
    assert seqs[0] == 1 and seqs == sorted(set(seqs))  # numbered from 1; joined deltas skip some
    end = frames[-1]
    assert end["content"] == "Hello there, friend!" and end["context_tokens"] == 308
    assert end["max_context_tokens"] == 65536
    assert "".join(f["delta"] for f in frames if f["type"] == "stream_delta") == end["content"]
    delta = next(f for f in frames if f["type"] == "thinking_delta")
    assert set(delta) == {"type", "delta", "seq", "run_id"}  # exactly the reference's fields (+ seq, run_id)
    assert len({f["run_id"] for f in frames}) == 1  # one run, named on every frame
    message = frames[0]["message"]
    assert message == {"id": message["id"], "content": "Hi", "files": [], "images": 0}
    # Additive status frames before the first token: the model lookup, planning, the prompt read.
    assert kinds(frames, status=True)[1:4] == ["status", "status", "status"]
    assert [f["phase"] for f in frames if f["type"] == "status"] == ["preparing", "planning", "waiting"]


async def test_planning_tools_subagent_and_profile_switch_sequences(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.plan("1. Make a list\n2. Answer")
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["a"]})]),
        Reply(tool_calls=[ScriptedCall("spawn_agent", {"task": "Check the facts."})]),
        Reply(tool_calls=[ScriptedCall("scratchpad", {"action": "write", "section": "s", "content": "x"})]),
        Reply(text="Facts checked."),
        Reply(tool_calls=[ScriptedCall("switch_profile", {"profile_id": "smart_home"})]),
        Reply(text="All done."),
    )
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "Do it all"}))
            frames = await frames_until(ws, "stream_end", updates=True)
    assert kinds(frames) == [
        "stream_start",
        "plan_ready",
        "tool_started",
        "tool_call",  # todo
        "tool_started",  # spawn_agent
        "tool_started",
        "tool_call",  # the subagent's scratchpad
        "tool_call",  # spawn_agent done
        "tool_started",
        "profile_switched",
        "tool_call",  # switch_profile
        "stream_delta",
        "stream_end",
    ]
    by_type = [f for f in frames if f["type"] in ("tool_started", "tool_call")]
    assert [(f["tool"], f["is_subagent"]) for f in by_type] == [
        ("todo", False),
        ("todo", False),
        ("spawn_agent", False),
        ("scratchpad", True),
        ("scratchpad", True),
        ("spawn_agent", False),
        ("switch_profile", False),
        ("switch_profile", False),
    ]
    switched = next(f for f in frames if f["type"] == "profile_switched")
    assert switched == {
        "type": "profile_switched",
        "profile_id": "smart_home",
        "profile_name": "Smart Home Assistant",
        "seq": switched["seq"],
        "run_id": frames[0]["run_id"],
    }
    # Every open page hears of the switch, as a session_updated frame (no run_id: it is no run's).
    updated = next(f for f in frames if f["type"] == "session_updated")
    assert updated == {
        "type": "session_updated",
        "session_id": sid,
        "name": None,
        "profile_id": "smart_home",
        "pinned": False,
        "folder": None,
        "archived": False,
        "temporary": False,
        "deleted": False,
    }


async def test_unknown_session_closes_with_4004(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        for sid in ("00000000-0000-4000-8000-000000000000", "not-a-session"):
            async with navi.socket(sid) as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ("this is not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"type": "ping"}', "unknown frame type 'ping'"),
        ('{"type": "message", "content": "   "}', "content is required"),
        ('{"type": "message"}', "content is required"),
        ('{"type": "message", "content": "hi", "images": ["%%%"]}', "not valid base64"),
        ('{"type": "message", "content": "hi", "images": ["aGVsbG8="]}', "is not a PNG"),
        (
            '{"type": "message", "content": "hi", "files": [{"name": "p", "path": "/etc/passwd"}]}',
            "not a file uploaded to this session",
        ),
    ],
)
async def test_bad_frames_get_an_error_and_the_socket_stays_usable(
    tmp_path: Path, fake_server: FakeModelServer, frame: str, expected: str
) -> None:
    script = use_script(fake_server)
    script.turn("Still here.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(frame)
            error = json.loads(await ws.recv())
            assert error["type"] == "error" and expected in error["message"]
            await ws.send(json.dumps({"type": "message", "content": "hello?"}))
            frames = await frames_until(ws, "stream_end")
            assert frames[-1]["content"] == "Still here."


async def test_oversized_frame(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid, max_size=None) as ws:
            await ws.send(json.dumps({"type": "message", "content": "x" * (17 * 1024 * 1024)}))
            error = json.loads(await ws.recv())
            assert error["type"] == "error" and "too large" in error["message"]
            await ws.send(json.dumps({"type": "ping"}))
            assert "unknown frame type" in json.loads(await ws.recv())["message"]


async def test_a_retry_during_a_run_is_refused(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """A second message waits in the queue (tests/test_message_queue.py); a retry is refused."""
    script = use_script(fake_server)
    script.turn(Reply(text="slow " * 40, chunk_chars=5, delay=0.03))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "first"}))
            await frames_until(ws, "stream_delta")
            await ws.send(json.dumps({"type": "retry"}))
            frames = await frames_until(ws, "error")
            assert frames[-1]["code"] == "busy" and "already in progress" in frames[-1]["message"]
            assert "seq" not in frames[-1]  # connection-level errors are not part of the turn
            rest = await frames_until(ws, "stream_end")
            assert rest[-1]["content"] == ("slow " * 40)


async def test_two_clients_see_the_same_turn(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(thinking="hmm", text="Shared answer for both tabs.", delay=0.01))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as first, navi.socket(sid) as second:
            await first.send(json.dumps({"type": "message", "content": "hello both"}))
            a, b = await asyncio.gather(frames_until(first, "stream_end"), frames_until(second, "stream_end"))
    assert joined(a) == joined(b)  # the same frames (either socket may have had deltas joined)
    assert a[0]["type"] == "stream_start" and a[-1]["content"] == "Shared answer for both tabs."


async def idle(navi: Any, sid: str, within: float = 30.0) -> None:
    """Until the session runs nothing (`active` false in its detail)."""
    async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http:
        for _ in range(int(within / 0.05)):
            if not (await http.get(f"/sessions/{sid}")).json()["active"]:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"session {sid} still busy after {within} s")


async def test_reconnect_mid_stream_rebuilds_the_whole_reply(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    answer = "This answer streams slowly so that the page can be reloaded half way through it."
    script.turn(Reply(thinking="Reasoning first.", text=answer, chunk_chars=4, delay=0.03))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "go"}))
            before = await frames_until(ws, "stream_delta")
            before += [json.loads(await ws.recv()) for _ in range(3)]
        # the page is reloaded: a new connection, mid-run
        async with navi.socket(sid) as ws:
            replay = await frames_until(ws, "stream_end")
        assert replay[0]["type"] == "stream_start" and replay[0]["seq"] == 1
        seqs = [f["seq"] for f in replay]
        assert seqs == sorted(set(seqs))
        assert joined(replay)[: len(joined(before)) - 1] == joined(before)[:-1]  # the last may grow
        assert "".join(f["delta"] for f in replay if f["type"] == "stream_delta") == answer
        assert "".join(f["delta"] for f in replay if f["type"] == "thinking_delta") == "Reasoning first."
        # ?since=N resumes without repeating frames the client already has
        script.turn(Reply(text="second answer", chunk_chars=3, delay=0.03))
        # A socket opened while a run is still finishing (its post-turn writes) replays that run
        # first: each new message goes on a socket opened once the session is idle.
        await idle(navi, sid)
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "again"}))
            head = await frames_until(ws, "stream_delta")
        async with navi.socket(sid, query=f"?since={head[-1]['seq']}") as ws:
            tail = await frames_until(ws, "stream_end")
        assert tail[0]["seq"] > head[-1]["seq"]  # nothing it had, nothing missing (the text below)
        assert "".join(f["delta"] for f in head + tail if f["type"] == "stream_delta") == "second answer"
        # ...of the run it names: a client whose last run was an earlier one gets the new run whole
        script.turn(Reply(text="third answer", chunk_chars=3, delay=0.03))
        await idle(navi, sid)
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "once more"}))
            third = await frames_until(ws, "stream_delta")
        assert third[0]["type"] == "stream_start" and third[0]["message"]["content"] == "once more"
        assert third[0]["run_id"] != head[0]["run_id"]
        query = f"?since={head[-1]['seq']}&run={head[0]['run_id']}"
        async with navi.socket(sid, query=query) as ws:
            missed = await frames_until(ws, "stream_end")  # what it missed of its run, which ended
            whole = await frames_until(ws, "stream_end")
        assert {f["run_id"] for f in missed} == {head[0]["run_id"]}
        assert missed[0]["seq"] == head[-1]["seq"] + 1
        assert "".join(f["delta"] for f in head + missed if f["type"] == "stream_delta") == "second answer"
        assert whole[0]["type"] == "stream_start" and whole[0]["message"]["content"] == "once more"
        assert "".join(f["delta"] for f in whole if f["type"] == "stream_delta") == "third answer"


async def run_frames_within(ws: Any, seconds: float) -> list[dict[str, Any]]:
    """The frames of runs a socket gets within `seconds` (session updates left out)."""
    got: list[dict[str, Any]] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while True:
                frame = json.loads(await ws.recv())
                if "run_id" in frame:
                    got.append(frame)
    return got


async def test_a_client_back_after_the_end_of_its_turn_gets_what_it_missed(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """The socket dropped near the end of a turn and came back after `stream_end`: the frames it
    missed, up to `stream_end`, while they are kept (RUN_EVENTS_KEEP_SECONDS) — not half an answer."""
    script = use_script(fake_server)
    script.turn(Reply(text="The whole answer, in many small pieces.", chunk_chars=3, delay=0.02))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "go"}))
            head = await frames_until(ws, "stream_delta")
        await idle(navi, sid)  # the turn ended while the client was away
        query = f"?since={head[-1]['seq']}&run={head[0]['run_id']}"
        async with navi.socket(sid, query=query) as ws:
            rest = await frames_until(ws, "stream_end")
        assert rest[0]["seq"] == head[-1]["seq"] + 1 and rest[-1]["type"] == "stream_end"
        text = "".join(f["delta"] for f in head + rest if f["type"] == "stream_delta")
        assert text == rest[-1]["content"] == "The whole answer, in many small pieces."
        # Another session's run is not replayed through this one's socket, nor a made-up run.
        other = navi.new_session()
        for run in (head[0]["run_id"], "f" * 16, "not-a-run"):
            async with navi.socket(other, query=f"?since=1&run={run}") as ws:
                assert await run_frames_within(ws, 0.5) == []
    with live_navi(tmp_path / "kept-not", fake_server, run_events_keep_seconds=0) as navi:
        script.turn("Short.")
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "go"}))
            start = (await frames_until(ws, "stream_start"))[-1]
        await idle(navi, sid)
        async with navi.socket(sid, query=f"?since=1&run={start['run_id']}") as ws:
            assert await run_frames_within(ws, 0.5) == []  # kept for no time: nothing to replay


async def test_stop_mid_stream_keeps_the_socket(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="word " * 300, chunk_chars=5, delay=0.03), "After the stop.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "ramble"}))
            await frames_until(ws, "stream_delta")
            with navi.client() as http:
                assert http.post(f"/sessions/{sid}/stop").json() == {"ok": True, "reason": None}
            frames = await frames_until(ws, "stream_stopped")
            assert frames[-1]["type"] == "stream_stopped"
            await ws.send(json.dumps({"type": "message", "content": "are you there?"}))
            after = await frames_until(ws, "stream_end")
            assert after[-1]["content"] == "After the stop."
        request = script.of_kind("turn")[0]
        assert fake_server.wait_for(lambda: request.outcome == "aborted")
        with navi.client() as http:
            assert http.post(f"/sessions/{sid}/stop").json() == {"ok": False, "reason": "no active run"}
            messages = http.get(f"/sessions/{sid}").json()["messages"]
        partial = messages[1]
        assert partial["stopped"] is True and partial["content"].startswith("word")


async def test_a_message_right_after_a_stop_waits_for_the_stopped_turn(
    tmp_path: Path, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stopped turn still writes after its `stream_stopped` (here slowed to 1.5 s): a message
    sent at once is not refused as busy, it is answered once that turn is done."""
    original = Agent._mark_unanswered

    async def slow(self: Agent, session_id: str) -> None:
        await asyncio.sleep(1.5)
        await original(self, session_id)

    monkeypatch.setattr(Agent, "_mark_unanswered", slow)
    script = use_script(fake_server)
    script.turn(Reply(text="word " * 300, chunk_chars=5, delay=0.03), "Answered after the stop.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "ramble"}))
            await frames_until(ws, "stream_delta")
            with navi.client() as http:
                assert http.post(f"/sessions/{sid}/stop").json()["ok"] is True
            await frames_until(ws, "stream_stopped")
            await ws.send(json.dumps({"type": "message", "content": "next"}))
            after = await frames_until(ws, "stream_end", "error")
            assert after[-1]["type"] == "stream_end", after[-1]
            assert after[-1]["content"] == "Answered after the stop."
        with navi.client() as http:
            messages = http.get(f"/sessions/{sid}").json()["messages"]
        assert [m["content"] for m in messages if m["role"] == "user"] == ["ramble", "next"]
        assert messages[1]["stopped"] is True


async def test_a_run_goes_on_when_every_client_leaves(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Saved even though nobody watched.", chunk_chars=4, delay=0.02))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "go and leave"}))
            await frames_until(ws, "stream_start")
        for _ in range(200):
            if not navi.runs.slots.here:
                break
            await asyncio.sleep(0.05)
        assert list(navi.runs.slots.here) == []  # finished runs leave nothing behind
        with navi.client() as http:
            detail = http.get(f"/sessions/{sid}").json()
        assert detail["messages"][-1]["content"] == "Saved even though nobody watched."
        assert detail["active"] is False


async def test_uploaded_files_reach_the_model(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("I see the report.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        with navi.client() as http:
            up = http.post(
                f"/sessions/{sid}/files", files={"file": ("report.txt", b"quarterly numbers", "text/plain")}
            )
        assert up.status_code == 201
        path = up.json()["path"]
        async with navi.socket(sid) as ws:
            await ws.send(
                json.dumps(
                    {"type": "message", "content": "Read it", "files": [{"name": "report.txt", "path": path}]}
                )
            )
            await frames_until(ws, "stream_end")
    assert (
        script.of_kind("turn")[0].last_user_text
        == f"Read it\n\n[Uploaded files on disk:\n- report.txt → {path}]"
    )


async def test_handshake_rejections_are_plain_http(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        with pytest.raises(InvalidStatus) as rejected:
            async with navi.socket(sid, origin="http://evil.example"):
                pass
        assert rejected.value.response.status_code == 403
