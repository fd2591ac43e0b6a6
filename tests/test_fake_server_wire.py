"""The fake model server must speak the real formats: the official clients parse what it sends.

These tests use the `ollama`, `openai` and `anthropic` SDKs directly (not Navi's backends), so a
drift between the fake and the real wire formats shows up here first.
"""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx
import ollama
import openai
import pydantic
import pytest

from navi.testing.fake_server import FakeModelServer, LlamaCppFace, fake_embedding
from navi.testing.script import Reply, ScriptedCall
from navi.testing.wire import string_arguments

MODEL = "gemma4:e2b-it-q8_0"
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_time", "description": "time", "parameters": {"type": "object"}},
    }
]


async def test_ollama_client_streams_chat(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(
        Reply(
            thinking="thinking hard",
            text="It is noon.",
            tool_calls=[ScriptedCall("get_time", {"tz": "UTC"})],
            prompt_tokens=42,
            completion_tokens=7,
        )
    )
    async with ollama.AsyncClient(host=fake_server.url) as client:
        stream = await client.chat(
            model=MODEL, messages=[{"role": "user", "content": "time?"}], tools=TOOLS, stream=True, think=True
        )
        parts = [p async for p in stream]
    assert "".join(p.message.thinking or "" for p in parts) == "thinking hard"
    assert "".join(p.message.content or "" for p in parts) == "It is noon."
    calls = [c for p in parts for c in p.message.tool_calls or []]
    assert calls[0].function.name == "get_time" and dict(calls[0].function.arguments) == {"tz": "UTC"}
    final = parts[-1]
    assert final.done and final.done_reason == "stop"
    assert final.prompt_eval_count == 42 and final.eval_count == 7
    assert all(not p.done for p in parts[:-1])


async def test_ollama_client_whole_reply_and_metadata(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="Hi!", prompt_tokens=3, completion_tokens=2))
    async with ollama.AsyncClient(host=fake_server.url) as client:
        whole = await client.chat(model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=False)
        assert whole.message.content == "Hi!" and whole.done and whole.eval_count == 2
        listed = await client.list()
        assert MODEL in [m.model for m in listed.models]
        shown = await client.show(MODEL)
        assert "thinking" in (shown.capabilities or [])
        assert any(k.endswith(".context_length") for k in (shown.modelinfo or {}))
        embedded = await client.embed(model=MODEL, input=["red apples", "green apples"])
        assert len(embedded.embeddings) == 2 and list(embedded.embeddings[0]) == fake_embedding("red apples")
        with pytest.raises(ollama.ResponseError) as err:
            await client.chat(model="absent:1b", messages=[{"role": "user", "content": "hi"}])
        assert err.value.status_code == 404


async def test_ollama_string_arguments_are_what_the_official_client_refuses(
    fake_server: FakeModelServer,
) -> None:
    """The case Navi's Ollama adapter must survive: `arguments` sent as a JSON string."""
    fake_server.enqueue(Reply(tool_calls=[ScriptedCall("get_time", string_arguments({"tz": "UTC"}))]))
    async with httpx.AsyncClient(base_url=fake_server.url) as http:
        body = {"model": MODEL, "messages": [{"role": "user", "content": "t"}], "stream": False}
        sent = (await http.post("/api/chat", json=body)).json()
    assert sent["message"]["tool_calls"][0]["function"]["arguments"] == '{"tz": "UTC"}'
    fake_server.enqueue(Reply(tool_calls=[ScriptedCall("get_time", string_arguments({"tz": "UTC"}))]))
    async with ollama.AsyncClient(host=fake_server.url) as client:
        with pytest.raises(pydantic.ValidationError, match="arguments"):
            async for _ in await client.chat(
                model=MODEL, messages=[{"role": "user", "content": "t"}], stream=True
            ):
                pass


async def test_openai_client_reads_the_llama_cpp_face(fake_server: FakeModelServer) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "llama_cpp"
    fake_server.llama_cpp = LlamaCppFace(
        props=json.loads((fixtures / "props_smollm2.json").read_text()),
        models=json.loads((fixtures / "v1_models.json").read_text()),
    )
    fake_server.enqueue("Hello from llama.cpp")
    try:
        async with openai.AsyncOpenAI(base_url=fake_server.openai_url, api_key="x") as client:
            page = await client.models.list()
            (entry,) = page.data
            assert entry.owned_by == "llamacpp" and (entry.model_extra or {})["meta"]["n_ctx_train"] == 8192
            props = await client.get(f"{fake_server.url}/props", cast_to=object)
            assert props["default_generation_settings"]["n_ctx"] == 2048  # type: ignore[index]
            reply = await client.chat.completions.create(
                model="any name at all", messages=[{"role": "user", "content": "hi"}]
            )
            assert reply.choices[0].message.content == "Hello from llama.cpp"
    finally:
        fake_server.reset()


async def test_ollama_client_sees_error_line(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="abcdefghijklmnop", error_after=1, error="model crashed"))
    async with ollama.AsyncClient(host=fake_server.url) as client:
        with pytest.raises(ollama.ResponseError) as err:
            async for _ in await client.chat(
                model=MODEL, messages=[{"role": "user", "content": "x"}], stream=True
            ):
                pass
    assert "model crashed" in str(err.value)


