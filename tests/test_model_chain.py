"""Model chains (issue 48, items 2 and 3): fallback before the first token, no switch mid-stream,
the circuit breaker (skip, then back after the cool-down, on an injected clock), and routing —
side calls, a prompt larger than a window, an image — against real HTTP on fake model servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from navi.llm.base import CallOptions, LLMBackend
from navi.llm.breaker import MemoryBreaker, next_trip
from navi.llm.calls import CallLimits, CallStopped
from navi.llm.chain import ChainShared, ModelChain
from navi.llm.chunks import Chunk, Fallback, StreamFinal, TextDelta
from navi.llm.endpoints import ModelEndpoint, ModelList
from navi.llm.errors import BackendHTTPError, StreamInterrupted
from navi.llm.messages import Message
from navi.llm.ollama_backend import OllamaBackend
from navi.llm.openai_backend import OpenAIBackend
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply

BIG = "gemma4:26b-a4b-it-q4_K_M"
SMALL = "gemma4:e2b-it-q8_0"
TEXT_ONLY = "plain:1b"  # no vision, a window of 8,192


class Clock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Chain:
    """A chain over real backends, closed after the test."""

    def __init__(
        self, endpoints: Sequence[ModelEndpoint], *, side: str = "", clock: Clock | None = None
    ) -> None:
        models = ModelList(
            {e.id: e for e in endpoints}, {"default": tuple(e.id for e in endpoints)}, side, True
        )
        self.clock = clock or Clock()
        self.breaker = MemoryBreaker()
        self.shared = ChainShared(models, breaker=self.breaker, clock=self.clock, cooldown=60.0)
        self.backends: dict[str, LLMBackend] = {e.id: _backend(e) for e in endpoints}
        self.chain = ModelChain("models", [e.id for e in endpoints], self.shared, self.backends.__getitem__)

    async def call(self, *messages: Message, kind: Any = "answer", max_tokens: int = 64) -> list[Chunk]:
        options = CallOptions(model="ignored", kind=kind, max_tokens=max_tokens, num_ctx=65536)
        chunks: list[Chunk] = []
        async for chunk in self.chain.stream_complete(list(messages) or [Message.user("hi")], options):
            chunks.append(chunk)
        return chunks

    async def aclose(self) -> None:
        for backend in self.backends.values():
            await backend.aclose()


def _backend(endpoint: ModelEndpoint) -> LLMBackend:
    if endpoint.backend == "ollama":
        return OllamaBackend(endpoint.url, timeout=10, connect_timeout=2)
    return OpenAIBackend(endpoint.url, timeout=10, connect_timeout=2)


def ollama(ident: str, server: FakeModelServer | str, model: str = SMALL, **kw: Any) -> ModelEndpoint:
    url = server if isinstance(server, str) else server.url
    return ModelEndpoint(id=ident, backend="ollama", url=url, model=model, **kw)


def final(chunks: list[Chunk]) -> StreamFinal:
    last = chunks[-1]
    assert isinstance(last, StreamFinal)
    return last


def text(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextDelta))


@pytest.fixture
async def make_chain() -> AsyncIterator[Callable[..., Chain]]:
    made: list[Chain] = []

    def make(*endpoints: ModelEndpoint, **kw: Any) -> Chain:
        made.append(Chain(endpoints, **kw))
        return made[-1]

    yield make
    for chain in made:
        await chain.aclose()


# --- fallback before the first token ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (Reply(status=429, error="rate limited, slow down"), "429"),
        (Reply(status=503, error="the server is overloaded"), "503"),
        (Reply(status=400, error="the prompt exceeds the context length of the model"), "context"),
    ],
    ids=["429", "503", "overflow"],
)
async def test_a_failure_before_the_first_token_moves_to_the_next_endpoint(
    fake_server: FakeModelServer,
    other: FakeModelServer,
    make_chain: Callable[..., Chain],
    reply: Reply,
    said: str,
) -> None:
    fake_server.enqueue(reply)
    other.enqueue(Reply(text="from the second", prompt_tokens=7, completion_tokens=3))
    chain = make_chain(ollama("first", fake_server, BIG), ollama("second", other, SMALL))
    chunks = await chain.call()
    end = final(chunks)
    assert text(chunks) == "from the second"
    assert (end.endpoint, end.model) == ("second", SMALL)
    assert len(end.switched) == 1 and end.switched[0].startswith("first: ") and said in end.switched[0]
    assert [r.model for r in fake_server.requests] == [BIG] and [r.model for r in other.requests] == [SMALL]
    trips = await chain.breaker.trips()
    if said == "context":  # the prompt's fault: the endpoint is not skipped afterwards
        assert trips == {}
    else:
        assert list(trips) == ["first"] and trips["first"].until == chain.clock.now + 60


async def test_an_unreachable_server_and_a_missing_model_move_on_too(
    fake_server: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    chain = make_chain(
        ollama("down", dead), ollama("unpulled", fake_server, "missing:7b"), ollama("ok", fake_server, SMALL)
    )
    fake_server.enqueue("here")
    chunks = await chain.call()
    end = final(chunks)
    assert text(chunks) == "here" and end.endpoint == "ok"
    assert [s.split(":")[0] for s in end.switched] == ["down", "unpulled"]
    assert "missing:7b" in end.switched[1]
    # Each switch is said as it happens, before the next endpoint's first chunk (the live line).
    said = [c for c in chunks if isinstance(c, Fallback)]
    assert [(f.endpoint, f.next_endpoint, f.cooling) for f in said] == [
        ("down", "unpulled", False),
        ("unpulled", "ok", False),
    ]
    assert "cannot reach" in said[0].reason and "missing:7b" in said[1].reason
    assert chunks[:2] == said  # nothing of the answer came before them


async def test_every_endpoint_failing_raises_the_last_error_naming_the_others(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    fake_server.enqueue(Reply(status=503, error="first is overloaded"))
    other.enqueue(Reply(status=502, error="second's gateway broke"))
    chain = make_chain(ollama("first", fake_server), ollama("second", other))
    with pytest.raises(BackendHTTPError) as caught:
        await chain.call()
    assert caught.value.status == 502
    assert "second's gateway broke" in str(caught.value) and "first: " in str(caught.value)


async def test_a_bad_request_is_not_passed_on(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    fake_server.enqueue(Reply(status=400, error="malformed tool schema"))
    chain = make_chain(ollama("first", fake_server), ollama("second", other))
    with pytest.raises(BackendHTTPError):
        await chain.call()
    assert other.requests == [] and await chain.breaker.trips() == {}


# --- mid-stream: no switch ------------------------------------------------------------------------
async def test_a_failure_mid_stream_keeps_what_streamed_and_does_not_switch(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    fake_server.enqueue(Reply(text="the first half and the second half", chunk_chars=5, error_after=3))
    chain = make_chain(ollama("first", fake_server), ollama("second", other))
    seen: list[Chunk] = []
    with pytest.raises(StreamInterrupted):
        options = CallOptions(model="x", max_tokens=64)
        async for chunk in chain.chain.stream_complete([Message.user("hi")], options):
            seen.append(chunk)
    assert text(seen) == "the first half " and other.requests == []  # three pieces of five
    assert list(await chain.breaker.trips()) == ["first"]  # the next call starts elsewhere


# --- the circuit breaker --------------------------------------------------------------------------
async def test_a_failed_endpoint_is_skipped_for_its_cool_down_then_tried_again(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    clock = Clock()
    chain = make_chain(ollama("first", fake_server), ollama("second", other), clock=clock)
    fake_server.enqueue(Reply(status=503, error="down for a moment"))
    assert final(await chain.call()).endpoint == "second"
    clock.now += 30  # within the cool-down: the first is not asked at all
    end = final(await chain.call())
    assert end.endpoint == "second" and len(fake_server.requests) == 1
    assert len(end.switched) == 1 and end.switched[0].startswith("first: skipped, it failed recently")
    assert "down for a moment" in end.switched[0]
    assert isinstance(chunks := (await chain.call()), list)  # and said first, marked cooling
    assert isinstance(chunks[0], Fallback) and (chunks[0].endpoint, chunks[0].cooling) == ("first", True)
    assert chunks[0].next_endpoint == "second" and "down for a moment" in chunks[0].reason
    clock.now += 31  # the cool-down is over: the first answers again, and its trip is cleared
    fake_server.enqueue("back")
    chunks = await chain.call()
    assert final(chunks).endpoint == "first" and text(chunks) == "back"
    assert await chain.breaker.trips() == {}


async def test_a_second_failure_in_a_row_doubles_the_cool_down() -> None:
    first = next_trip(None, "e", "503", 100.0, 60.0)
    second = next_trip(first, "e", "503 again", 200.0, 60.0)
    assert (first.failures, first.until) == (1, 160.0)
    assert (second.failures, second.until, second.reason) == (2, 320.0, "503 again")
    many = first
    for _ in range(10):
        many = next_trip(many, "e", "x", 0.0, 60.0)
    assert many.until == 60.0 * 16  # capped


async def test_when_every_endpoint_cools_down_they_are_still_tried_in_order(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(ollama("first", fake_server), ollama("second", other))
    await chain.breaker.failed("first", "x", chain.clock.now, 60)
    await chain.breaker.failed("second", "y", chain.clock.now, 60)
    fake_server.enqueue("still here")
    chunks = await chain.call()
    assert final(chunks).endpoint == "first" and text(chunks) == "still here"
    assert not any(isinstance(c, Fallback) for c in chunks)  # nothing was passed over


# --- routing --------------------------------------------------------------------------------------
async def test_side_calls_go_to_the_side_model_and_answers_do_not(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(ollama("big", fake_server, BIG), ollama("small", other, SMALL), side="small")
    assert final(await chain.call(kind="naming")).endpoint == "small"
    assert final(await chain.call(kind="extraction")).endpoint == "small"
    assert final(await chain.call(kind="answer")).endpoint == "big"
    assert len(other.requests) == 2 and len(fake_server.requests) == 1


async def test_a_prompt_larger_than_the_first_window_goes_to_one_that_holds_it(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(ollama("short", fake_server, window=1024), ollama("long", other, window=32768))
    long_question = Message.user("word " * 3000)
    assert final(await chain.call(long_question)).endpoint == "long"
    assert fake_server.requests == []
    assert final(await chain.call(Message.user("short question"))).endpoint == "short"


async def test_an_image_goes_to_an_endpoint_with_vision(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(
        ollama("text", fake_server, TEXT_ONLY, capabilities=frozenset({"tools"})),
        ollama("eyes", other, SMALL, capabilities=frozenset({"tools", "vision"})),
    )
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
    assert final(await chain.call(Message.user("what is this?", images=[pixel]))).endpoint == "eyes"
    assert final(await chain.call(Message.user("plain text"))).endpoint == "text"


async def test_the_chain_reports_the_largest_window_and_learns_each(
    fake_server: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(ollama("a", fake_server, TEXT_ONLY), ollama("b", fake_server, SMALL, window=20000))
    info = await chain.chain.model_info("ignored")
    assert info.context_length == 20000
    assert chain.shared.windows["a"] == 8192


# --- bounds: each endpoint its own first-token time; a stop reaches the one streaming ---------------
async def test_a_first_token_timeout_moves_on_with_the_next_endpoint_given_its_own_time(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(ollama("slow", fake_server), ollama("quick", other))
    fake_server.enqueue(Reply(text="too late", first_delay=15))
    other.enqueue("in time")
    bounded = chain.chain.bounded(CallLimits(first_token=6.0, idle=30.0), asyncio.Event())
    options = CallOptions(model="x", max_tokens=16)
    chunks = [c async for c in bounded.stream_complete([Message.user("hi")], options)]
    end = final(chunks)
    assert end.endpoint == "quick" and text(chunks) == "in time"
    assert "slow: " in end.switched[0] and "within 6 s" in end.switched[0]
    assert len(fake_server.requests) == 1 and list(await chain.breaker.trips()) == ["slow"]


async def test_a_stop_closes_the_streaming_endpoint_and_asks_no_other(
    fake_server: FakeModelServer, other: FakeModelServer, make_chain: Callable[..., Chain]
) -> None:
    chain = make_chain(ollama("first", fake_server), ollama("second", other))
    fake_server.enqueue(Reply(text="x" * 400, chunk_chars=1, delay=0.05))
    stop = asyncio.Event()
    bounded = chain.chain.bounded(CallLimits(first_token=30.0, idle=30.0), stop)
    seen: list[Chunk] = []
    with pytest.raises(CallStopped):
        async for chunk in bounded.stream_complete([Message.user("hi")], CallOptions(model="x")):
            seen.append(chunk)
            stop.set()
    assert len(seen) == 1 and other.requests == []
    assert fake_server.wait_for(lambda: fake_server.aborted_streams >= 1, timeout=30)  # a loaded machine
    assert await chain.breaker.trips() == {}  # a stop is nobody's failure
