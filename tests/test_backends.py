"""The three real backends, over HTTP, against the fake model server."""

from __future__ import annotations

import base64
import contextlib
import json

import pytest

from navi.llm import CallOptions, LLMBackend, Message, ToolCall, ToolSpec
from navi.llm.anthropic_backend import AnthropicBackend
from navi.llm.chunks import StreamFinal, TextDelta, ThinkingDelta, ToolCallsChunk
from navi.llm.errors import (
    AuthenticationFailed,
    BackendHTTPError,
    BackendTimeout,
    BackendUnreachable,
    ModelNotFound,
    StreamInterrupted,
)
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.openai_backend import OpenAIBackend
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port as _closed_port
from navi.testing.script import Reply, ScriptedCall
from navi.testing.wire import string_arguments

MODEL = "gemma4:e2b-it-q8_0"
KINDS = ["ollama", "openai", "anthropic"]
# 1x1 transparent PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def make_backend(kind: str, url: str, *, api_key: str = "", timeout: float = 30.0) -> LLMBackend:
    if kind == "ollama":
        return OllamaBackend(url, timeout=timeout)
    if kind == "openai":
        return OpenAIBackend(f"{url}/v1", api_key, timeout=timeout)
    return AnthropicBackend(api_key or "test-key", url, timeout=timeout)


@pytest.fixture(params=KINDS)
async def backend(request: pytest.FixtureRequest, fake_server: FakeModelServer):
    be = make_backend(request.param, fake_server.url)
    try:
        yield be
    finally:
        await be.aclose()


async def collect(be: LLMBackend, messages: list[Message], **opts: object) -> list:
    options = CallOptions(model=str(opts.pop("model", MODEL)), **opts)  # type: ignore[arg-type]
    tools = [
        ToolSpec(name="todo", description="Task list"),
        ToolSpec(name="web_search", description="Search"),
    ]
    return [chunk async for chunk in be.stream_complete(messages, options, tools)]


async def test_streams_text_in_pieces(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="The capital of France is Paris.", chunk_chars=5))
    chunks = await collect(backend, [Message.system("Be brief."), Message.user("Capital of France?")])
    texts = [c.text for c in chunks if isinstance(c, TextDelta)]
    assert "".join(texts) == "The capital of France is Paris."
    assert len(texts) >= 6
    final = chunks[-1]
    assert isinstance(final, StreamFinal) and final.finish_reason == "stop"
    seen = fake_server.requests[-1]
    assert seen.system_text == "Be brief."
    assert seen.last_user_text == "Capital of France?"
    assert seen.tools == ["todo", "web_search"]


async def test_thinking_comes_before_text(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(thinking="Paris is the capital.", text="Paris."))
    chunks = await collect(backend, [Message.user("Capital?")], think=True)
    kinds = [type(c).__name__ for c in chunks]
    assert kinds.index("ThinkingDelta") < kinds.index("TextDelta")
    assert "".join(c.text for c in chunks if isinstance(c, ThinkingDelta)) == "Paris is the capital."


async def test_ollama_sends_options_and_think_only_when_supported(fake_server: FakeModelServer) -> None:
    be = OllamaBackend(fake_server.url)
    try:
        fake_server.enqueue("one", "two")
        await collect(be, [Message.user("hi")], think=True, temperature=0.25, num_ctx=8192)
        first = fake_server.requests[-1]
        assert first.options["num_ctx"] == 8192
        assert first.options["temperature"] == 0.25
        assert first.options["think"] is True
        # plain:1b has no "thinking" capability: Ollama would answer 400 if think were sent.
        chunks = await collect(be, [Message.user("hi")], think=True, model="plain:1b")
        assert fake_server.requests[-1].options["think"] is None
        assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "two"
    finally:
        await be.aclose()


