"""Fallback with a real model server (issue 48): the chain's first endpoint is a llama-server that
is gone (its port closed), the second is SmolLM2 on llama-server, which answers; the answer says
which endpoint and model wrote it, and why the first was passed over. One call, eight tokens."""

from __future__ import annotations

import pytest

from navi.llm.base import CallOptions
from navi.llm.chain import ChainShared, ModelChain
from navi.llm.chunks import StreamFinal, TextDelta
from navi.llm.endpoints import ModelEndpoint, ModelList
from navi.llm.messages import Message
from navi.llm.openai_backend import OpenAIBackend
from navi.testing.llama import LlamaServer
from navi.testing.ports import free_port

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(300)]


async def test_a_dead_server_first_in_the_chain_falls_back_to_smollm2(smollm2_server: LlamaServer) -> None:
    gone = f"http://127.0.0.1:{free_port()}/v1"
    endpoints = {
        "gone": ModelEndpoint(id="gone", backend="openai", url=gone, model="gemma3"),
        "smollm2": ModelEndpoint(
            id="smollm2", backend="openai", url=smollm2_server.base_url, model=smollm2_server.model
        ),
    }
    backends = {e.id: OpenAIBackend(e.url, timeout=120, connect_timeout=2) for e in endpoints.values()}
    shared = ChainShared(ModelList(endpoints, {"default": ("gone", "smollm2")}, "", True), clock=lambda: 0.0)
    chain = ModelChain("models", ["gone", "smollm2"], shared, backends.__getitem__)
    try:
        options = CallOptions(model="ignored", max_tokens=8, temperature=0.0)
        chunks = [c async for c in chain.stream_complete([Message.user("Say hello.")], options)]
    finally:
        for backend in backends.values():
            await backend.aclose()
    end = chunks[-1]
    assert isinstance(end, StreamFinal)
    assert (end.endpoint, end.model) == ("smollm2", smollm2_server.model)
    assert len(end.switched) == 1 and end.switched[0].startswith("gone: ")
    assert 0 < end.usage.completion_tokens <= 8 and not end.usage.estimated  # the server counted them
    assert any(isinstance(c, TextDelta) and c.text for c in chunks)
    assert list(await shared.breaker.trips()) == ["gone"]