async def test_openai_client_streams_chat(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(
        Reply(
            thinking="consider",
            text="Noon.",
            tool_calls=[ScriptedCall("get_time", {"tz": "UTC"}), ScriptedCall("get_time", {"tz": "CET"})],
            prompt_tokens=11,
            completion_tokens=5,
        )
    )
    client = openai.AsyncOpenAI(base_url=fake_server.openai_url, api_key="x")
    stream = await client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "time?"}],
        tools=TOOLS,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    text, reasoning, finish, usage = "", "", None, None
    args: dict[int, str] = {}
    ids: dict[int, str] = {}
    async for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
            for tc in choice.delta.tool_calls or []:
                args[tc.index] = args.get(tc.index, "") + (tc.function.arguments or "" if tc.function else "")
                if tc.id:
                    ids[tc.index] = tc.id
            finish = choice.finish_reason or finish
    assert text == "Noon." and reasoning == "consider"
    assert args == {0: '{"tz": "UTC"}', 1: '{"tz": "CET"}'}
    assert len(set(ids.values())) == 2
    assert finish == "tool_calls"
    assert usage is not None and usage.prompt_tokens == 11 and usage.completion_tokens == 5
    await client.close()


async def test_openai_client_whole_reply_and_errors(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="Hello", tool_calls=[ScriptedCall("get_time", {})]))
    client = openai.AsyncOpenAI(base_url=fake_server.openai_url, api_key="x", max_retries=0)
    done = await client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    assert done.choices[0].message.content == "Hello"
    assert done.choices[0].message.tool_calls[0].function.name == "get_time"  # type: ignore[index,union-attr]
    assert done.usage is not None and done.usage.total_tokens > 0
    models = await client.models.list()
    assert MODEL in [m.id for m in models.data]
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.create(model="absent", messages=[{"role": "user", "content": "hi"}])
    fake_server.enqueue(Reply(text="abcdefghijkl", error_after=2, error="overheated"))
    with pytest.raises(openai.APIError) as err:
        async for _ in await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}], stream=True
        ):
            pass
    assert "overheated" in str(err.value)
    await client.close()


async def test_anthropic_client_stream_helper(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(
        Reply(
            thinking="step by step",
            text="It is noon.",
            tool_calls=[ScriptedCall("get_time", {"tz": "UTC"})],
            prompt_tokens=20,
            completion_tokens=9,
        )
    )
    client = anthropic.AsyncAnthropic(api_key="x", base_url=fake_server.url, max_retries=0)
    async with client.messages.stream(
        model=MODEL,
        max_tokens=1024,
        messages=[{"role": "user", "content": "time?"}],
        tools=[{"name": "get_time", "description": "time", "input_schema": {"type": "object"}}],
    ) as stream:
        message = await stream.get_final_message()
    kinds = [b.type for b in message.content]
    assert kinds == ["thinking", "text", "tool_use"]
    assert message.content[0].thinking == "step by step"  # type: ignore[union-attr]
    assert message.content[0].signature  # type: ignore[union-attr]
    assert message.content[1].text == "It is noon."  # type: ignore[union-attr]
    assert message.content[2].input == {"tz": "UTC"}  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens == 20 and message.usage.output_tokens == 9
    await client.close()


async def test_anthropic_client_whole_reply_and_errors(fake_server: FakeModelServer) -> None:
    fake_server.enqueue("Plain answer")
    client = anthropic.AsyncAnthropic(api_key="x", base_url=fake_server.url, max_retries=0)
    message = await client.messages.create(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
    )
    assert message.content[0].text == "Plain answer"  # type: ignore[union-attr]
    with pytest.raises(anthropic.NotFoundError):
        await client.messages.create(
            model="absent", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    fake_server.enqueue(Reply(text="abcdefghijkl", error_after=2))
    with pytest.raises(anthropic.APIStatusError) as err:
        async for _ in await client.messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x"}], stream=True
        ):
            pass
    assert "Overloaded" in str(err.value)
    await client.close()


async def test_openai_client_reads_v1_embeddings_as_floats_and_base64(fake_server: FakeModelServer) -> None:
    async with openai.AsyncOpenAI(base_url=fake_server.openai_url, api_key="x", max_retries=0) as client:
        default = await client.embeddings.create(model=MODEL, input=["red apples", "green apples"])
        floats = await client.embeddings.create(model=MODEL, input="red apples", encoding_format="float")
        with pytest.raises(openai.NotFoundError):
            await client.embeddings.create(model="absent:1b", input="x")
    # The client asks for base64 unless told otherwise, and decodes it to floats (float32 precision).
    assert [d.index for d in default.data] == [0, 1]
    assert [round(x, 5) for x in default.data[1].embedding] == [
        round(x, 5) for x in fake_embedding("green apples")
    ]
    assert floats.data[0].embedding == fake_embedding("red apples")
    assert default.usage.prompt_tokens == 4
