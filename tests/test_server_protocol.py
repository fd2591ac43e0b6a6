"""Navi's additions to the WebSocket protocol, over real TCP: run ids, the user's message in
`stream_start`, `session_updated` for every open page, error codes, the run slot freed at
`stream_end`, and connections that let go of finished runs."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from pathlib import Path

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.server_helpers import frames_until, kinds, live_navi, use_script


async def test_a_second_window_draws_the_message_and_hears_the_new_name(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="Oslo is lovely in June.", delay=0.01))
    script.title = "Trip to Oslo"
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        other = navi.new_session()  # a page showing another conversation
        async with navi.socket(sid) as first, navi.socket(sid) as second, navi.socket(other) as elsewhere:
            await first.send(json.dumps({"type": "message", "content": "Plan my trip to Oslo"}))
            seen = await frames_until(second, "session_updated")
            elsewhere_seen = await frames_until(elsewhere, "session_updated")
        start = seen[0]
        assert start["type"] == "stream_start" and start["message"]["content"] == "Plan my trip to Oslo"
        assert start["message"]["files"] == [] and start["message"]["images"] == 0
        run_frames = [f for f in seen if f["type"] != "session_updated"]
        assert {f["run_id"] for f in run_frames} == {start["run_id"]}
        assert kinds(run_frames)[-1] == "stream_end"
        assert (
            seen[-1]
            == elsewhere_seen[-1]
            == {
                "type": "session_updated",
                "session_id": sid,
                "name": "Trip to Oslo",
                "profile_id": "secretary",
                "pinned": False,
                "folder": None,
                "archived": False,
                "temporary": False,
                "deleted": False,
            }
        )
        with navi.client() as http:
            stored = http.get(f"/sessions/{sid}").json()["messages"]
        assert stored[0]["id"] == start["message"]["id"]  # the id the other window drew is the stored one


async def test_rest_changes_reach_every_open_page(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        watched, changed = navi.new_session(), navi.new_session()
        async with navi.socket(watched) as ws:
            with navi.client() as http:
                assert http.patch(f"/sessions/{changed}", json={"name": "Taxes"}).status_code == 200
                assert http.patch(f"/sessions/{changed}/pin", json={"pinned": True}).status_code == 200
                assert http.delete(f"/sessions/{changed}").status_code == 200
                created = http.post("/sessions").json()["session_id"]
            frames = [json.loads(await ws.recv()) for _ in range(4)]
    assert [(f["session_id"], f.get("name"), f.get("pinned"), f["deleted"]) for f in frames] == [
        (changed, "Taxes", False, False),
        (changed, "Taxes", True, False),
        (changed, None, None, True),
        (created, None, False, False),
    ]


async def test_errors_carry_stable_codes(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="slow " * 40, chunk_chars=5, delay=0.03))
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send("{not json")
            assert json.loads(await ws.recv())["code"] == "bad_frame"
            await ws.send(json.dumps({"type": "message", "content": "first"}))
            await frames_until(ws, "stream_delta")
            await ws.send(json.dumps({"type": "retry"}))
            busy = (await frames_until(ws, "error"))[-1]
            assert busy["code"] == "busy" and "already in progress" in busy["message"]
            await frames_until(ws, "stream_end")
        with navi.client() as http:
            missing = http.get("/sessions/s_00000000000000000000000000000000")
            assert missing.status_code == 404 and missing.json()["code"] == "session_not_found"
            bad = http.patch(f"/sessions/{sid}", json={"profile_id": "nobody"})
            assert bad.status_code == 422 and bad.json()["code"] == "unknown_profile"
            assert "nobody" in bad.json()["detail"]
    # The model server is gone: the turn's error says so, by code.
    with live_navi(tmp_path / "gone", fake_server, ollama_host="http://127.0.0.1:9") as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "anyone?"}))
            error = (await frames_until(ws, "error"))[-1]
        assert error["code"] == "model_unreachable" and error["run_id"]


async def test_a_message_right_after_stream_end_is_accepted_while_the_summary_runs(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="First. " * 40, prompt_tokens=100, completion_tokens=5))
    script.turn(Reply(text="Second.", prompt_tokens=9000, completion_tokens=5))  # fills the window
    script.summary(Reply(text="## Current goal\n- counting", first_delay=30))  # the summary hangs
    script.turn("Third.")
    with live_navi(
        tmp_path, fake_server, planning_enabled=False, ollama_num_ctx=10_000, context_keep_recent=1
    ) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "One " * 40}))
            await frames_until(ws, "stream_end")
            await ws.send(json.dumps({"type": "message", "content": "Two"}))
            first = await frames_until(ws, "stream_end")
            assert navi.runs.slots.get(sid) is not None  # the answered run is still summarising
            await ws.send(json.dumps({"type": "message", "content": "Three"}))
            second = await frames_until(ws, "stream_end", "error")
        assert second[-1]["type"] == "stream_end" and second[-1]["content"] == "Third."
        assert second[0]["type"] == "stream_start" and second[0]["run_id"] != first[0]["run_id"]
        assert not any(f["type"] == "error" for f in second)


async def test_a_connection_lets_go_of_finished_runs(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="x" * 2000, chunk_chars=4), "second")
    # Ended runs are kept for a reconnect (RUN_EVENTS_KEEP_SECONDS): none here, so only the
    # connection could still hold one.
    with live_navi(tmp_path, fake_server, run_events_keep_seconds=0) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "long"}))
            await frames_until(ws, "stream_start")
            run = weakref.ref(navi.runs.slots.get(sid))
            await frames_until(ws, "stream_end")
            for _ in range(200):  # post-turn work (naming) ends the run
                if navi.runs.slots.get(sid) is None:
                    break
                await asyncio.sleep(0.02)
            await ws.send(json.dumps({"type": "message", "content": "again"}))  # the socket is still open
            await frames_until(ws, "stream_end")
            for _ in range(50):
                gc.collect()
                if run() is None:
                    break
                await asyncio.sleep(0.05)
            assert run() is None  # with its 500 frames, no longer held by the open connection


async def test_a_failed_turn_is_kept_and_retry_stores_the_message_once(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(Reply(status=500, error="the model crashed"), "Berlin is the capital.")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "Capital of Germany?"}))
            failed = await frames_until(ws, "error")
        error = failed[-1]
        assert error["code"] == "model_error" and error["run_id"] == failed[0]["run_id"]
        with navi.client() as http:
            for _ in range(100):  # the record is written as the run ends
                detail = http.get(f"/sessions/{sid}").json()
                if len(detail["messages"]) == 2:
                    break
                await asyncio.sleep(0.02)
            context = http.get(f"/sessions/{sid}/context").json()["messages"]
        user, record = detail["messages"]
        assert user["role"] == "user" and user["id"] == failed[0]["message"]["id"]
        assert record["metadata"]["failed_turn"] == user["id"]
        assert record["metadata"]["error"] == {"code": "model_error", "message": error["message"]}
        assert [m["role"] for m in context] == ["user"]  # the model never sees the record
        # After a reload: Retry.
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "retry"}))
            retried = await frames_until(ws, "stream_end", "error")
            assert retried[0]["type"] == "stream_start" and retried[0]["retry"] is True
            assert retried[0]["message"]["id"] == user["id"]
            assert retried[-1]["type"] == "stream_end" and retried[-1]["content"] == "Berlin is the capital."
            for _ in range(100):
                if navi.runs.slots.get(sid) is None:
                    break
                await asyncio.sleep(0.02)
            await ws.send(json.dumps({"type": "retry"}))  # nothing failed any more
            nothing = await frames_until(ws, "error")
            assert nothing[-1]["code"] == "nothing_to_retry"
        with navi.client() as http:
            messages = http.get(f"/sessions/{sid}").json()["messages"]
            context = http.get(f"/sessions/{sid}/context").json()["messages"]
        assert [m["content"] for m in messages if m["role"] == "user"] == ["Capital of Germany?"]
        assert [m["role"] for m in context] == ["user", "assistant"]
        assert messages[-1]["metadata"]["retry_of"] == user["id"]
        # The model was asked the question once more, with the message once.
        second = script.of_kind("turn")[1]
        assert second.last_user_text == "Capital of Germany?"
        assert sum(1 for m in second.messages if m.role == "user") == 1


async def test_the_page_and_the_engine_agree_on_the_window(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Small window, small answer.")
    # A model whose server reports 8,192 tokens, below Navi's configured 65,536.
    with live_navi(tmp_path, fake_server, ollama_default_model="plain:1b", planning_enabled=False) as navi:
        sid = navi.new_session()
        with navi.client() as http:
            before = http.get(f"/sessions/{sid}").json()["max_context_tokens"]
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "hello"}))
            end = (await frames_until(ws, "stream_end"))[-1]
        with navi.client() as http:
            after = http.get(f"/sessions/{sid}").json()["max_context_tokens"]
    assert before == end["max_context_tokens"] == after == 8192
