"""Messages sent while a turn runs: queued to run after it, or steering its next step.

Real Navi under uvicorn, real SQLite, the fake model server scripted turn by turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

SLOW = Reply(text="slow " * 40, chunk_chars=5, delay=0.04)  # about 1.6 s of answer
# A slow first step with a tool call: a steering message sent during it joins the next step.
NOTING = Reply(
    text="Let me note that. " * 8,
    chunk_chars=6,
    delay=0.05,
    tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["pack"]})],
)


async def send(ws: ClientConnection, **frame: Any) -> None:
    await ws.send(json.dumps(frame))


async def next_frame(ws: ClientConnection, kind: str) -> dict[str, Any]:
    return (await frames_until(ws, kind))[-1]


def shown(navi: LiveNavi, sid: str) -> list[tuple[str, str]]:
    with navi.client() as http:
        messages = http.get(f"/sessions/{sid}").json()["messages"]
    return [(m["role"], m["content"]) for m in messages]


async def test_a_message_sent_while_a_turn_runs_is_queued_and_runs_after(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(SLOW, "Second answer.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws, navi.socket(sid) as other:
            await send(ws, type="message", content="first")
            await frames_until(ws, "stream_delta")
            await send(ws, type="message", content="second")
            queued = await next_frame(ws, "queued")
            assert (queued["session_id"], queued["position"], queued["mode"]) == (sid, 1, "queue")
            assert queued["content"] == "second"
            seen = await next_frame(other, "queued")  # every client of the session hears of it
            assert seen["message_id"] == queued["message_id"]
            with navi.client() as http:  # what a reloaded page lists
                listed = http.get(f"/sessions/{sid}/queue").json()["messages"]
            assert [(m["message_id"], m["content"], m["position"]) for m in listed] == [
                (queued["message_id"], "second", 1)
            ]
            first = await next_frame(ws, "stream_end")
            assert first["content"] == "slow " * 40
            start = await next_frame(ws, "stream_start")
            assert start["message"]["id"] == queued["message_id"]
            assert start["message"]["content"] == "second"
            assert (await next_frame(ws, "stream_end"))["content"] == "Second answer."
        with navi.client() as http:
            assert http.get(f"/sessions/{sid}/queue").json()["messages"] == []
        assert shown(navi, sid) == [
            ("user", "first"),
            ("assistant", "slow " * 40),
            ("user", "second"),
            ("assistant", "Second answer."),
        ]
    assert script.of_kind("turn")[1].last_user_text == "second"


async def test_queued_messages_run_in_order_and_can_be_edited_or_cancelled(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(SLOW, "Answer to two.", "Answer to four.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await send(ws, type="message", content="one")
            await frames_until(ws, "stream_delta")
            ids = []
            for text in ("two", "three", "four"):
                await send(ws, type="message", content=text)
                queued = await next_frame(ws, "queued")
                ids.append(queued["message_id"])
                assert queued["position"] == len(ids)
            await send(ws, type="queue_edit", message_id=ids[0], content="two, edited")
            edited = await next_frame(ws, "queued")
            assert (edited["message_id"], edited["content"], edited["position"]) == (ids[0], "two, edited", 1)
            with navi.client() as http:
                cancelled = http.delete(f"/sessions/{sid}/queue/{ids[1]}")
                assert cancelled.status_code == 200
                assert [m["message_id"] for m in cancelled.json()["messages"]] == [ids[0], ids[2]]
                again = http.delete(f"/sessions/{sid}/queue/{ids[1]}")
                assert again.status_code == 404 and again.json()["code"] == "not_queued"
                renamed = http.patch(f"/sessions/{sid}/queue/{ids[2]}", json={"content": "four!"})
                assert renamed.status_code == 200 and renamed.json()["position"] == 2
                blank = http.patch(f"/sessions/{sid}/queue/{ids[2]}", json={"content": "  "})
                assert blank.status_code == 422
            gone = await next_frame(ws, "queue_cancelled")
            assert gone == {"type": "queue_cancelled", "session_id": sid, "message_id": ids[1]}
            await send(ws, type="queue_cancel", message_id="m_nothing_waits_under_this")
            refused = await next_frame(ws, "error")
            assert refused["code"] == "not_queued" and "seq" not in refused
            ends = []
            while len(ends) < 3:
                ends.append(await next_frame(ws, "stream_end"))
        assert shown(navi, sid) == [
            ("user", "one"),
            ("assistant", "slow " * 40),
            ("user", "two, edited"),
            ("assistant", "Answer to two."),
            ("user", "four!"),
            ("assistant", "Answer to four."),
        ]
    assert [r.last_user_text for r in script.of_kind("turn")] == ["one", "two, edited", "four!"]


async def test_a_steering_message_reaches_the_next_model_call_where_it_was_said(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(
        NOTING,
        "Packing for Oslo, then.",
    )
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await send(ws, type="message", content="plan my trip")
            await frames_until(ws, "stream_delta")
            await send(ws, type="message", content="it is Oslo, not Bergen", mode="steer")
            queued = await next_frame(ws, "queued")
            assert queued["mode"] == "steer"
            frames = await frames_until(ws, "stream_end")
        steered = [f for f in frames if f["type"] == "steered"]
        assert [f["message_id"] for f in steered] == [queued["message_id"]]
        assert steered[0]["message"]["content"] == "it is Oslo, not Bergen"
        order = [f["type"] for f in frames if f["type"] in ("tool_call", "steered", "stream_end")]
        assert order == ["tool_call", "steered", "stream_end"]
        roles = [(role, text) for role, text in shown(navi, sid) if role == "user"]
        assert roles == [("user", "plan my trip"), ("user", "it is Oslo, not Bergen")]
        with navi.client() as http:
            messages = http.get(f"/sessions/{sid}").json()["messages"]
        said = next(m for m in messages if m["content"] == "it is Oslo, not Bergen")
        assert said["id"] == queued["message_id"] and said["metadata"]["steered"] is True
        # Stored where it was said: after the tool's result, before the answer it changed.
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    turns = script.of_kind("turn")
    assert len(turns) == 2
    second = [(m.role, m.content) for m in turns[1].messages if m.role != "system"]
    assert second[-1] == ("user", "it is Oslo, not Bergen") and second[-2][0] == "tool"
    assert all("Oslo" not in (m.content or "") for m in turns[0].messages)


async def test_a_steering_message_the_turn_ends_before_runs_as_a_queued_one(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(SLOW, "Steered late, answered next.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await send(ws, type="message", content="first")
            await frames_until(ws, "stream_delta")
            await send(ws, type="message", content="too late to steer", mode="steer")
            queued = await next_frame(ws, "queued")
            first = await frames_until(ws, "stream_end")
            assert not [f for f in first if f["type"] == "steered"]
            start = await next_frame(ws, "stream_start")
            assert start["message"]["id"] == queued["message_id"]
            assert (await next_frame(ws, "stream_end"))["content"] == "Steered late, answered next."
    assert [r.last_user_text for r in script.of_kind("turn")] == ["first", "too late to steer"]


async def test_rest_messages_take_the_same_mode(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(SLOW, "Queued over REST.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await send(ws, type="message", content="first")
            await frames_until(ws, "stream_delta")
            with navi.client() as http:
                waiting = http.post(f"/sessions/{sid}/messages", json={"content": "over rest"})
                assert waiting.status_code == 202
                body = waiting.json()
                assert (body["queued"], body["mode"], body["position"]) == (True, "queue", 1)
                bad = http.post(f"/sessions/{sid}/messages", json={"content": "x", "mode": "push"})
                assert bad.status_code == 422
            await send(ws, type="message", content="x", mode="push")
            refused = await next_frame(ws, "error")
            assert refused["code"] == "bad_frame" and "mode" in refused["message"]
            start = await next_frame(ws, "stream_start")
            assert start["message"]["id"] == body["message_id"]
            assert (await next_frame(ws, "stream_end"))["content"] == "Queued over REST."
        with navi.client() as http:  # no turn runs: answered at once, as before
            script.turn("Straight away.")
            answer = http.post(f"/sessions/{sid}/messages", json={"content": "now", "mode": "steer"})
            assert answer.status_code == 200 and answer.json()["content"] == "Straight away."


async def test_queued_and_steering_messages_keep_who_sent_them(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """A message that waits keeps its name, location and metadata (the queue's row) until it runs
    or steers: stored with them, in its stream_start, and never in a model call."""
    script = use_script(fake_server)
    script.turn(
        NOTING,
        "Noted.",
    )
    script.turn("Second answer.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await send(ws, type="message", content="plan my trip")
            await frames_until(ws, "stream_delta")
            await send(ws, type="message", content="Oslo", mode="steer", name="bob", location="Bergen")
            await next_frame(ws, "queued")
            await send(ws, type="message", content="and then?", name="carol", metadata={"device": "watch"})
            queued = await next_frame(ws, "queued")
            await frames_until(ws, "stream_end")
            start = await next_frame(ws, "stream_start")
            assert start["message"]["id"] == queued["message_id"]
            assert (start["message"]["name"], start["message"]["metadata"]) == ("carol", {"device": "watch"})
            await frames_until(ws, "stream_end")
        with navi.client() as http:
            messages = http.get(f"/sessions/{sid}").json()["messages"]
        by_text = {m["content"]: m for m in messages}
        steered, later = by_text["Oslo"], by_text["and then?"]
        assert (steered["name"], steered["metadata"]["location"]) == ("bob", "Bergen")
        assert (later["name"], later["metadata"]["custom"]) == ("carol", {"device": "watch"})
    for request in script.of_kind("turn"):
        sent = json.dumps(request.raw)
        assert "bob" not in sent and "Bergen" not in sent and "carol" not in sent and "watch" not in sent
