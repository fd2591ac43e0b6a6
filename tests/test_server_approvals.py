"""Approvals over the wire: Navi under uvicorn (real TCP), the Ollama backend, the fake model server.

A tool call that needs approval sends `approval_required` to every client of the session; the answer
comes as a WebSocket `approval` frame or `POST /sessions/{id}/approvals/{call_id}`, and
`approval_resolved` tells every client (and every later replay of the run) that it was answered.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import frames_until, kinds, live_navi, use_script

SMART = {"navi_approval_mode": "smart", "planning_enabled": False}
TOKEN = "approval-test-token-0123456789"


def touch(path: Path) -> Reply:
    return Reply(tool_calls=[ScriptedCall("terminal", {"command": f"touch {path}"})])


def approval(frame: dict[str, Any], decision: str) -> str:
    return json.dumps({"type": "approval", "call_id": frame["call_id"], "decision": decision})


async def test_allow_over_the_socket(tmp_path: Path, fake_server: FakeModelServer) -> None:
    marker = tmp_path / "made"
    use_script(fake_server).turn(touch(marker), Reply(text="Made it."))
    with live_navi(tmp_path, fake_server, **SMART) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "make the file"}))
            frames = await frames_until(ws, "approval_required")
            asked = frames[-1]
            assert not marker.exists()  # it waits
            await ws.send(approval(asked, "allow"))
            frames += await frames_until(ws, "stream_end")
    assert kinds(frames) == [
        "stream_start",
        "tool_started",
        "approval_required",
        "approval_resolved",
        "tool_call",
        "stream_delta",
        "stream_end",
    ]
    assert asked == {
        "type": "approval_required",
        "call_id": asked["call_id"],
        "tool": "terminal",
        "args": {"command": f"touch {marker}"},
        "reason": f"it runs a program on this machine: touch {marker}",
        "always_scope": "every terminal command that runs touch",
        "is_subagent": False,
        "run_id": frames[0]["run_id"],
        "seq": asked["seq"],
    }
    answered = next(f for f in frames if f["type"] == "approval_resolved")
    assert {k: answered[k] for k in ("call_id", "decision", "by")} == {
        "call_id": asked["call_id"],
        "decision": "allow",
        "by": "user",
    }
    assert marker.exists() and frames[-1]["content"] == "Made it."


async def test_windows_that_join_mid_wait_see_the_question_and_its_answer(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    use_script(fake_server).turn(
        touch(first), Reply(tool_calls=[ScriptedCall("code_exec", {"code": "print(1)"})]), Reply(text="Done.")
    )
    with live_navi(tmp_path, fake_server, **SMART) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as one:
            await one.send(json.dumps({"type": "message", "content": "two steps"}))
            asked = (await frames_until(one, "approval_required"))[-1]
            async with navi.socket(sid) as two:  # a reload, or another window, while it waits
                replay = await frames_until(two, "approval_required")
                assert replay[-1] == asked
                await one.send(approval(asked, "allow"))
                for ws in (one, two):
                    answered = (await frames_until(ws, "approval_resolved"))[-1]
                    assert (answered["call_id"], answered["decision"]) == (asked["call_id"], "allow")
                    code = (await frames_until(ws, "approval_required"))[-1]
                    assert code["tool"] == "code_exec"
                async with navi.socket(sid) as three:  # joins after the first answer
                    replay = await frames_until(three, "approval_required")
                    replay += await frames_until(three, "approval_required")
                    assert [
                        (f["type"], f["call_id"]) for f in replay if f["type"].startswith("approval")
                    ] == [
                        ("approval_required", asked["call_id"]),
                        ("approval_resolved", asked["call_id"]),
                        ("approval_required", code["call_id"]),
                    ]
                    assert replay[-1] == code
                    await two.send(approval(code, "deny"))  # answered from the second window
                    ends = await asyncio.gather(*(frames_until(ws, "stream_end") for ws in (one, two, three)))
    for frames in ends:
        resolved = next(f for f in frames if f["type"] == "approval_resolved")
        assert (resolved["call_id"], resolved["decision"]) == (code["call_id"], "deny")
        declined = next(f for f in frames if f["type"] == "tool_call")
        assert (
            not declined["success"] and "the user declined to run this code_exec call" in declined["result"]
        )
    assert first.exists() and not second.exists()


async def test_bad_approval_frames_keep_the_socket(tmp_path: Path, fake_server: FakeModelServer) -> None:
    marker = tmp_path / "made"
    use_script(fake_server).turn(touch(marker), Reply(text="Made it."))
    with live_navi(tmp_path, fake_server, **SMART) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "approval", "call_id": "nothing-waits", "decision": "allow"}))
            error = (await frames_until(ws, "error"))[-1]
            assert (error["code"], error["call_id"]) == ("approval_not_found", "nothing-waits")
            assert "seq" not in error and "nothing-waits" in error["message"]
            await ws.send(json.dumps({"type": "message", "content": "make the file"}))
            asked = (await frames_until(ws, "approval_required"))[-1]
            for bad, says in (
                (
                    {"decision": "maybe", "call_id": asked["call_id"]},
                    "decision must be one of allow, deny, always",
                ),
                ({"decision": "allow"}, "call_id must be"),
                ({"decision": "allow", "call_id": "x" * 201}, "call_id must be"),
            ):
                await ws.send(json.dumps({"type": "approval", **bad}))
                error = (await frames_until(ws, "error"))[-1]
                assert error["code"] == "bad_frame" and says in error["message"], error
            assert not marker.exists()  # none of these answered it
            await ws.send(approval(asked, "always"))
            frames = await frames_until(ws, "stream_end")
            await ws.send(approval(asked, "allow"))  # answered already
            assert (await frames_until(ws, "error"))[-1]["code"] == "approval_not_found"
    assert next(f for f in frames if f["type"] == "approval_resolved")["decision"] == "always"
    assert marker.exists()


async def test_remembered_answers_are_listed_and_forgotten(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn(touch(tmp_path / "one"), Reply(text="One."), touch(tmp_path / "two"), Reply(text="Two."))
    with live_navi(tmp_path, fake_server, **SMART) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws, httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http:
            assert (await http.get("/approvals/remembered")).json() == []
            await ws.send(json.dumps({"type": "message", "content": "one"}))
            await ws.send(approval((await frames_until(ws, "approval_required"))[-1], "always"))
            await frames_until(ws, "stream_end")
            listed = (await http.get("/approvals/remembered")).json()
            assert [(r["tool"], r["program"]) for r in listed] == [("terminal", "touch")]

            assert (
                await http.delete("/approvals/remembered/terminal", params={"program": "touch"})
            ).json() == {"ok": True}
            again = await http.delete("/approvals/remembered/terminal", params={"program": "touch"})
            assert again.status_code == 404 and again.json()["code"] == "not_found"
            assert (await http.get("/approvals/remembered")).json() == []
            await ws.send(json.dumps({"type": "message", "content": "two"}))
            asked = (await frames_until(ws, "approval_required", "stream_end"))[-1]
            assert asked["type"] == "approval_required"  # forgotten: it asks again
            await ws.send(approval(asked, "deny"))
            await frames_until(ws, "stream_end")


async def test_stop_while_waiting(tmp_path: Path, fake_server: FakeModelServer) -> None:
    marker = tmp_path / "never"
    use_script(fake_server).turn(touch(marker), Reply(text="unused"))
    with live_navi(tmp_path, fake_server, **SMART) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "make it"}))
            await frames_until(ws, "approval_required")
            async with httpx.AsyncClient(base_url=navi.url, headers=navi.auth) as http:
                assert (await http.post(f"/sessions/{sid}/stop")).json() == {"ok": True, "reason": None}
            frames = await frames_until(ws, "stream_stopped")
    assert kinds(frames) == ["approval_resolved", "tool_call", "stream_stopped"]
    assert (frames[0]["decision"], frames[0]["by"]) == ("deny", "stop")
    assert frames[1]["result"] == "Error: not run: the user stopped the agent"
    assert not marker.exists()


async def test_rest_clients_list_and_answer_approvals(tmp_path: Path, fake_server: FakeModelServer) -> None:
    marker = tmp_path / "made"
    use_script(fake_server).turn(touch(marker), Reply(text="Made it over REST."))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with live_navi(tmp_path, fake_server, navi_api_token=TOKEN, **SMART) as navi:
        sid = navi.new_session(headers=auth)
        async with (
            httpx.AsyncClient(base_url=navi.url, headers=auth, timeout=30) as http,
            navi.socket(sid, additional_headers=auth) as ws,
        ):
            assert (await http.get(f"/sessions/{sid}/approvals")).json() == []
            # A REST turn waits for its answer like any other; the question is answered meanwhile.
            turn = asyncio.create_task(http.post(f"/sessions/{sid}/messages", json={"content": "make it"}))
            asked = (await frames_until(ws, "approval_required"))[-1]
            waiting = (await http.get(f"/sessions/{sid}/approvals")).json()
            assert (
                waiting == [{k: asked[k] for k in waiting[0]}] and waiting[0]["call_id"] == asked["call_id"]
            )
            url = f"/sessions/{sid}/approvals/{asked['call_id']}"

            async with httpx.AsyncClient(base_url=navi.url) as anonymous:  # the token is needed
                assert (await anonymous.post(url, json={"decision": "allow"})).status_code == 401
                assert (await anonymous.get(f"/sessions/{sid}/approvals")).status_code == 401
            bad = await http.post(url, json={"decision": "yes please"})
            assert bad.status_code == 422 and bad.json()["code"] == "bad_request"
            missing = await http.post(f"/sessions/{sid}/approvals/no-such-call", json={"decision": "allow"})
            assert missing.status_code == 404 and missing.json()["code"] == "approval_not_found"
            nobody = "00000000-0000-4000-8000-000000000000"
            gone = await http.post(
                f"/sessions/{nobody}/approvals/{asked['call_id']}", json={"decision": "allow"}
            )
            assert gone.status_code == 404 and gone.json()["code"] == "session_not_found"
            assert not marker.exists()

            ok = await http.post(url, json={"decision": "allow"})
            assert ok.status_code == 200
            assert ok.json() == {"ok": True, "call_id": asked["call_id"], "decision": "allow"}
            answer = await turn
            assert answer.status_code == 200 and answer.json()["content"] == "Made it over REST."
            again = await http.post(url, json={"decision": "allow"})
            assert again.status_code == 404 and again.json()["code"] == "approval_not_found"
            resolved = (await frames_until(ws, "approval_resolved"))[-1]
            assert resolved["decision"] == "allow"
    assert marker.exists()


async def test_nobody_answers_in_time(tmp_path: Path, fake_server: FakeModelServer) -> None:
    marker = tmp_path / "never"
    script = use_script(fake_server)
    script.turn(touch(marker), Reply(text="I could not run it."))
    with live_navi(tmp_path, fake_server, **SMART, navi_approval_timeout_seconds=0.5) as navi:
        sid = navi.new_session()
        async with navi.socket(sid) as ws:
            await ws.send(json.dumps({"type": "message", "content": "make it"}))
            frames = await frames_until(ws, "stream_end")
    resolved = next(f for f in frames if f["type"] == "approval_resolved")
    assert (resolved["decision"], resolved["by"]) == ("deny", "timeout")
    result = next(f for f in frames if f["type"] == "tool_call")
    assert result["success"] is False and "did not answer within 0.5 s" in result["result"]
    assert frames[-1]["content"] == "I could not run it."
    # the model was told so, in the tool result of the next call
    last = script.of_kind("turn")[-1].messages[-1]
    assert last.role == "tool" and "so it was not run" in (last.content or "")
    assert not marker.exists()
