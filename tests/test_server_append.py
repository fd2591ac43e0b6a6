"""`POST /sessions/{id}/messages` with `"respond": false`: messages stored without running the model."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer):
    with live_navi(tmp_path, fake_server, navi_approval_mode="smart") as server:
        yield server


def test_stored_messages_are_not_answered_and_the_next_turn_sees_them(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    sid = navi.new_session()
    with navi.client() as http:
        url = f"/sessions/{sid}/messages"
        user = http.post(url, json={"content": "My locker is 4411.", "images": [PNG], "respond": False})
        assert user.status_code == 200, user.text
        assert user.json()["session_id"] == sid and user.json()["role"] == "user"
        call = {"id": "call_locker", "name": "scratchpad", "arguments": {"action": "read"}}
        said = http.post(url, json={"role": "assistant", "tool_calls": [call], "respond": False})
        assert said.status_code == 200, said.text
        tool = http.post(
            url,
            json={
                "role": "tool",
                "content": "locker 4411 is in hall B",
                "tool_call_id": "call_locker",
                "name": "scratchpad",
                "respond": False,
            },
        )
        assert tool.status_code == 200 and tool.json()["role"] == "tool"
        note = http.post(url, json={"role": "assistant", "content": "Noted: hall B.", "respond": False})
        assert note.status_code == 200
        assert fake_server.requests == []  # nothing ran the model
        detail = http.get(f"/sessions/{sid}").json()
        assert detail["active"] is False
        history = detail["messages"]
        assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
        assert history[0]["id"] == user.json()["message_id"] and history[0]["images"] == [PNG]
        assert history[1]["tool_calls"][0]["id"] == "call_locker"
        assert history[2]["tool_call_id"] == "call_locker" and history[3]["content"] == "Noted: hall B."
        context = http.get(f"/sessions/{sid}/context").json()["messages"]
        assert [m["id"] for m in context] == [m["id"] for m in history]

        script.turn(Reply(text="Hall B, locker 4411.", prompt_tokens=300, completion_tokens=6))
        answer = http.post(url, json={"content": "Where is my locker?"})
        assert answer.status_code == 200 and answer.json()["content"] == "Hall B, locker 4411."
    sent = script.of_kind("turn")[0].messages
    assert any(m.role == "tool" and m.content == "locker 4411 is in hall B" for m in sent)
    assert any(m.role == "user" and "4411" in (m.content or "") and m.images for m in sent)

    # Once the session has a count from the model, a stored message is added to it.
    with navi.client() as http:
        before = http.get(f"/sessions/{sid}").json()["context_token_count"]
        http.post(url, json={"content": "word " * 400, "respond": False})
        after = http.get(f"/sessions/{sid}").json()["context_token_count"]
    assert before == 306 and after > before + 300


def test_bad_stored_messages_are_refused(navi: LiveNavi) -> None:
    sid = navi.new_session()
    with navi.client() as http:
        url = f"/sessions/{sid}/messages"
        cases = [
            ({"role": "system", "content": "be terse", "respond": False}, "bad_request", "system prompt"),
            (
                {"role": "robot", "content": "beep", "respond": False},
                "bad_request",
                "user, assistant or tool",
            ),
            ({"role": "assistant", "content": "hi"}, "bad_request", '"respond": false'),
            ({"role": "tool", "content": "42", "respond": False}, "bad_request", "tool_call_id"),
            (
                {"role": "assistant", "content": "  ", "respond": False},
                "bad_request",
                "content or tool_calls",
            ),
            (
                {"role": "assistant", "content": "x", "images": [PNG], "respond": False},
                "bad_request",
                "images",
            ),
            ({"content": "", "respond": False}, "bad_message", "content"),
            ({"content": "look", "images": ["not base64!"], "respond": False}, "bad_message", "base64"),
            (
                {"content": "x", "files": [{"path": "/etc/passwd"}], "respond": False},
                "bad_message",
                "uploaded",
            ),
        ]
        for body, code, words in cases:
            resp = http.post(url, content=json.dumps(body), headers={"content-type": "application/json"})
            assert resp.status_code == 422, (body, resp.text)
            assert resp.json()["code"] == code and words in resp.json()["detail"], (body, resp.json())
        assert http.get(f"/sessions/{sid}").json()["messages"] == []
        # json.dumps escapes a lone surrogate: valid JSON, not text; it is stored as U+FFFD
        body = json.dumps({"content": "x \ud800", "respond": False})
        kept = http.post(url, content=body, headers={"content-type": "application/json"})
        assert kept.status_code == 200, kept.text
        assert [m["content"] for m in http.get(f"/sessions/{sid}").json()["messages"]] == ["x \ufffd"]
        missing = "00000000-0000-4000-8000-000000000000"
        assert (
            http.post(f"/sessions/{missing}/messages", json={"content": "x", "respond": False}).status_code
            == 404
        )


async def test_storing_while_a_turn_answers_is_busy(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    """A turn waiting for an approval holds the session until it is answered: a message stored
    then would land between the tool call and its result."""
    script = use_script(fake_server)
    script.turn(Reply(tool_calls=[ScriptedCall("terminal", {"command": "rm notes.txt"})]), "Left it alone.")
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        await ws.send('{"type": "message", "content": "tidy up"}')
        asked = (await frames_until(ws, "approval_required"))[-1]
        with navi.client() as http:
            busy = http.post(f"/sessions/{sid}/messages", json={"content": "also this", "respond": False})
            assert busy.status_code == 409 and busy.json()["code"] == "busy"
            answered = http.post(f"/sessions/{sid}/approvals/{asked['call_id']}", json={"decision": "deny"})
            assert answered.status_code == 200
        await frames_until(ws, "stream_end")
    with navi.client() as http:
        stored = http.post(f"/sessions/{sid}/messages", json={"content": "also this", "respond": False})
        assert stored.status_code == 200, stored.text
        roles = [m["role"] for m in http.get(f"/sessions/{sid}").json()["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
