"""Fallback with real model servers (issue 48). First, the chain's first endpoint is a port nothing
listens on, the second SmolLM2 on the suite's llama-server, which answers; the answer says which
endpoint and model wrote it, and why the first was passed over. Then two llama-server processes
with two models: the test starts its own SmolLM2 on its own port as the chain's first endpoint,
which answers; it is killed (SIGKILL) mid-conversation and the next call moves on to the suite's
Gemma 3 server, saying so; the dead one is skipped for its cool-down, and once it is back on its
port after the cool-down the chain goes back to it. The suite's shared servers are never stopped.
Calls of eight tokens."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from navi.llm.base import CallOptions
from navi.llm.chain import ChainShared, ModelChain
from navi.llm.chunks import Chunk, Fallback, StreamFinal, TextDelta
from navi.llm.endpoints import ModelEndpoint, ModelList
from navi.llm.messages import Message
from navi.llm.openai_backend import OpenAIBackend
from navi.testing.llama import LlamaServer, ServerOptions
from navi.testing.ports import free_port
from tests.real_model.conftest import LLAMA_ENV, PARALLEL_THREADS

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


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def own_smollm2(log_dir: Path, port: int = 0) -> LlamaServer:
    """A SmolLM2 llama-server of this test's own (never the suite's shared one), on `port`."""
    saved = dict(os.environ)
    os.environ.update(LLAMA_ENV)  # where the build and the weights are, as the run was started
    try:
        options = ServerOptions(ctx=1024, threads=PARALLEL_THREADS, port=port)
        return LlamaServer("smollm2", options, log_path=log_dir / f"own-{port}.log").start()
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[LlamaServer]:
    server = own_smollm2(tmp_path)
    try:
        yield server
    finally:
        server.stop()


async def test_a_llama_server_killed_mid_conversation_falls_back_to_the_other_and_is_tried_again(
    own_server: LlamaServer, gemma3_server: LlamaServer, tmp_path: Path
) -> None:
    endpoints = {
        "own": ModelEndpoint(id="own", backend="openai", url=own_server.base_url, model=own_server.model),
        "shared": ModelEndpoint(
            id="shared", backend="openai", url=gemma3_server.base_url, model=gemma3_server.model
        ),
    }
    backends = {e.id: OpenAIBackend(e.url, timeout=120, connect_timeout=2) for e in endpoints.values()}
    clock = Clock()
    models = ModelList(endpoints, {"default": ("own", "shared")}, "", True)
    shared = ChainShared(models, clock=clock, cooldown=60.0)
    chain = ModelChain("models", ["own", "shared"], shared, backends.__getitem__)
    options = CallOptions(model="ignored", max_tokens=8, temperature=0.0)

    async def call(text: str) -> tuple[list[Chunk], StreamFinal]:
        chunks = [c async for c in chain.stream_complete([Message.user(text)], options)]
        end = chunks[-1]
        assert isinstance(end, StreamFinal)
        assert any(isinstance(c, TextDelta) and c.text for c in chunks)  # a real answer came
        assert 0 < end.usage.completion_tokens <= 8 and not end.usage.estimated
        return chunks, end

    restarted: LlamaServer | None = None
    try:
        # Both servers up: the first answers.
        chunks, end = await call("Say hello.")
        assert (end.endpoint, end.switched) == ("own", ())
        assert not any(isinstance(c, Fallback) for c in chunks)

        # Killed, as a crash would: the next call moves on to the shared server and says why.
        port = own_server.port
        own_server.kill()
        assert not own_server.running
        chunks, end = await call("Say hello again.")
        assert (end.endpoint, end.model) == ("shared", gemma3_server.model)
        assert len(end.switched) == 1 and end.switched[0].startswith("own: ")
        said = chunks[0]  # the live line, before any of the answer
        assert isinstance(said, Fallback) and (said.endpoint, said.next_endpoint) == ("own", "shared")
        assert not said.cooling and f"127.0.0.1:{port}" in said.reason
        trips = await shared.breaker.trips()
        assert list(trips) == ["own"] and trips["own"].until == clock.now + 60.0

        # Within its cool-down the dead one is not asked: skipped, and said so.
        clock.now += 30
        chunks, end = await call("And once more.")
        assert end.endpoint == "shared" and end.switched[0].startswith("own: skipped, it failed recently")
        assert isinstance(chunks[0], Fallback) and chunks[0].cooling

        # Back on its port after the cool-down: the chain goes back to it and forgets the failure.
        restarted = own_smollm2(tmp_path, port)
        clock.now += 31
        chunks, end = await call("Hello, first one.")
        assert (end.endpoint, end.switched) == ("own", ())
        assert await shared.breaker.trips() == {}
    finally:
        if restarted is not None:
            restarted.stop()
        for backend in backends.values():
            await backend.aclose()
