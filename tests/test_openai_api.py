"""The OpenAI-compatible API over real HTTP, driven by the official `openai` SDK (sync and async).

Every request runs a real Navi turn on the fake model server; the tests check what the client gets
(OpenAI's wire format), what the session stores, and what the model was sent.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40).decode()
MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer):
    with live_navi(tmp_path, fake_server) as server:
        yield server


_clients: list[openai.OpenAI] = []


@pytest.fixture(autouse=True)
def _close_clients():
    yield
    while _clients:
        _clients.pop().close()


def sdk(navi: LiveNavi, **kw: Any) -> openai.OpenAI:
    """The official client pointed at this Navi (closed after the test)."""
    kw.setdefault("max_retries", 0)
    kw.setdefault("api_key", navi.token)
    client = openai.OpenAI(base_url=f"{navi.url}/v1", **kw)
    _clients.append(client)
    return client


def history(navi: LiveNavi, sid: str) -> list[dict[str, Any]]:
    with navi.client() as http:
        return list(http.get(f"/sessions/{sid}").json()["messages"])


def test_models_are_the_profiles(navi: LiveNavi) -> None:
    client = sdk(navi)
    models = client.models.list()
    assert [m.id for m in models.data] == ["secretary", "server_admin", "smart_home"]
    assert all(m.object == "model" and m.owned_by == "navi" and m.created > 0 for m in models.data)
    assert client.models.retrieve("server_admin").id == "server_admin"
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("gpt-4o")
    assert missing.value.code == "model_not_found" and "secretary" in missing.value.message


def test_a_full_history_starts_a_new_session(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(
            text="Your locker is 4411.",
            thinking="It was said before.",
            prompt_tokens=120,
            completion_tokens=7,
        )
    )
    raw = sdk(navi).chat.completions.with_raw_response.create(
        model="server_admin",
        messages=[
            {"role": "system", "content": "Answer in one sentence."},
            {"role": "user", "content": "My locker is 4411."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": [{"type": "text", "text": "What is my locker?"}]},
        ],
    )
    sid = raw.headers["x-session-id"]
    answer = raw.parse()
    assert answer.object == "chat.completion" and answer.id.startswith("chatcmpl-")
    assert answer.model == "server_admin"
    choice = answer.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert choice.message.content == "Your locker is 4411."
    assert choice.message.model_extra["reasoning_content"] == "It was said before."
    assert answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.total_tokens) == (
        120,
        7,
        127,
    )

    stored = history(navi, sid)
    assert [m["role"] for m in stored] == ["user", "user", "assistant", "user", "assistant"]
    assert (
        stored[0]["content"].endswith("Answer in one sentence.") and "system message" in stored[0]["content"]
    )
    assert [m["content"] for m in stored[1:]] == [
        "My locker is 4411.",
        "Noted.",
        "What is my locker?",
        "Your locker is 4411.",
    ]
    with navi.client() as http:
        assert http.get(f"/sessions/{sid}").json()["profile_id"] == "server_admin"
    sent = script.of_kind("turn")[0].messages
    assert "Mode: server administrator" in sent[0].content  # Navi's own system prompt
    assert "Answer in one sentence." not in sent[0].content
    assert any(m.role == "assistant" and m.content == "Noted." for m in sent)
    assert sent[-1].role == "user" and "What is my locker?" in (sent[-1].content or "")
    assert script.of_kind("planning"), "a turn of this API plans like any other"


def test_streaming_continues_a_session_by_header(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("First answer.")
    sid = navi.new_session("smart_home")
    with navi.client() as http:
        assert (
            http.post(f"/sessions/{sid}/messages", json={"content": "Lights are in hall 7."}).status_code
            == 200
        )
    script.turn(
        Reply(
            text="Hall 7, as you said.",
            thinking="Look back.",
            chunk_chars=4,
            prompt_tokens=90,
            completion_tokens=6,
        )
    )
    stream = sdk(navi).chat.completions.create(
        model="secretary",  # the session's own profile answers
        messages=[
            {"role": "user", "content": "an earlier message the client kept"},
            {"role": "assistant", "content": "not stored again"},
            {"role": "user", "content": "Where are the lights?"},
        ],
        stream=True,
        stream_options={"include_usage": True},
        extra_headers={"X-Session-Id": sid},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" and c.model == "smart_home" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    thinking = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in chunks if c.choices
    )
    assert text == "Hall 7, as you said." and thinking == "Look back."
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) > 1  # streamed, not one block
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"] and chunks[-2].choices[0].finish_reason == "stop"
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (90, 6, 96)
    assert all(c.usage is None for c in chunks[:-1])

    stored = history(navi, sid)
    assert [m["content"] for m in stored] == [
        "Lights are in hall 7.",
        "First answer.",
        "Where are the lights?",
        "Hall 7, as you said.",
    ]
    sent = script.of_kind("turn")[-1].messages
    assert not any("not stored again" in (m.content or "") for m in sent)
    assert any(m.content == "First answer." for m in sent)


def test_an_id_no_session_has_yet_makes_that_session(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Noted, 4411.", "4411.")
    chosen = "5c0ffee0-1234-4abc-8def-0123456789ab"
    client = sdk(navi)
    raw = client.chat.completions.with_raw_response.create(
        model="server_admin",
        messages=[
            {"role": "user", "content": "My locker is 4411."},
            {"role": "assistant", "content": "I'll keep it."},
            {"role": "user", "content": "Say it back."},
        ],
        extra_headers={"X-Session-Id": chosen},
    )
    assert raw.headers["x-session-id"] == chosen
    assert raw.parse().choices[0].message.content == "Noted, 4411."
    with navi.client() as http:
        made = http.get(f"/sessions/{chosen}").json()
        assert [s["id"] for s in http.get("/sessions").json()] == [chosen]
    assert made["profile_id"] == "server_admin"  # seeded like a new session without the header
    assert [m["content"] for m in made["messages"]] == [
        "My locker is 4411.",
        "I'll keep it.",
        "Say it back.",
        "Noted, 4411.",
    ]
    again = client.chat.completions.create(  # now the session's own history: one message added
        model="secretary",
        messages=[{"role": "user", "content": "not stored"}, {"role": "user", "content": "Again?"}],
        extra_headers={"X-Session-Id": chosen},
    )
    assert again.model == "server_admin" and again.choices[0].message.content == "4411."
    assert [m["content"] for m in history(navi, chosen)][4:] == ["Again?", "4411."]

    for bad in ("not-a-session", chosen.upper(), "../" + chosen, "x" * 5000):
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model="secretary",
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"X-Session-Id": bad},
            )
        assert refused.value.code == "invalid_session_id" and refused.value.param == "X-Session-Id"
        assert "lowercase UUID" in refused.value.message and len(refused.value.message) < 300
    with navi.client() as http:
        assert [s["id"] for s in http.get("/sessions").json()] == [chosen]  # the refused made nothing
        bad_history = {
            "model": "secretary",
            "messages": [{"role": "robot"}, {"role": "user", "content": "x"}],
        }
        resp = http.post("/v1/chat/completions", json=bad_history, headers={"X-Session-Id": MISSING})
        assert resp.status_code == 400 and http.get(f"/sessions/{MISSING}").status_code == 404


def test_the_wire_without_the_sdk(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    """Server-sent events as OpenAI writes them: `data:` lines, no `usage` unless asked for, [DONE]."""
    use_script(fake_server).turn("Plain answer.")
    body = {"model": "secretary", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with navi.client() as http:
        resp = http.post("/v1/chat/completions", json=body)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    events = [line for line in resp.text.split("\n\n") if line]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    chunks = [json.loads(e[6:]) for e in events[:-1]]
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "Plain answer."


async def test_async_client_stream_and_not(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("Async one.", Reply(text="Async two.", chunk_chars=3))
    client = openai.AsyncOpenAI(base_url=f"{navi.url}/v1", api_key=navi.token, max_retries=0)
    async with client:
        first = await client.chat.completions.with_raw_response.create(
            model="secretary", messages=[{"role": "user", "content": "one"}]
        )
        sid = first.headers["x-session-id"]
        assert first.parse().choices[0].message.content == "Async one."
        stream = await client.chat.completions.create(
            model="secretary",
            messages=[{"role": "user", "content": "two"}],
            stream=True,
            extra_headers={"X-Session-Id": sid},
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == "Async two."
    assert [m["content"] for m in history(navi, sid)] == ["one", "Async one.", "two", "Async two."]


def test_tool_steps_show_as_the_page_shows_them(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    """Text of a step that called a tool comes first, a blank line, then the answer — streamed or not."""
    script = use_script(fake_server)
    step = Reply(text="Let me look.", tool_calls=[ScriptedCall("todo", {"action": "read"})])
    script.turn(step, Reply(text="Nothing to do.", prompt_tokens=40, completion_tokens=3))
    client = sdk(navi)
    answer = client.chat.completions.create(
        model="secretary", messages=[{"role": "user", "content": "todo?"}]
    )
    assert answer.choices[0].message.content == "Let me look.\n\nNothing to do."
    assert answer.usage is not None and answer.usage.completion_tokens > 3  # both model calls count
    script.turn(step, Reply(text="Still nothing."))
    stream = client.chat.completions.create(
        model="secretary", messages=[{"role": "user", "content": "todo?"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Let me look.\n\nStill nothing."


def test_an_image_reaches_the_model(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn("A tiny black square.")
    answer = sdk(navi).chat.completions.create(
        model="secretary",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            }
        ],
    )
    assert answer.choices[0].message.content == "A tiny black square."
    last = script.of_kind("turn")[0].messages[-1]
    assert last.role == "user" and last.images == [PNG] and "What is this?" in (last.content or "")


def test_errors_use_openais_error_object(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    client = sdk(navi)
    hi = [{"role": "user", "content": "hi"}]

    def refused(kind: type[openai.APIStatusError], **kw: Any) -> openai.APIStatusError:
        with pytest.raises(kind) as caught:
            client.chat.completions.create(**{"model": "secretary", "messages": hi, **kw})
        body = caught.value.body
        assert isinstance(body, dict) and set(body) == {"message", "type", "param", "code"}, body
        return caught.value

    assert refused(openai.NotFoundError, model="gpt-4o").code == "model_not_found"
    malformed = refused(openai.BadRequestError, extra_headers={"X-Session-Id": "not-a-session"})
    assert malformed.code == "invalid_session_id" and "not-a-session" in malformed.message
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    declared = refused(openai.BadRequestError, tools=tools)
    assert declared.code == "tools_not_supported" and "Navi runs its own tools" in declared.message
    assert refused(openai.BadRequestError, n=2).code == "invalid_value"
    ends = refused(openai.BadRequestError, messages=[*hi, {"role": "assistant", "content": "prefill"}])
    assert "last message must be the user's" in ends.message
    url_image = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/cat.png"}}]}
    ]
    assert "data URLs" in refused(openai.BadRequestError, messages=url_image).message
    broken = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}],
        }
    ]
    assert refused(openai.BadRequestError, messages=broken).code == "invalid_image"
    assert (
        refused(openai.BadRequestError, messages=[{"role": "robot", "content": "x"}]).param == "messages[0]"
    )
    assert refused(openai.BadRequestError, messages=[]).type == "invalid_request_error"
    hostile = [
        [{"role": "tool", "content": "x", "tool_call_id": "c", "name": 5}, *hi],
        [{"role": "assistant", "tool_calls": [{"id": 1}]}, *hi],
        [{"role": "user", "content": [{"type": "image_url", "image_url": 5}]}],
        [{"role": ["user"], "content": "x"}],
    ]
    with navi.client() as http:
        for messages in hostile:
            body = json.dumps({"model": "secretary", "messages": messages})
            resp = http.post(
                "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
            )
            assert resp.status_code == 400 and resp.json()["error"]["param"].startswith("messages[0]"), (
                resp.text
            )
        assert http.get("/sessions").json() == []  # nothing refused left a session behind
        unknown = http.post("/v1/completions", json={})
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
        assert (
            http.post("/v1/chat/completions", content=b"{oops").json()["error"]["type"]
            == "invalid_request_error"
        )
    with pytest.raises(openai.AuthenticationError) as denied:
        sdk(navi, api_key="wrong").models.list()
    assert denied.value.code == "invalid_api_key" and "token" in denied.value.message


def test_a_model_failure_is_not_retried_by_the_sdk(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.turn(
        Reply(status=500, error="model exploded"),
        Reply(text="ok then", chunk_chars=2),
        Reply(status=500, error="boom again"),
    )
    client = sdk(navi, max_retries=2)  # the SDK's default would retry a 5xx twice
    with pytest.raises(openai.APIStatusError) as failed:
        client.chat.completions.with_raw_response.create(
            model="secretary", messages=[{"role": "user", "content": "hi"}]
        )
    assert failed.value.status_code == 502 and failed.value.code == "model_error"
    assert "model exploded" in failed.value.message
    assert len(script.of_kind("turn")) == 1  # the message is stored once: no retry
    sid = failed.value.response.headers["x-session-id"]
    assert history(navi, sid)[-1]["metadata"]["error"]["code"] == "model_error"
    # Mid-stream, the error arrives as an event after what was streamed.
    stream = client.chat.completions.create(
        model="secretary",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        extra_headers={"X-Session-Id": sid},
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "ok then"
    got: list[str] = []
    with pytest.raises(openai.APIError) as mid:
        for c in client.chat.completions.create(
            model="secretary",
            messages=[{"role": "user", "content": "again"}],
            stream=True,
            extra_headers={"X-Session-Id": sid},
        ):
            got.append(c.choices[0].delta.content or "")
    assert "boom again" in mid.value.message and got  # the role chunk came first


@pytest.fixture
def asking_navi(tmp_path: Path, fake_server: FakeModelServer):
    # A person at the page would be asked; the timeout is short so a run that wrongly waits fails fast.
    with live_navi(
        tmp_path, fake_server, navi_approval_mode="smart", navi_approval_timeout_seconds=5
    ) as server:
        yield server


def test_calls_that_need_approval_are_denied_at_once(
    asking_navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    navi = asking_navi
    target = tmp_path / "notes.txt"
    script = use_script(fake_server)
    write = ScriptedCall("filesystem", {"action": "write", "path": str(target), "content": "x"})
    script.turn(Reply(tool_calls=[write]), Reply(text="I could not write the file."))
    raw = sdk(navi).chat.completions.with_raw_response.create(
        model="secretary", messages=[{"role": "user", "content": "write notes.txt"}]
    )
    content = raw.parse().choices[0].message.content or ""
    assert content.startswith("I could not write the file.\n\n[Navi did not run 1 tool call (filesystem)")
    assert "NAVI_OPENAI_API_APPROVALS=allow" in content
    assert not target.exists()
    result = script.of_kind("turn")[1].messages[-1]
    assert result.role == "tool" and "nobody can be asked" in (result.content or "")
    stored = history(navi, raw.headers["x-session-id"])
    assert stored[-1]["content"] == "I could not write the file."  # the note is the API's, not the session's
    # A subagent of such a run has nobody to ask either.
    spawn = ScriptedCall("spawn_agent", {"task": "write notes.txt"})
    script.turn(Reply(tool_calls=[spawn]), Reply(tool_calls=[write]), "Not written.", "My helper could not.")
    helped = sdk(navi).chat.completions.create(
        model="secretary", messages=[{"role": "user", "content": "have a helper write notes.txt"}]
    )
    assert (helped.choices[0].message.content or "").startswith(
        "My helper could not.\n\n[Navi did not run 1 tool call (filesystem)"
    )
    assert not target.exists()


def test_a_setting_allows_them(tmp_path: Path, fake_server: FakeModelServer) -> None:
    target = tmp_path / "notes.txt"
    settings = {"navi_approval_mode": "smart", "navi_approval_timeout_seconds": 5}
    with live_navi(tmp_path, fake_server, navi_openai_api_approvals="allow", **settings) as navi:
        script = use_script(fake_server)
        write = ScriptedCall("filesystem", {"action": "write", "path": str(target), "content": "written"})
        script.turn(Reply(tool_calls=[write]), Reply(text="Done."))
        answer = sdk(navi).chat.completions.create(
            model="secretary", messages=[{"role": "user", "content": "write notes.txt"}]
        )
    assert answer.choices[0].message.content == "Done."
    assert target.read_text() == "written"


async def test_a_busy_session_is_409(asking_navi: LiveNavi, fake_server: FakeModelServer) -> None:
    navi = asking_navi
    script = use_script(fake_server)
    script.turn(Reply(tool_calls=[ScriptedCall("terminal", {"command": "rm notes.txt"})]), "Left it.")
    sid = navi.new_session()
    async with navi.socket(sid) as ws:  # a page's turn waits for its person's answer
        await ws.send('{"type": "message", "content": "tidy up"}')
        asked = (await frames_until(ws, "approval_required"))[-1]
        client = openai.AsyncOpenAI(base_url=f"{navi.url}/v1", api_key=navi.token, max_retries=0)
        async with client:
            with pytest.raises(openai.ConflictError) as busy:
                await client.chat.completions.create(
                    model="secretary",
                    messages=[{"role": "user", "content": "hi"}],
                    extra_headers={"X-Session-Id": sid},
                )
        assert busy.value.code == "busy" and "already in progress" in busy.value.message
        with navi.client() as http:
            http.post(f"/sessions/{sid}/approvals/{asked['call_id']}", json={"decision": "deny"})
        await frames_until(ws, "stream_end")


def test_a_client_that_leaves_mid_stream_does_not_stop_the_turn(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    text = "word " * 40
    script.turn(Reply(text=text, chunk_chars=5, delay=0.02))
    body = {"model": "secretary", "messages": [{"role": "user", "content": "talk"}], "stream": True}
    with navi.client() as http, http.stream("POST", "/v1/chat/completions", json=body) as resp:
        sid = resp.headers["x-session-id"]
        for line in resp.iter_lines():
            if line.startswith("data: {") and json.loads(line[6:])["choices"][0]["delta"].get("content"):
                break  # one word, then the client goes away
    with navi.client() as http:
        for _ in range(500):
            detail = http.get(f"/sessions/{sid}").json()
            if not detail["active"] and len(detail["messages"]) == 2:
                break
            time.sleep(0.02)
    assert detail["messages"][-1]["content"].strip() == text.strip()


# --- simonw's `llm`, configured with Navi as an OpenAI-compatible model -------------------------------
def run_llm(
    navi: LiveNavi, home: Path, *args: str, headers: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`llm …` as a new user would run it: Navi in `extra-openai-models.yaml`, its token as a key."""
    home.mkdir(exist_ok=True)
    model: dict[str, Any] = {
        "model_id": "navi",
        "model_name": "secretary",
        "api_base": f"{navi.url}/v1",
        "api_key_name": "navi",
        "vision": True,
    }
    if headers:
        model["headers"] = headers
    wrong = {**model, "model_id": "navi-typo", "model_name": "secretry"}
    (home / "extra-openai-models.yaml").write_text(json.dumps([model, wrong]))  # JSON is YAML
    (home / "keys.json").write_text(json.dumps({"navi": navi.token}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    env["LLM_USER_PATH"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "llm", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def sessions_of(navi: LiveNavi) -> list[dict[str, Any]]:
    with navi.client() as http:
        return [http.get(f"/sessions/{s['id']}").json() for s in http.get("/sessions").json()]


def test_llm_talks_to_navi(navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path) -> None:
    home = tmp_path / "llm"
    script = use_script(fake_server)
    script.turn(
        Reply(text="Hello from Navi!", chunk_chars=3), "Without streaming.", "Seen it.", "Still here."
    )
    hello = run_llm(navi, home, "-m", "navi", "hello")
    assert (hello.returncode, hello.stdout) == (0, "Hello from Navi!\n"), hello.stderr
    plain = run_llm(navi, home, "-m", "navi", "--no-stream", "once more")
    assert (plain.returncode, plain.stdout) == (0, "Without streaming.\n"), plain.stderr
    (tmp_path / "dot.png").write_bytes(base64.b64decode(PNG))
    image = run_llm(navi, home, "-m", "navi", "what is this?", "-a", str(tmp_path / "dot.png"))
    assert (image.returncode, image.stdout) == (0, "Seen it.\n"), image.stderr
    assert script.of_kind("turn")[2].messages[-1].images == [PNG]
    # `llm -c` sends the whole conversation: Navi seeds a new session with it.
    more = run_llm(navi, home, "-c", "and now?")
    assert (more.returncode, more.stdout) == (0, "Still here.\n"), more.stderr
    contents = [[m["content"] for m in s["messages"]] for s in sessions_of(navi)]
    assert ["what is this?", "Seen it.", "and now?", "Still here."] in contents
    assert ["hello", "Hello from Navi!"] in contents and len(contents) == 4


def test_llm_continues_a_session_by_header_and_shows_errors(
    navi: LiveNavi, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    home = tmp_path / "llm"
    script = use_script(fake_server)
    script.turn("First.", "Second.")
    sid = navi.new_session()
    for prompt, said in (("one", "First.\n"), ("two", "Second.\n")):
        done = run_llm(navi, home, "-m", "navi", prompt, headers={"X-Session-Id": sid})
        assert (done.returncode, done.stdout) == (0, said), done.stderr
    assert [m["content"] for m in history(navi, sid)] == ["one", "First.", "two", "Second."]
    typo = run_llm(navi, home, "-m", "navi-typo", "hi")
    assert typo.returncode != 0 and "The model 'secretry' does not exist" in typo.stderr
    typo_id = run_llm(navi, home, "-m", "navi", "hi", headers={"X-Session-Id": sid[:-1]})
    assert typo_id.returncode != 0 and "must be a Navi session id" in typo_id.stderr


def test_a_turn_stopped_from_the_page_ends_the_answer(navi: LiveNavi, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    full = "slow " * 40
    script.turn(Reply(text=full, chunk_chars=5, delay=0.05))
    stream = sdk(navi).chat.completions.with_raw_response.create(
        model="secretary", messages=[{"role": "user", "content": "talk"}], stream=True
    )
    sid = stream.headers["x-session-id"]
    text, finishes = "", []
    for chunk in stream.parse():
        delta = chunk.choices[0].delta.content if chunk.choices else None
        if delta and not text:
            with navi.client() as http:
                assert http.post(f"/sessions/{sid}/stop").json()["ok"] is True
        text += delta or ""
        finishes += (
            [chunk.choices[0].finish_reason] if chunk.choices and chunk.choices[0].finish_reason else []
        )
    assert finishes == ["stop"] and text and full.startswith(text)