async def test_tool_calls_with_arguments_get_ids(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(
        Reply(
            text="",
            tool_calls=[
                ScriptedCall("web_search", {"query": "weather in Oslo", "max_results": 3}),
                ScriptedCall("todo", {"action": "set", "tasks": ["a", "b"]}),
            ],
        )
    )
    chunks = await collect(backend, [Message.user("weather?")])
    calls_chunks = [c for c in chunks if isinstance(c, ToolCallsChunk)]
    assert len(calls_chunks) == 1
    calls = calls_chunks[0].tool_calls
    assert [c.name for c in calls] == ["web_search", "todo"]
    assert calls[0].arguments == {"query": "weather in Oslo", "max_results": 3}
    assert calls[1].arguments == {"action": "set", "tasks": ["a", "b"]}
    assert calls[0].id and calls[1].id and calls[0].id != calls[1].id
    assert chunks[-1].finish_reason == "tool_calls"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_broken_tool_arguments_are_kept_not_replaced(kind: str, fake_server: FakeModelServer) -> None:
    be = make_backend(kind, fake_server.url)
    try:
        fake_server.enqueue(Reply(tool_calls=[ScriptedCall("todo", '{"action": "set", "tasks": [')]))
        chunks = await collect(be, [Message.user("plan")])
        (call,) = next(c for c in chunks if isinstance(c, ToolCallsChunk)).tool_calls
        assert call.name == "todo"
        assert call.arguments == {}
        assert call.raw_arguments == '{"action": "set", "tasks": ['
        assert "not valid JSON" in (call.arguments_error or "")
    finally:
        await be.aclose()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"action": "set", "tasks": ["a", "b",],}', {"action": "set", "tasks": ["a", "b"]}),
        ('```json\n{"action": "get"}\n```', {"action": "get"}),
        ('{"verbose": True, "limit": None, "all": False}', {"verbose": True, "limit": None, "all": False}),
        ("{'action': 'get', 'tasks': ('a',)}", {"action": "get", "tasks": ["a"]}),
        (string_arguments({"path": "notes.txt"}), {"path": "notes.txt"}),  # double-encoded
        ("null", {}),
    ],
)
async def test_repairable_tool_arguments_are_repaired(
    raw: str, expected: dict, backend: LLMBackend, fake_server: FakeModelServer
) -> None:
    fake_server.enqueue(Reply(tool_calls=[ScriptedCall("todo", raw)]))
    chunks = await collect(backend, [Message.user("plan")])
    (call,) = next(c for c in chunks if isinstance(c, ToolCallsChunk)).tool_calls
    assert (call.arguments, call.raw_arguments, call.arguments_error) == (expected, None, None)
    assert chunks[-1].finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"action": "set", "tasks": [', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps("just words"), "not valid JSON"),
    ],
)
async def test_ollama_string_arguments_never_end_the_turn(
    raw: str, reason: str, fake_server: FakeModelServer
) -> None:
    """Ollama sends these as a string: its own client would raise a pydantic validation error."""
    be = OllamaBackend(fake_server.url)
    try:
        fake_server.enqueue(Reply(text="Let me.", tool_calls=[ScriptedCall("todo", raw)]))
        chunks = await collect(be, [Message.user("plan")])
    finally:
        await be.aclose()
    (call,) = next(c for c in chunks if isinstance(c, ToolCallsChunk)).tool_calls
    assert call.name == "todo" and call.arguments == {}
    assert call.raw_arguments is not None and reason in (call.arguments_error or "")
    assert chunks[-1].finish_reason == "tool_calls"


def test_repair_keeps_strings_and_refuses_what_is_not_an_object() -> None:
    call = ToolCall.from_raw("t", '{"note": "True, None, and a trailing comma,]", "n": 1,}')
    assert call.arguments == {"note": "True, None, and a trailing comma,]", "n": 1}
    for raw in ('{"a": 1} trailing words', "{a: 1}", "1+2j", "{'a': {1, 2}}"):
        refused = ToolCall.from_raw("t", raw)
        assert refused.arguments == {} and refused.raw_arguments == raw and refused.arguments_error


async def test_history_with_tools_and_images_reaches_the_server(
    backend: LLMBackend, fake_server: FakeModelServer
) -> None:
    call = ToolCall(name="web_search", arguments={"query": "oslo"})
    history = [
        Message.system("You are Navi."),
        Message.user("What is in this picture, and the weather?", images=[f"data:image/png;base64,{PNG}"]),
        Message.assistant("", tool_calls=[call]),
        Message.tool("Oslo: 4°C, rain", tool_call_id=call.id, name="web_search"),
    ]
    fake_server.enqueue("A tiny image; it rains in Oslo.")
    await collect(backend, history)
    seen = fake_server.requests[-1].messages
    user = next(m for m in seen if m.role == "user")
    assert user.content == "What is in this picture, and the weather?"
    assert user.images == [PNG]
    assistant = next(m for m in seen if m.role == "assistant")
    assert assistant.tool_calls[0].name == "web_search"
    assert assistant.tool_calls[0].arguments == {"query": "oslo"}
    tool = next(m for m in seen if m.role == "tool")
    assert tool.content == "Oslo: 4°C, rain"
    if not isinstance(backend, OllamaBackend):
        assert tool.tool_call_id == call.id  # Ollama links results by tool name instead
    else:
        assert tool.name == "web_search"


