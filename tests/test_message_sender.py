"""A message's `name`, `location` and metadata, as the reference's `add_message` keeps them: sent
over REST and the WebSocket, checked, stored with the message, returned with its history, carried
by archives out and back in — and never sent to the model. And an imported archive's own system
prompt, kept as the session's layer of the system prompt. Navi under uvicorn, the fake model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import frames_until, live_navi, use_script

ALICE = {"name": "alice", "location": "Paris, 11e", "metadata": {"device": "quokka", "tags": ["a", "b"]}}
FIXTURES = Path(__file__).parent / "fixtures"


def said(message: dict[str, Any]) -> tuple[Any, Any, Any]:
    meta = message.get("metadata") or {}
    return message.get("name"), meta.get("location"), meta.get("custom")


def assert_not_sent(raw: dict[str, Any]) -> None:
    """The model's request holds none of it, in any field."""
    text = json.dumps(raw, ensure_ascii=False)
    assert "alice" not in text and "Paris" not in text and "quokka" not in text, text[:2000]


def test_rest_messages_keep_name_location_and_metadata(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Bonjour!")
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        sid = navi.new_session()
        resp = http.post(f"/sessions/{sid}/messages", json={"content": "Hello", **ALICE})
        assert resp.status_code == 200, resp.text
        assert resp.json()["content"] == "Bonjour!"
        stored = http.post(
            f"/sessions/{sid}/messages",
            json={"content": "A note", "respond": False, "name": "bob", "metadata": {"source": "cli"}},
        )
        assert stored.status_code == 200, stored.text
        messages = http.get(f"/sessions/{sid}").json()["messages"]
        assert said(messages[0]) == ("alice", "Paris, 11e", {"device": "quokka", "tags": ["a", "b"]})
        assert said(messages[1]) == (None, None, None)  # the answer
        assert said(messages[2]) == ("bob", None, {"source": "cli"})
        # The model never saw them.
        assert_not_sent(script.of_kind("turn")[0].raw)
        # An archive carries them as each message's metadata, and brings them back.
        archive = http.get(f"/sessions/{sid}/export").json()
        meta = archive["messages"][0]["metadata"]
        assert meta == {"name": "alice", "location": "Paris, 11e", "device": "quokka", "tags": ["a", "b"]}
        imported = http.post("/sessions/import", json=archive)
        assert imported.status_code == 201, imported.text
        back = http.get(f"/sessions/{imported.json()['session_id']}").json()["messages"]
        assert [said(m) for m in back] == [said(m) for m in messages]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"name": "x" * 65}, "name must be at most 64 characters"),
        ({"name": "   "}, "name must be non-empty text"),
        ({"location": "l" * 257}, "location must be at most 256 characters"),
        ({"location": "two\nlines"}, "without control characters"),
        ({"metadata": ["not", "an", "object"]}, "metadata: Input should be a valid dictionary"),
        ({"metadata": {"status": "x"}}, "metadata key 'status' is reserved"),
        ({"metadata": {"k" * 65: 1}}, "metadata keys must be non-empty text of at most 64 characters"),
        ({"metadata": {"blob": "x" * 5000}}, "metadata must be at most 4,096 bytes as JSON"),
    ],
)
def test_bad_names_locations_and_metadata_are_refused_clearly(
    tmp_path: Path, fake_server: FakeModelServer, extra: dict[str, Any], words: str
) -> None:
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        sid = navi.new_session()
        for respond in (True, False):
            resp = http.post(f"/sessions/{sid}/messages", json={"content": "Hi", "respond": respond, **extra})
            assert resp.status_code == 422, resp.text
            assert words in resp.text
        assert http.get(f"/sessions/{sid}").json()["messages"] == []  # nothing stored


async def test_websocket_messages_keep_them_and_bad_ones_get_an_error_frame(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Hi Alice.")
    with live_navi(tmp_path, fake_server) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            bad = {"type": "message", "content": "Hi", "metadata": {"name": "mallory"}}
            await ws.send(json.dumps(bad))
            (error,) = await frames_until(ws, "error")
            assert error["code"] == "bad_frame" and "metadata key 'name' is reserved" in error["message"]
            await ws.send(json.dumps({"type": "message", "content": "Hello", **ALICE}))  # still usable
            frames = await frames_until(ws, "stream_end")
        start = frames[0]["message"]
        assert (start["name"], start["location"], start["metadata"]) == (
            "alice",
            "Paris, 11e",
            {"device": "quokka", "tags": ["a", "b"]},
        )
        with navi.client() as http:
            (question, _answer) = http.get(f"/sessions/{sid}").json()["messages"]
        assert question["id"] == start["id"] and question["content"] == "Hello"
        assert said(question) == ("alice", "Paris, 11e", {"device": "quokka", "tags": ["a", "b"]})
        (request,) = script.of_kind("turn")
        assert_not_sent(request.raw)


def test_an_imported_archives_system_prompt_is_the_sessions_own_layer(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """It was dropped: Navi composed its own prompt and the archive's instructions were lost. Now it
    follows the persona and the profile's prompt, in /context, every model call, and the export —
    and a Navi archive brought in again keeps it once, not the whole composed prompt twice."""
    script = use_script(fake_server)
    script.turn("Frost dates noted.")
    archive = json.loads((FIXTURES / "abstractcore-session.json").read_text(encoding="utf-8"))
    own = archive["session"]["system_prompt"]
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        created = http.post("/sessions/import", json=archive)
        assert created.status_code == 201, created.text
        sid = created.json()["session_id"]
        system = http.get(f"/sessions/{sid}/context?view=model").json()["system_prompt"]
        persona_at, profile_at, own_at = (
            system.index("You are Navi"),
            system.index("Mode: personal secretary"),
            system.index(own),
        )
        assert persona_at < profile_at < own_at
        assert "## This conversation's own instructions" in system
        resp = http.post(f"/sessions/{sid}/messages", json={"content": "And peppers?"})
        assert resp.status_code == 200, resp.text
        (request,) = script.of_kind("turn")
        assert own in request.system_text
        assert request.system_text.count(own) == 1
        exported = http.get(f"/sessions/{sid}/export").json()
        assert exported["session"]["session_prompt"] == own and own in exported["session"]["system_prompt"]
        again = http.post("/sessions/import", json=exported).json()["session_id"]
        second = http.get(f"/sessions/{again}/context?view=model").json()["system_prompt"]
        assert second == system and second.count("You are Navi") == 1
        # A fork of it keeps it.
        first = http.get(f"/sessions/{sid}").json()["messages"][1]["id"]
        fork = http.post(f"/sessions/{sid}/fork", json={"message_id": first})
        assert fork.status_code == 201, fork.text
        forked = http.get(f"/sessions/{fork.json()['session_id']}/context?view=model").json()
        assert forked["system_prompt"] == system
        # A session begun here has no such layer.
        plain = http.get(f"/sessions/{navi.new_session()}/context?view=model").json()["system_prompt"]
        assert "own instructions" not in plain and own not in plain


def test_an_overlong_imported_system_prompt_is_refused(tmp_path: Path, fake_server: FakeModelServer) -> None:
    archive = json.loads((FIXTURES / "abstractcore-session.json").read_text(encoding="utf-8"))
    archive["session"]["system_prompt"] = "Be brief. " * 2000
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        resp = http.post("/sessions/import", json=archive)
        assert resp.status_code in (400, 422), resp.text
        assert "system prompt has 19,999 characters; at most 16,000" in resp.text
        assert http.get("/sessions").json() == []
