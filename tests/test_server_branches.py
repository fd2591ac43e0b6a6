"""Edit, regenerate, switch and fork over a real server (REST and the streaming protocol), on the
fake model server with a scripted agent: a session is a tree, and no branch is ever lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer):
    with live_navi(tmp_path, fake_server, planning_enabled=False) as server:
        yield server


def shown(detail: dict[str, Any]) -> list[str]:
    return [m["content"] for m in detail["messages"]]


def two_turns(navi: LiveNavi, fake: FakeModelServer) -> tuple[str, list[dict[str, Any]]]:
    script = use_script(fake)
    script.turn("Paris.", "Berlin.")
    sid = navi.new_session()
    with navi.client() as http:
        http.post(f"/sessions/{sid}/messages", json={"content": "Capital of France?"})
        http.post(f"/sessions/{sid}/messages", json={"content": "Capital of Germany?"})
        return sid, http.get(f"/sessions/{sid}").json()["messages"]


def test_edit_switch_regenerate_and_fork_over_rest(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    sid, before = two_turns(navi, fake_server)
    q1, a1, q2, a2 = (m["id"] for m in before)
    assert all(m["siblings"] == [m["id"]] and m["sibling_index"] == 0 for m in before)
    script = use_script(fake_server)
    script.turn("Rome.", "Roma, again.")
    with navi.client() as http:
        edited = http.post(f"/sessions/{sid}/messages/{q2}/edit", json={"content": "Capital of Italy?"})
        assert edited.status_code == 200, edited.text
        assert edited.json()["content"] == "Rome." and edited.json()["parent_id"] == a1
        now = http.get(f"/sessions/{sid}").json()
        assert shown(now) == ["Capital of France?", "Paris.", "Capital of Italy?", "Rome."]
        q2b = now["messages"][2]
        assert (q2b["siblings"], q2b["sibling_index"]) == ([q2, q2b["id"]], 1)
        assert now["active_leaf"] == now["messages"][-1]["id"]
        # the model was asked the edited question after the first turn, and not the old one
        asked = [m.content for m in script.of_kind("turn")[-1].messages]
        assert "Capital of Italy?" in asked and "Capital of Germany?" not in asked and "Paris." in asked

        old = http.get(f"/sessions/{sid}", params={"branch": q2}).json()
        assert shown(old) == ["Capital of France?", "Paris.", "Capital of Germany?", "Berlin."]
        assert old["messages"][2]["sibling_index"] == 0
        switched = http.post(f"/sessions/{sid}/branch", json={"message_id": q2})
        assert switched.json() == {"session_id": sid, "active_leaf": a2}
        assert shown(http.get(f"/sessions/{sid}").json())[-1] == "Berlin."  # and it stays so
        assert http.post(f"/sessions/{sid}/branch", json={"message_id": q2b["id"]}).status_code == 200

        again = http.post(f"/sessions/{sid}/messages/{now['messages'][3]['id']}/regenerate")
        assert again.status_code == 200, again.text
        assert again.json()["content"] == "Roma, again." and again.json()["parent_id"] == q2b["id"]
        latest = http.get(f"/sessions/{sid}").json()
        assert shown(latest) == ["Capital of France?", "Paris.", "Capital of Italy?", "Roma, again."]
        answer = latest["messages"][3]
        assert answer["siblings"] == [now["messages"][3]["id"], answer["id"]] and answer["sibling_index"] == 1
        # the question was not stored twice: the model saw it once
        asked = [m.content for m in script.of_kind("turn")[-1].messages]
        assert asked.count("Capital of Italy?") == 1 and "Rome." not in asked

        forked = http.post(f"/sessions/{sid}/fork", json={"message_id": a1})
        assert forked.status_code == 201, forked.text
        fork = http.get(f"/sessions/{forked.json()['session_id']}").json()
        assert shown(fork) == ["Capital of France?", "Paris."] and fork["id"] != sid
        assert len(http.get("/sessions").json()) == 2
        assert shown(http.get(f"/sessions/{sid}").json())[-1] == "Roma, again."  # the source stays


def test_bad_branch_requests_are_refused_clearly(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    sid, before = two_turns(navi, fake_server)
    other, _ = two_turns(navi, fake_server)
    theirs = [m["id"] for m in before]
    with navi.client() as http:
        elsewhere = http.get(f"/sessions/{other}").json()["messages"][0]["id"]
        for path, body in [
            (f"/sessions/{sid}/messages/nope/edit", {"content": "x"}),
            (f"/sessions/{sid}/messages/{elsewhere}/regenerate", None),
            (f"/sessions/{sid}/branch", {"message_id": elsewhere}),
            (f"/sessions/{sid}/fork", {"message_id": "nope"}),
        ]:
            resp = http.post(path, json=body)
            assert resp.status_code == 404 and resp.json()["code"] == "message_not_found", resp.text
        assert http.get(f"/sessions/{sid}", params={"branch": "nope"}).status_code == 404
        not_users = http.post(f"/sessions/{sid}/messages/{theirs[1]}/edit", json={"content": "x"})
        assert not_users.status_code == 422 and "user wrote" in not_users.json()["detail"]
        blank = http.post(f"/sessions/{sid}/messages/{theirs[0]}/edit", json={"content": "   "})
        assert blank.status_code == 422
        assert http.post(f"/sessions/{sid}/branch", json={"message_id": "x" * 500}).status_code == 422
        assert shown(http.get(f"/sessions/{sid}").json())[-1] == "Berlin."  # nothing moved


async def test_edit_regenerate_and_switch_frames(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    sid, before = two_turns(navi, fake_server)
    q1, a1, q2, a2 = (m["id"] for m in before)
    script = use_script(fake_server)
    script.turn("Madrid.", "Madrid, again.")
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "edit", "message_id": q2, "content": "Capital of Spain?"}))
        frames = await frames_until(ws, "stream_end")
        start = frames[0]
        assert start["type"] == "stream_start" and start["parent_id"] == a1
        assert start["message"]["content"] == "Capital of Spain?" and "retry" not in start
        assert frames[-1]["content"] == "Madrid."

        await ws.send(json.dumps({"type": "regenerate", "message_id": start["message"]["id"]}))
        frames = await frames_until(ws, "stream_end")
        assert frames[0]["retry"] is True and frames[0]["parent_id"] == start["message"]["id"]
        assert frames[0]["message"]["id"] == start["message"]["id"]
        assert frames[-1]["content"] == "Madrid, again."

        await ws.send(json.dumps({"type": "switch", "message_id": q2}))
        update = await frames_until(ws, "session_updated")
        assert update[-1]["session_id"] == sid
        await ws.send('{"type": "switch", "message_id": "nope"}')
        refused = await frames_until(ws, "error")
        assert refused[-1]["code"] == "message_not_found" and "seq" not in refused[-1]
        await ws.send(json.dumps({"type": "edit", "message_id": q2, "content": ""}))
        assert (await frames_until(ws, "error"))[-1]["code"] == "bad_frame"
        await ws.send('{"type": "regenerate", "message_id": 7}')
        assert (await frames_until(ws, "error"))[-1]["code"] == "bad_frame"
    with navi.client() as http:
        assert shown(http.get(f"/sessions/{sid}").json()) == [
            "Capital of France?",
            "Paris.",
            "Capital of Germany?",
            "Berlin.",
        ]
        spain = http.get(f"/sessions/{sid}", params={"branch": frames[0]["message"]["id"]}).json()
        assert shown(spain)[2:] == ["Capital of Spain?", "Madrid, again."]