async def test_anthropic_gets_image_media_type(fake_server: FakeModelServer) -> None:
    be = AnthropicBackend("k", fake_server.url)
    try:
        fake_server.enqueue("ok")
        await collect(be, [Message.user("look", images=[PNG])])
        block = fake_server.requests[-1].raw["messages"][0]["content"][0]
        assert block["type"] == "image"
        assert block["source"]["media_type"] == "image/png"
    finally:
        await be.aclose()


async def test_token_counts_are_the_servers(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="Sure.", prompt_tokens=1234, completion_tokens=56))
    final = (await collect(backend, [Message.user("hello")]))[-1]
    assert final.usage.prompt_tokens == 1234
    assert final.usage.completion_tokens == 56
    assert final.usage.estimated is False


async def test_complete_folds_a_whole_turn(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(
        Reply(
            thinking="plan it", text="Calling a tool.", tool_calls=[ScriptedCall("todo", {"action": "read"})]
        )
    )
    result = await backend.complete([Message.user("go")], CallOptions(model=MODEL, think=True))
    assert result.text == "Calling a tool."
    assert result.message.thinking == "plan it"
    assert result.message.tool_calls[0].arguments == {"action": "read"}
    assert result.finish_reason == "tool_calls"


async def test_model_not_found(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    with pytest.raises(ModelNotFound) as err:
        await collect(backend, [Message.user("hi")], model="missing-model:7b")
    assert "missing-model:7b" in str(err.value)
    if isinstance(backend, OllamaBackend):
        assert "run `ollama pull missing-model:7b`" in str(err.value)


async def test_http_error_status(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(status=500, error="GPU on fire"))
    with pytest.raises(BackendHTTPError) as err:
        await collect(backend, [Message.user("hi")])
    assert err.value.status == 500
    assert "GPU on fire" in str(err.value)


async def test_error_line_mid_stream(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="x" * 80, error_after=3, error="out of memory"))
    received: list = []
    with pytest.raises(StreamInterrupted) as err:
        async for chunk in backend.stream_complete([Message.user("hi")], CallOptions(model=MODEL)):
            received.append(chunk)
    assert "out of memory" in str(err.value) or "Overloaded" in str(err.value)
    assert any(isinstance(c, TextDelta) for c in received)


async def test_dropped_stream(backend: LLMBackend, fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="y" * 80, drop_after=4))
    with pytest.raises(StreamInterrupted) as err:
        await collect(backend, [Message.user("hi")])
    assert "dropped" in str(err.value) or "ended before" in str(err.value)


