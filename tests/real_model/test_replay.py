"""Recording and replay: the proxy keeps what a model server streamed, the replay serves it again.

Fast — no llama-server: the recorder is checked against the fake model server through the official
`openai` client, and the real greeting recorded from SmolLM2 is replayed through a live Navi.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import openai
import pytest

from navi.testing.fake_server import FakeModelServer
from navi.testing.replay import Exchange, RecordingProxy, ReplayServer, load_exchanges
from navi.testing.script import Reply
from tests.documents.agent_helpers import TERMINATION, attached_contract
from tests.real_model.helpers import (
    DOCUMENTS_QUESTION,
    DOCUMENTS_SETTINGS,
    EIGHT_TURNS,
    FIXTURES,
    SMALL_WINDOW_COMPRESSION,
    WINDOW,
    compressions_per_turn,
    documents_note_in,
    errors,
    navi_settings,
    real_navi,
    started_navi,
    streamed_text,
)
from tests.server_helpers import frames_until


def _stream_text(base_url: str, text: str, model: str = "gemma4:e2b-it-q8_0") -> str:
    with openai.OpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
        stream = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": text}], stream=True, max_tokens=50
        )
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_proxy_records_streams_and_replay_serves_them_back(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.enqueue(Reply(text="Hello from the first call.", chunk_chars=5), "A second answer.")
    with RecordingProxy(fake_server.url) as proxy:
        first = _stream_text(proxy.base_url, "one")
        second = _stream_text(proxy.base_url, "two")
        with openai.OpenAI(base_url=proxy.base_url, api_key="x", max_retries=0) as client:
            listed = [m.id for m in client.models.list()]
        saved = proxy.save(tmp_path / "rec.jsonl")
    assert (first, second) == ("Hello from the first call.", "A second answer.")
    chat = proxy.chat
    assert [c.request["messages"][-1]["content"] for c in chat] == ["one", "two"]
    assert [c.request["max_tokens"] for c in chat] == [50, 50]  # the body exactly as the client sent it
    assert [c.text() for c in chat] == [first, second]
    assert len(chat[0].events or []) > 5 and chat[0].events[-1] == "data: [DONE]"  # type: ignore[index]
    assert chat[0].offsets_ms == sorted(chat[0].offsets_ms) and not chat[0].aborted
    assert [line for line in saved.read_text().splitlines() if line]  # one JSON object per line
    assert [x.to_json() for x in load_exchanges(saved)] == [x.to_json() for x in proxy.exchanges]

    with ReplayServer(saved) as replay:
        assert _stream_text(replay.base_url, "anything") == first  # order mode ignores the request
        assert _stream_text(replay.base_url, "else") == second
        with openai.OpenAI(base_url=replay.base_url, api_key="x", max_retries=0) as client:
            assert [m.id for m in client.models.list()] == listed
            with pytest.raises(openai.InternalServerError, match="all 2 recorded chat responses are used"):
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": "more"}])
    assert len(replay.requests) == 3 and replay.remaining == 0


def test_replay_matches_by_request_in_match_mode(tmp_path: Path) -> None:
    def recorded(question: str, answer: str) -> Exchange:
        chunk = {"choices": [{"index": 0, "delta": {"content": answer}, "finish_reason": None}]}
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return Exchange(
            method="POST",
            path="/v1/chat/completions",
            request={"model": "m", "messages": [{"role": "user", "content": question}], "stream": True},
            status=200,
            content_type="text/event-stream",
            events=[f"data: {json.dumps(chunk)}", f"data: {json.dumps(end)}", "data: [DONE]"],
        )

    exchanges = [recorded("north?", "Up."), recorded("south?", "Down."), recorded("east?", "Right.")]
    with ReplayServer(exchanges, mode="match") as replay:
        assert _stream_text(replay.base_url, "south?", model="m") == "Down."  # the exact body is not
        assert _stream_text(replay.base_url, "north?", model="m") == "Up."  # recorded: matched by text
        with pytest.raises(openai.InternalServerError, match="'west\\?'"):
            _stream_text(replay.base_url, "west?", model="m")
    assert replay.used == [1, 0] and replay.unmatched[0]["messages"][-1]["content"] == "west?"


def test_proxy_closes_the_upstream_stream_when_the_client_goes_away(fake_server: FakeModelServer) -> None:
    fake_server.enqueue(Reply(text="x" * 400, chunk_chars=1, delay=0.01))
    aborted_before = fake_server.aborted_streams  # the fake server is shared by the whole run
    with RecordingProxy(fake_server.url) as proxy:
        with openai.OpenAI(base_url=proxy.base_url, api_key="x", max_retries=0) as client:
            stream = client.chat.completions.create(
                model="gemma4:e2b-it-q8_0", messages=[{"role": "user", "content": "go"}], stream=True
            )
            next(iter(stream))
            stream.close()  # a stop: the client hangs up mid-answer
        assert proxy.wait_idle(timeout=10)
        assert fake_server.wait_for(lambda: fake_server.aborted_streams == aborted_before + 1, timeout=10)
        started = time.monotonic()
        while not proxy.chat[0].aborted and time.monotonic() - started < 5:
            time.sleep(0.01)
    assert proxy.chat[0].aborted and len(proxy.chat[0].events or []) < 400


@pytest.mark.parametrize("scenario", ["greeting-smollm2", "greeting-gemma3"])
async def test_recorded_greeting_replays_through_navi(scenario: str, tmp_path: Path) -> None:
    recorded = load_exchanges(FIXTURES / f"{scenario}.jsonl")
    chat = [x for x in recorded if x.is_chat]
    model = chat[0].request["model"]
    with ReplayServer(recorded) as replay:
        settings = navi_settings(tmp_path, replay.base_url, model, WINDOW)
        with started_navi(**settings) as navi:
            sid = navi.new_session()
            async with navi.socket(sid) as ws:
                await ws.send(json.dumps({"type": "message", "content": "Hello! How are you today?"}))
                frames = await frames_until(ws, "stream_end", "error")
            await asyncio.to_thread(replay.wait_done, 10)  # naming runs after the turn
    assert errors(frames) == [] and frames[-1]["type"] == "stream_end"
    end = frames[-1]
    assert end["content"] == streamed_text(frames)
    # What Navi showed is what the real model streamed for one of the recorded calls.
    assert end["content"].strip() in [x.text().strip() for x in chat]
    assert replay.unmatched == [] and replay.remaining == 0
    assert [body["messages"][-1]["role"] for body in replay.requests] == [
        x.request["messages"][-1]["role"] for x in chat
    ]


async def test_recorded_small_window_conversation_compresses_a_handful_of_times(tmp_path: Path) -> None:
    """Gemma 3 270M, eight turns in a 4,096-token window (recorded live, with the settings of
    tests/real_model/test_compression.py): its summaries are unusable, Navi's instructions alone
    pass the threshold. Before, Navi condensed a summary and the latest request into themselves
    four times a turn (31 passes)."""
    recorded = load_exchanges(FIXTURES / "compression-gemma3.jsonl")
    model = next(x for x in recorded if x.is_chat).request["model"]
    # Matched by request: background naming may reach the server before or after the next turn.
    with (
        ReplayServer(recorded, mode="match") as replay,
        real_navi(replay.url, model, tmp_path, record=False, **SMALL_WINDOW_COMPRESSION) as real,
    ):
        sid = real.navi.new_session()
        turns = await compressions_per_turn(real, sid, EIGHT_TURNS)
    assert replay.unmatched == []
    assert len(turns) == len(EIGHT_TURNS)
    assert all(len(markers) <= 1 for markers in turns), [len(m) for m in turns]  # post-turn included
    passes = [m["metadata"] for markers in turns for m in markers]
    assert all(p["messages_after"] < p["messages_before"] for p in passes), passes
    assert 1 <= len(passes) <= len(EIGHT_TURNS) - 1, passes  # a handful, not 31


async def test_recorded_documents_turn_replays_through_navi(tmp_path: Path) -> None:
    """SmolLM2 asked about an attached PDF (tests/real_model/test_documents.py records it): Navi
    sends, byte for byte, the request the real model was sent — the question, and after it the
    passage of page 3 quoted — and the turn ends as it did."""
    recorded = load_exchanges(FIXTURES / "documents-smollm2.jsonl")
    model = next(x for x in recorded if x.is_chat).request["model"]
    with ReplayServer(recorded, mode="match") as replay:
        settings = navi_settings(tmp_path, replay.base_url, model, WINDOW, **DOCUMENTS_SETTINGS)
        sid = await attached_contract(settings)
        with real_navi(replay.url, model, tmp_path, record=False, **DOCUMENTS_SETTINGS) as real:
            frames = await real.turn(sid, DOCUMENTS_QUESTION)
            await real.settle(sid)
    assert errors(frames) == [] and frames[-1]["type"] == "stream_end"
    assert replay.unmatched == []
    answer = replay.requests[0]  # then the naming call, which reads the exchange
    found = documents_note_in(answer)
    assert found is not None and found[0] == len(answer["messages"]) - 1
    assert found[1].startswith(DOCUMENTS_QUESTION) and f"[1] {TERMINATION}" in found[1]
