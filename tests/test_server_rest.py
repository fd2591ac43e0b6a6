"""The REST API over real HTTP: every endpoint of the reference table, plus ours, and bad input."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, live_navi, use_script

MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer):
    with live_navi(tmp_path, fake_server) as server:
        yield server


def test_health_profiles_and_tools(navi: LiveNavi) -> None:
    with navi.client() as http:
        assert http.get("/health").json() == {"status": "ok"}
        profiles = http.get("/agents/profiles").json()
        assert [p["id"] for p in profiles] == ["secretary", "server_admin", "smart_home"]
        assert profiles[1]["name"] == "Server Administrator" and profiles[1]["temperature"] == 0.2
        assert "ssh_exec" in profiles[1]["tools"] and "user_notes" in profiles[1]["tools"]
        assert profiles[0]["model"] == "gemma4:e2b-it-q8_0" and profiles[0]["planning_enabled"] is True
        tools = {t["name"]: t for t in http.get("/agents/tools").json()}
        # the reference 18, recall, schedule, remember, search_conversations, search_documents, and
        # the three of Agent Skills (offered to every profile)
        builtin = {name for name, t in tools.items() if t["builtin"]}
        assert (
            len(builtin) == 29
            and {
                "remember",
                "memory_forget",
                "search_conversations",
                "browser",
                "notify",
                "background_job",
            }
            <= builtin
        )
        skill_tools = {"use_skill", "run_skill_script", "write_skill"}
        assert skill_tools <= builtin and all(skill_tools <= set(p["tools"]) for p in profiles)
        assert "search_documents" in builtin and all("search_documents" in p["tools"] for p in profiles)
        assert "forget" not in tools  # its former name still reaches it, but is not listed
        assert (
            "search_conversations" in profiles[0]["tools"]
            and "search_conversations" not in profiles[1]["tools"]
        )
        assert tools["get_current_datetime"]["builtin"] is False
        assert tools["todo"]["parameters"]["required"] == ["action"]


def test_session_lifecycle(navi: LiveNavi) -> None:
    with navi.client() as http:
        created = http.post("/sessions", json={"profile_id": "smart_home"})
        assert created.status_code == 201
        body = created.json()
        assert set(body) == {"session_id", "profile_id", "created_at", "name", "temporary"}
        sid = body["session_id"]
        other = http.post("/sessions").json()["session_id"]  # no body: the default profile
        assert http.get(f"/sessions/{other}").json()["profile_id"] == "secretary"
        assert http.patch(f"/sessions/{sid}/pin", json={"pinned": True}).json() == {"pinned": True}
        listing = http.get("/sessions").json()
        assert [s["id"] for s in listing] == [sid, other] and listing[0]["pinned"] is True
        renamed = http.patch(f"/sessions/{sid}", json={"name": "  Lights  "})
        assert renamed.status_code == 200 and renamed.json()["name"] == "Lights"
        moved = http.patch(f"/sessions/{sid}", json={"profile_id": "server_admin"}).json()
        assert moved["profile_id"] == "server_admin" and moved["name"] == "Lights"
        assert http.patch(f"/sessions/{sid}", json={"name": ""}).json()["name"] is None
        detail = http.get(f"/sessions/{sid}").json()
        assert (
            detail["messages"] == [] and detail["active"] is False and detail["max_context_tokens"] == 65536
        )
        context = http.get(f"/sessions/{sid}/context").json()
        assert "Mode: server administrator" in context["system_prompt"] and context["messages"] == []
        assert http.get(f"/sessions/{sid}/planning").json() == []
        assert http.delete(f"/sessions/{sid}").json() == {"ok": True}
        assert http.get(f"/sessions/{sid}").status_code == 404
        assert http.delete(f"/sessions/{sid}").status_code == 404


def test_the_model_view_of_the_context_is_what_the_model_is_sent(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Read it.", "Fine.", "Third answer.")
    paste = "PASTE BEGINS " + "".join(f"line {i:04d} of the paste. " for i in range(300)) + "PASTE ENDS"
    settings = {"planning_enabled": False, "context_keep_recent": 1, "context_long_message_tokens": 100}
    with live_navi(tmp_path, fake_server, **settings) as navi, navi.client() as http:
        sid = navi.new_session()
        for text in (paste, "And now?"):
            assert http.post(f"/sessions/{sid}/messages", json={"content": text}).status_code == 200
        stored = http.get(f"/sessions/{sid}/context").json()
        assert stored["view"] == "stored" and stored["messages"][0]["content"] == paste
        assert http.get(f"/sessions/{sid}/context?view=stored").json() == stored
        model = http.get(f"/sessions/{sid}/context", params={"view": "model"}).json()
        assert model["view"] == "model" and model["system_prompt"] == stored["system_prompt"]
        old = model["messages"][0]
        key = f"msg_{stored['messages'][0]['id']}"
        assert old["metadata"]["recall_key"] == key and f'recall with key "{key}"' in old["content"]
        assert old["content"].startswith("PASTE BEGINS") and old["content"].endswith("PASTE ENDS")
        assert len(old["content"]) < len(paste) // 3
        assert [m["content"] for m in model["messages"][1:]] == ["Read it.", "And now?", "Fine."]
        # The next call sends exactly that, then the new message.
        assert http.post(f"/sessions/{sid}/messages", json={"content": "Third"}).status_code == 200
        sent = script.of_kind("turn")[-1].messages
        assert sent[0].role == "system" and sent[0].content == model["system_prompt"]
        assert [(m.role, m.content) for m in sent[1:-1]] == [
            (m["role"], m["content"]) for m in model["messages"]
        ]
        bad = http.get(f"/sessions/{sid}/context", params={"view": "raw"})
        assert bad.status_code == 422 and bad.json()["code"] == "bad_request"
        assert "view" in bad.json()["detail"]


def test_unknown_sessions_are_404(navi: LiveNavi) -> None:
    with navi.client() as http:
        for sid in (MISSING, "nope", "..%2F..%2Fetc"):
            assert http.get(f"/sessions/{sid}").status_code == 404
            assert http.get(f"/sessions/{sid}/context").status_code == 404
            assert http.get(f"/sessions/{sid}/planning").status_code == 404
            assert http.get(f"/sessions/{sid}/export").status_code == 404
            assert http.patch(f"/sessions/{sid}/pin", json={"pinned": True}).status_code == 404
            assert http.patch(f"/sessions/{sid}", json={"name": "x"}).status_code == 404
            assert http.post(f"/sessions/{sid}/messages", json={"content": "hi"}).status_code == 404
            assert http.post(f"/sessions/{sid}/files", files={"file": ("a.txt", b"x")}).status_code == 404
            assert http.post(f"/sessions/{sid}/stop").status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "payload", "expected"),
    [
        ("post", "/sessions", {"profile_id": "pirate"}, "no profile 'pirate'"),
        ("post", "/sessions", {"profile_id": 5}, "profile_id"),
        ("post", "/sessions", [1, 2], "body"),
        ("patch", "/sessions/{sid}/pin", {"pinned": "very"}, "pinned"),
        ("patch", "/sessions/{sid}/pin", {}, "pinned"),
        (
            "patch",
            "/sessions/{sid}",
            {},
            "send `name`, `profile_id`, `model`, `system_prompt`, `folder` and/or `archived`",
        ),
        ("patch", "/sessions/{sid}", {"profile_id": "pirate"}, "no profile 'pirate'"),
        ("patch", "/sessions/{sid}", {"name": "x" * 500}, "name"),
        ("post", "/sessions/{sid}/messages", {"content": ""}, "content"),
        ("post", "/sessions/{sid}/messages", {"content": "hi", "images": ["%%%"]}, "not valid base64"),
        ("post", "/sessions/import", {"schema_version": "nope"}, "unsupported schema_version"),
    ],
)
def test_bad_input_gets_a_clear_4xx(
    navi: LiveNavi, method: str, path: str, payload: object, expected: str
) -> None:
    sid = navi.new_session()
    with navi.client() as http:
        resp = getattr(http, method)(path.format(sid=sid), json=payload)
    assert 400 <= resp.status_code < 500
    assert expected in resp.json()["detail"]


def test_garbage_bodies_never_cause_500(navi: LiveNavi) -> None:
    sid = navi.new_session()
    bodies = [b"", b"{", b"\x00\xff\xfe", b'{"content": ' + b"9" * 5000 + b"}", b"null", b'"just a string"']
    with navi.client() as http:
        for path in ("/sessions", f"/sessions/{sid}/messages", f"/sessions/{sid}/pin", "/sessions/import"):
            for body in bodies:
                method = "PATCH" if path.endswith("/pin") else "POST"
                resp = http.request(method, path, content=body, headers={"content-type": "application/json"})
                assert resp.status_code < 500, (path, body[:20], resp.text)
        for query in ("last=-1", "last=abc", "since=yesterday", "token_budget=1e99"):
            assert http.get(f"/sessions/{sid}/messages?{query}").status_code == 422


def test_post_messages_waits_for_the_answer(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(tool_calls=[ScriptedCall("todo", {"action": "read"})]),
        Reply(text="Nothing to do.", prompt_tokens=77, completion_tokens=3),
    )
    sid = navi.new_session()
    with navi.client() as http:
        resp = http.post(f"/sessions/{sid}/messages", json={"content": "What is on my list?"})
        assert resp.status_code == 200
        assert resp.json() == {
            "session_id": sid,
            "content": "Nothing to do.",
            "context_tokens": 80,
            "max_context_tokens": 65536,
            "stopped": False,
            "finish_reason": "stop",
        }
        assert script.of_kind("planning") == []  # the non-streaming endpoint does not plan
        history = http.get(f"/sessions/{sid}").json()["messages"]
        assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
        script.turn(Reply(status=500, error="model exploded"))
        failed = http.post(f"/sessions/{sid}/messages", json={"content": "again"})
        assert failed.status_code == 502 and "model exploded" in failed.json()["detail"]


def test_one_run_per_session(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(Reply(text="slow " * 30, chunk_chars=5, delay=0.05), "second")
    sid = navi.new_session()
    results: dict[str, int] = {}

    def first() -> None:
        with navi.client() as http:
            results["first"] = http.post(f"/sessions/{sid}/messages", json={"content": "one"}).status_code

    thread = threading.Thread(target=first)
    thread.start()
    with navi.client() as http:
        for _ in range(100):
            if http.get("/sessions").json()[0]["active"]:
                break
            asyncio.run(asyncio.sleep(0.02))
        waiting = http.post(f"/sessions/{sid}/messages", json={"content": "two"})  # runs after it
        assert waiting.status_code == 202 and waiting.json()["position"] == 1
    thread.join()
    assert results["first"] == 200
    with navi.client() as http:
        for _ in range(250):
            messages = http.get(f"/sessions/{sid}").json()["messages"]
            if len(messages) == 4:
                break
            asyncio.run(asyncio.sleep(0.02))
    assert [m["content"] for m in messages] == ["one", "slow " * 30, "two", "second"]


def test_export_import_and_windows_over_http(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Answer one.", "Answer two.")
    sid = navi.new_session()
    with navi.client() as http:
        http.post(f"/sessions/{sid}/messages", json={"content": "one"})
        http.post(f"/sessions/{sid}/messages", json={"content": "two"})
        archive = http.get(f"/sessions/{sid}/export").json()
        assert [m["content"] for m in archive["messages"]] == ["one", "Answer one.", "two", "Answer two."]
        imported = http.post(
            "/sessions/import", content=json.dumps(archive), headers={"content-type": "application/json"}
        ).json()
        assert imported["messages"] == 4 and imported["session_id"] != sid
        last = http.get(f"/sessions/{imported['session_id']}/messages", params={"last": 2}).json()
        assert [m["content"] for m in last["messages"]] == ["two", "Answer two."]


def test_openapi_documents_the_models(navi: LiveNavi) -> None:
    with navi.client() as http:
        spec = http.get("/openapi.json").json()
    paths = spec["paths"]
    for path in (
        "/sessions",
        "/sessions/{session_id}",
        "/sessions/{session_id}/context",
        "/sessions/{session_id}/pin",
        "/sessions/{session_id}/files",
        "/sessions/{session_id}/messages",
        "/sessions/{session_id}/stop",
        "/sessions/{session_id}/planning",
        "/sessions/{session_id}/export",
        "/sessions/import",
        "/agents/profiles",
        "/agents/tools",
        "/health",
    ):
        assert path in paths, path
    schemas = spec["components"]["schemas"]
    for name in ("Created", "SessionDetail", "Answer", "StopResult", "UploadResult", "ProfileOut", "Message"):
        assert name in schemas, name


def test_new_sessions_run_the_creation_hooks(tmp_path: Path, fake_server: FakeModelServer) -> None:
    seen: list[str] = []
    with live_navi(tmp_path, fake_server) as navi:

        async def hook(session_id: str) -> None:
            seen.append(session_id)

        navi.runtime.session_created_hooks.append(hook)
        sid = navi.new_session()
        for _ in range(100):
            if seen:
                break
            asyncio.run(asyncio.sleep(0.01))
    assert seen == [sid]