@pytest.mark.parametrize("kind", KINDS)
async def test_timeout(kind: str, fake_server: FakeModelServer) -> None:
    be = make_backend(kind, fake_server.url, timeout=0.3)
    try:
        fake_server.enqueue(Reply(text="late", first_delay=1.5))
        with pytest.raises(BackendTimeout) as err:
            await collect(be, [Message.user("hi")])
        assert "0s" in str(err.value) or "within" in str(err.value)
    finally:
        await be.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_unreachable_server(kind: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    be = make_backend(kind, url)
    try:
        with pytest.raises(BackendUnreachable) as err:
            await collect(be, [Message.user("hi")])
        assert url in str(err.value)
        if kind == "ollama":
            assert "is `ollama serve` running?" in str(err.value)
        status = await be.status()
        assert status.ok is False
    finally:
        await be.aclose()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_wrong_api_key(kind: str, fake_server: FakeModelServer) -> None:
    fake_server.api_key = "right-key"
    be = make_backend(kind, fake_server.url, api_key="wrong-key")
    try:
        with pytest.raises(AuthenticationFailed) as err:
            await collect(be, [Message.user("hi")])
        assert ("OPENAI_API_KEY" if kind == "openai" else "ANTHROPIC_API_KEY") in str(err.value)
    finally:
        await be.aclose()


async def test_closing_a_stream_early_closes_the_request(
    backend: LLMBackend, fake_server: FakeModelServer
) -> None:
    fake_server.enqueue(Reply(text="z" * 400, chunk_chars=4, delay=0.05))
    stream = backend.stream_complete([Message.user("long answer")], CallOptions(model=MODEL))
    got = 0
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                got += 1
                if got == 2:
                    break
    request = fake_server.requests[-1]
    assert fake_server.wait_for(lambda: request.outcome != "pending", timeout=3)
    assert request.outcome == "aborted"


async def test_model_info(fake_server: FakeModelServer) -> None:
    ollama_be = OllamaBackend(fake_server.url)
    openai_be = OpenAIBackend(f"{fake_server.url}/v1")
    try:
        info = await ollama_be.model_info(MODEL)
        assert info.context_length == 131072
        assert info.supports("thinking") and info.supports("tools")
        plain = await ollama_be.model_info("plain:1b")
        assert plain.context_length == 8192 and not plain.supports("thinking")
        with pytest.raises(ModelNotFound):
            await ollama_be.model_info("nope:1b")
        assert (await openai_be.model_info("plain:1b")).context_length == 8192
        assert MODEL in await ollama_be.list_models()
        assert MODEL in await openai_be.list_models()
        status = await ollama_be.status()
        assert status.ok and status.version == fake_server.version
    finally:
        await ollama_be.aclose()
        await openai_be.aclose()


async def test_anthropic_thinking_signature_round_trips(fake_server: FakeModelServer) -> None:
    be = AnthropicBackend("k", fake_server.url)
    try:
        fake_server.enqueue(
            Reply(thinking="weigh options", tool_calls=[ScriptedCall("todo", {"action": "read"})])
        )
        first = await be.complete([Message.user("go")], CallOptions(model=MODEL, think=True))
        assert first.message.thinking == "weigh options"
        assert first.message.thinking_signature and first.message.thinking_signature.startswith("sig-")
        call = first.message.tool_calls[0]
        fake_server.enqueue("done")
        history = [Message.user("go"), first.message, Message.tool("[]", tool_call_id=call.id, name="todo")]
        await be.complete(history, CallOptions(model=MODEL, think=True))
        sent = fake_server.requests[-1].raw
        assistant_blocks = sent["messages"][1]["content"]
        assert assistant_blocks[0] == {
            "type": "thinking",
            "thinking": "weigh options",
            "signature": first.message.thinking_signature,
        }
        assert sent["messages"][2]["content"][0]["type"] == "tool_result"
        assert sent["messages"][2]["content"][0]["tool_use_id"] == call.id
        assert sent["thinking"]["type"] == "enabled"
    finally:
        await be.aclose()


async def test_ollama_request_body_equals_the_official_clients(fake_server: FakeModelServer) -> None:
    """Navi encodes /api/chat bodies itself (for speed); they must match what `chat()` would send."""
    import ollama

    from navi.llm.ollama_backend import to_ollama_messages, to_ollama_tools

    call = ToolCall(name="web_search", arguments={"query": "ünïcode ✓", "n": 2})
    messages = [
        Message.system("You are Navi."),
        Message.user("Look", images=[f"data:image/png;base64,{PNG}"]),
        Message.assistant("", tool_calls=[call], thinking="hidden reasoning"),
        Message.tool("results", tool_call_id=call.id, name="web_search"),
        Message.assistant("Empty next:"),
        Message.user(""),
    ]
    tools = [
        ToolSpec(name="web_search", description="Search", parameters={"type": "object", "properties": {}})
    ]
    fake_server.enqueue("a", "b")
    be = OllamaBackend(fake_server.url)
    try:
        options = CallOptions(model=MODEL, think=True, temperature=0.4, num_ctx=4096)
        [chunk async for chunk in be.stream_complete(messages, options, tools)]
        ours = fake_server.requests[-1].raw
        async with ollama.AsyncClient(host=fake_server.url) as client:
            async for _ in await client.chat(
                model=MODEL,
                messages=to_ollama_messages(messages),
                tools=to_ollama_tools(tools),
                stream=True,
                think=True,
                options={"num_ctx": 4096, "temperature": 0.4},
            ):
                pass
        official = fake_server.requests[-1].raw
    finally:
        await be.aclose()
    assert ours == official
    assert ours["messages"][2] == {
        "role": "assistant",
        "tool_calls": [{"function": {"name": "web_search", "arguments": {"query": "ünïcode ✓", "n": 2}}}],
    }  # no empty content, no thinking


async def test_ollama_bodies_match_with_the_same_tools(fake_server: FakeModelServer) -> None:
    import ollama

    from navi.llm.ollama_backend import chat_body, to_ollama_messages, to_ollama_tools

    messages = [Message.user("hi"), Message.assistant("hello"), Message.user("more", images=[PNG])]
    tools = [
        ToolSpec(
            name="todo",
            description="Task list",
            parameters={
                "type": "object",
                "properties": {"action": {"type": "string", "enum": ["read"]}},
                "required": ["action"],
            },
        )
    ]
    ours = json.loads(chat_body(MODEL, messages, tools, None, {"num_ctx": 8192, "temperature": 0.7}))
    fake_server.enqueue("x")
    async with ollama.AsyncClient(host=fake_server.url) as client:
        async for _ in await client.chat(
            model=MODEL,
            messages=to_ollama_messages(messages),
            tools=to_ollama_tools(tools),
            stream=True,
            options={"num_ctx": 8192, "temperature": 0.7},
        ):
            pass
    assert ours == fake_server.requests[-1].raw
