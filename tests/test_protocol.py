"""The protocol module (`navi/protocol/`) and its schema (`docs/protocol.schema.json`): the
committed schema is what the module generates, and the frames a live Navi sends and accepts are
the ones the schema describes, field for field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from navi.agent.approvals import DECISIONS as AGENT_DECISIONS
from navi.protocol import (
    DECISIONS,
    BadFrame,
    ErrorEvent,
    MessageFrame,
    ScheduleRunChanged,
    ScheduleRunStatus,
    SessionUpdated,
    StreamStart,
    TextDelta,
    UserMessage,
    parse_client_frame,
    parse_server_frame,
)
from navi.protocol.schema import SCHEMA_FILE, frame_types, json_schema, schema_text
from navi.schedules.models import RunStatus
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import frames_until, live_navi, use_script

COMMITTED = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def definition(frame: dict[str, Any], side: str) -> dict[str, Any]:
    """The committed schema's definition of the frame's type on `side`."""
    found = [
        d
        for d in COMMITTED["$defs"].values()
        if d.get("x-navi-side") == side and d["properties"]["type"]["const"] == frame["type"]
    ]
    assert len(found) == 1, f"{side} frame {frame['type']!r} is not in docs/protocol.schema.json"
    return found[0]


def check(frame: dict[str, Any], side: str = "server") -> None:
    """The frame is valid under the committed schema, as a frame of `side`, and has no field its
    definition lacks."""
    union = {"$ref": f"#/$defs/{'ServerFrame' if side == 'server' else 'ClientFrame'}"}
    Draft202012Validator({**COMMITTED, "oneOf": [union]}).validate(frame)
    extra = set(frame) - set(definition(frame, side)["properties"])
    assert not extra, f"{frame['type']} carries {extra}, which the schema does not name"


def test_the_committed_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "docs/protocol.schema.json is stale: run `python -m navi.protocol --write`"
    )
    Draft202012Validator.check_schema(json_schema())


def test_python_m_navi_protocol_prints_the_schema() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "navi.protocol"], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout == SCHEMA_FILE.read_text(encoding="utf-8")


def test_each_side_has_its_frames() -> None:
    assert frame_types(COMMITTED, "client") == {
        "message",
        "retry",
        "approval",
        "elicitation",
        "edit",
        "regenerate",
        "switch",
        "continue",
        "queue_edit",
        "queue_cancel",
        "visibility",
        "voice",
        "speak",
    }
    server = frame_types(COMMITTED, "server")
    assert {"stream_start", "stream_end", "error", "session_updated", "schedule_run"} <= server
    assert {"queued", "queue_cancelled", "steered"} <= server
    assert {"elicitation_required", "elicitation_resolved"} <= server
    assert {"transcript", "speech", "speech_end"} <= server  # a voice turn's (navi/api/voice_frames.py)
    assert "model_fallback" in server  # a model chain moving on mid-turn (issue 48)
    assert len(server) == 29 and not server & frame_types(COMMITTED, "client")


def test_the_protocols_words_are_the_servers() -> None:
    """Values the protocol names and other parts own: the same on both sides."""
    assert ScheduleRunStatus.__args__ == RunStatus.__args__  # type: ignore[attr-defined]
    assert DECISIONS == AGENT_DECISIONS
    delta = parse_server_frame({"type": "stream_delta", "delta": "Hi", "run_id": "r1", "seq": 2})
    assert delta.frame() == {"type": "stream_delta", "delta": "Hi", "run_id": "r1", "seq": 2}
    assert TextDelta(delta="Hi").frame() == {"type": "stream_delta", "delta": "Hi"}


def test_frames_that_leave_fields_out() -> None:
    """Fields only some frames of a type carry are absent, never null, until set."""
    gone = SessionUpdated(session_id="s1", deleted=True).frame()
    assert gone == {"type": "session_updated", "session_id": "s1", "deleted": True}
    check(gone)
    started = ScheduleRunChanged(
        schedule_id="a", schedule_run_id="b", session_id=None, status="running", title="T", manual=False
    ).frame()
    assert set(started) == {
        "type",
        "schedule_id",
        "schedule_run_id",
        "session_id",
        "status",
        "title",
        "manual",
    }
    check(started)
    ended = ScheduleRunChanged(
        schedule_id="a",
        schedule_run_id="b",
        session_id="s",
        status="ok",
        title="T",
        manual=True,
        preview=None,
        error=None,
        unread=True,
    ).frame()
    assert (ended["preview"], ended["error"], ended["unread"]) == (None, None, True) and "tool" not in ended
    check(ended)
    retried = StreamStart(retry=True, message=None).frame()
    assert retried == {"type": "stream_start", "message": None, "retry": True}
    fresh = StreamStart(message=UserMessage(id="m", content="hi")).frame()
    assert "retry" not in fresh and fresh["message"] == {"id": "m", "content": "hi", "files": [], "images": 0}
    assert "call_id" not in ErrorEvent(message="no").frame()
    stamped = {**fresh, "run_id": "r1", "seq": 1}
    check(stamped)
    assert parse_server_frame(stamped) == StreamStart(message=fresh["message"], run_id="r1", seq=1)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([1], "must be a JSON object"),
        ({"type": ["message"]}, "unknown frame type ['message']"),
        ({"type": "ping"}, "unknown frame type 'ping'"),
        ({"type": "message", "content": 5}, "content is required"),
        ({"type": "message", "content": "hi", "images": "x"}, "images must be a list"),
        ({"type": "message", "content": "hi", "images": [3]}, "images[0] must be a base64 string"),
        ({"type": "message", "content": "hi", "files": {}}, "files must be a list"),
        (
            {"type": "message", "content": "hi", "files": [{"name": "a"}]},
            "files[0] must be an object with a path",
        ),
        (
            {"type": "message", "content": "hi", "files": [{"path": "p", "name": 1}]},
            "files[0].name must be text",
        ),
        ({"type": "approval", "call_id": "", "decision": "allow"}, "call_id must be"),
        ({"type": "approval", "call_id": "c", "decision": None}, "decision must be one of"),
    ],
)
def test_bad_client_frames_say_what_is_wrong(data: Any, says: str) -> None:
    with pytest.raises(BadFrame) as caught:
        parse_client_frame(data)
    assert says in str(caught.value)


def test_client_frames_read_and_written() -> None:
    frame = parse_client_frame({"type": "message", "content": "hi", "files": [{"path": "p"}], "extra": 1})
    assert isinstance(frame, MessageFrame) and frame.files is not None and frame.files[0].path == "p"
    assert MessageFrame(content="hi").frame() == {"type": "message", "content": "hi"}
    for sent in (
        {"type": "message", "content": "hi", "images": ["aGk="], "files": [{"name": "a", "path": "p"}]},
        {"type": "retry"},
        {"type": "approval", "call_id": "c1", "decision": "always"},
    ):
        check(sent, "client")
        assert parse_client_frame(sent).frame() == sent


async def test_the_frames_a_live_navi_sends_are_the_schemas(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """A turn with a tool call that asks, a rename, refusals: every frame off the wire is valid
    under the committed schema and carries no field it does not name."""
    marker = tmp_path / "made"
    call = ScriptedCall("terminal", {"command": f"touch {marker}"})
    use_script(fake_server).turn(Reply(tool_calls=[call]), Reply(text="Made it."))
    seen: list[dict[str, Any]] = []
    with live_navi(tmp_path, fake_server, navi_approval_mode="smart", planning_enabled=False) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "approval", "call_id": "nothing-waits", "decision": "deny"}))
            seen += await frames_until(ws, "error")
            await ws.send(json.dumps({"type": "ping"}))
            seen += await frames_until(ws, "error")
            await ws.send(json.dumps({"type": "message", "content": "make the file"}))
            seen += await frames_until(ws, "approval_required", updates=True)
            await ws.send(
                json.dumps({"type": "approval", "call_id": seen[-1]["call_id"], "decision": "allow"})
            )
            seen += await frames_until(ws, "stream_end", updates=True)
            async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http:
                assert (await http.patch(f"/sessions/{sid}", json={"name": "Files"})).status_code == 200
            seen += await frames_until(ws, "session_updated")
            await ws.send(json.dumps({"type": "retry"}))  # nothing failed: refused within a run
            seen += await frames_until(ws, "error")
    for frame in seen:
        check(frame)
    types = {f["type"] for f in seen}
    assert {"stream_start", "tool_started", "approval_required", "approval_resolved", "tool_call"} <= types
    assert {"stream_delta", "stream_end", "session_updated", "error"} <= types
    assert seen[0]["call_id"] == "nothing-waits" and seen[1]["code"] == "bad_frame"
    assert seen[-1]["code"] == "nothing_to_retry" and seen[-2]["retry"] is True


def test_a_browser_calls_frame_carries_its_page_and_others_do_not() -> None:
    from navi.protocol import BrowserView, ToolEvent

    plain = ToolEvent(tool="web_view", args={}, result="r", success=True).frame()
    assert "browser" not in plain
    check(plain)
    page = BrowserView(url="https://a.example/", title="A", tab=1, tabs=2, elements=["[1] link"])
    framed = ToolEvent(
        tool="browser", args={"action": "read"}, result="r", success=True, browser=page
    ).frame()
    assert framed["browser"] == {
        "url": "https://a.example/",
        "title": "A",
        "tab": 1,
        "tabs": 2,
        "elements": ["[1] link"],
    }
    check(framed)
    shot = page.model_copy(update={"screenshot": "data:image/jpeg;base64,AAAA"})
    check(ToolEvent(tool="browser", args={}, result="r", success=True, browser=shot).frame())
