"""A live Navi on its `openai` backend in front of a real model server (or a replay of one).

Navi talks to the model through a `RecordingProxy`, so every test can look at exactly what Navi
sent and what came back, and a run with `NAVI_RECORD_REAL_MODEL=1` (or `record=True`) saves those
exchanges as a fixture the fast tests replay.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from navi.agent.quoting import DOCUMENTS_HEADING
from navi.config import load_settings
from navi.testing.replay import Exchange, RecordingProxy
from tests.server_helpers import LiveNavi

# Read once at import: the autouse `isolated_env` fixture strips NAVI_* variables before each test.
RECORD = os.environ.get("NAVI_RECORD_REAL_MODEL", "") not in ("", "0", "false")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real_model"
WINDOW = 4096  # tokens; small on purpose: small windows are where real users' turns broke
# A 270M model on 2 CPU cores writes 8-50 tokens/s and often runs to its cap: the default answer
# cap (2,048) would cost minutes per turn. A lower one keeps the suite's time bounded — and the cap
# being honoured is itself part of what these tests check.
ANSWER_CAP = 96


def navi_settings(tmp_path: Path, base_url: str, model: str, window: int, **overrides: Any) -> dict[str, Any]:
    """Settings for a Navi whose only model is the OpenAI-compatible server at `base_url`."""
    settings: dict[str, Any] = {
        "db_path": str(tmp_path / "navi.db"),
        "session_files_dir": str(tmp_path / "session_files"),
        "tools_dir": str(tmp_path / "tools"),
        "default_llm_backend": "openai",
        "openai_base_url": base_url,
        "openai_default_model": model,
        "ollama_num_ctx": window,
        "llm_max_tokens_answer": ANSWER_CAP,
        "log_level": "WARNING",
        "navi_approval_mode": "auto",  # no person answers approvals here
        "planning_enabled": False,
    }
    settings.update(overrides)
    return settings


@contextmanager
def started_navi(**settings: Any) -> Iterator[LiveNavi]:
    navi = LiveNavi(load_settings(**settings))
    navi.server.start()
    try:
        yield navi
    finally:
        navi.server.stop()


@dataclass
class RealNavi:
    navi: LiveNavi
    proxy: RecordingProxy
    window: int

    @property
    def chat(self) -> list[Exchange]:
        return self.proxy.chat

    async def settle(self, session_id: str) -> None:
        """Wait for the session's post-turn work (naming, a compression after the answer) as a
        person reading the answer would: a new message abandons it, so a test that types at once
        never sees a compression that runs after an answer."""
        agent = self.navi.runtime.agent
        for _ in range(30_000):
            if session_id not in agent.active:
                break
            await asyncio.sleep(0.01)
        await asyncio.to_thread(self.proxy.wait_idle, 120)

    async def turn(self, session_id: str, text: str) -> list[dict[str, Any]]:
        """Send one message and collect its run's frames up to `stream_end` or `error`.

        A new connection first gets the replay of a run still doing its post-turn work (naming, a
        summary); those frames belong to the previous turn and are skipped by their `run_id`.
        """
        async with self.navi.socket(session_id) as ws:
            await ws.send(json.dumps({"type": "message", "content": text}))
            ours: str | None = None
            got: list[dict[str, Any]] = []
            for _ in range(100_000):
                frame = json.loads(await ws.recv())
                if frame["type"] == "session_updated":
                    continue
                if frame["type"] == "stream_start" and frame.get("message", {}).get("content") == text:
                    ours = frame["run_id"]
                if "run_id" in frame and frame["run_id"] != ours:
                    continue  # the replay of an earlier run
                got.append(frame)
                if frame["type"] in ("stream_end", "error"):
                    return got
            raise AssertionError(f"no end of the turn: {[f['type'] for f in got][-20:]}")


@contextmanager
def real_navi(
    upstream: str,
    model: str,
    tmp_path: Path,
    *,
    window: int = WINDOW,
    scenario: str | None = None,
    record: bool | None = None,
    **overrides: Any,
) -> Iterator[RealNavi]:
    """Navi → recording proxy → the model server at `upstream` (its root URL, without /v1).

    When recording, the exchanges are written to tests/fixtures/real_model/<scenario>.jsonl after
    the block ends without an error and every background call (naming, memory) has finished.
    """
    record = RECORD if record is None else record
    if record and not scenario:
        raise ValueError("recording needs a scenario name")
    proxy = RecordingProxy(upstream).start()
    try:
        settings = navi_settings(tmp_path, proxy.base_url, model, window, **overrides)
        with started_navi(**settings) as navi:
            yield RealNavi(navi, proxy, window)
            if not proxy.wait_idle(timeout=120):
                raise AssertionError(f"model calls still running after the test: {proxy.inflight}")
    finally:
        proxy.stop()
    if record and scenario:
        proxy.save(FIXTURES / f"{scenario}.jsonl")


# A question about the contract of tests/documents/agent_helpers.py, attached to the session, with
# the built-in embedder (tests/real_model/test_documents.py records it as documents-smollm2.jsonl).
DOCUMENTS_QUESTION = "How much notice do I need to terminate the agreement?"
# The answer's cap as when it was recorded: the replay matches requests byte for byte.
DOCUMENTS_SETTINGS: dict[str, Any] = {"memory_embed_model": "builtin", "llm_max_tokens_answer": 256}


def documents_note_in(request: Any) -> tuple[int, str] | None:
    """The index and content of a chat request's message holding the documents block, if any."""
    messages = request.get("messages", []) if isinstance(request, dict) else []
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m.get("content"), str) else ""
        if DOCUMENTS_HEADING in content:
            return i, content
    return None


# Eight turns in a 4,096-token window whose compression threshold (half of it) is below what Navi's
# own instructions take, with Gemma 3 270M, which cannot summarise: the conversation in which Navi
# condensed a context it could not shrink again and again (31 passes in eight turns; recorded in
# fixtures/real_model/compression-gemma3.jsonl).
EIGHT_TURNS = [
    "My sister Ingrid lives in Tromsø and works as a marine biologist studying cod.",
    "I keep three raspberry bushes and a plum tree in my garden behind the house.",
    "The project I lead at work is called Lighthouse and ships in March next year.",
    "My bicycle is a green steel touring bike I bought second hand in 2019.",
    "On Sundays I bake sourdough bread with rye flour and caraway seeds.",
    "My neighbour Tor repairs old radios in his garage on weekday evenings.",
    "I am learning to play the cello, slowly, with a teacher called Maren.",
    "Tell me one thing you remember about my sister.",
]
SMALL_WINDOW_COMPRESSION: dict[str, Any] = {
    "planning_enabled": False,
    "llm_max_tokens_answer": 96,
    "llm_max_tokens_summary": 160,
    "context_keep_recent": 1,
    "context_compression_threshold": 0.5,
}


async def compressions_per_turn(
    real: RealNavi, session_id: str, texts: list[str]
) -> list[list[dict[str, Any]]]:
    """Send `texts` one turn each, each once the turn before has done its post-turn work (as a person
    reading the answers); then the compression markers of the display history grouped by the turn
    they happened in (before, during or after its answer: a turn's own message is stored before
    anything it compresses)."""
    for text in texts:
        frames = await real.turn(session_id, text)
        assert frames[-1]["type"] == "stream_end", errors(frames)
        assert frames[-1]["context_tokens"] <= frames[-1]["max_context_tokens"]
        await real.settle(session_id)  # read before the next message: the compression after an answer
    with real.navi.client() as http:
        messages = http.get(f"/sessions/{session_id}").json()["messages"]
    turns: list[list[dict[str, Any]]] = []
    for message in messages:
        if message["role"] == "user" and not message.get("is_summary"):
            turns.append([])
        elif message.get("is_compression") and turns:
            turns[-1].append(message)
    return turns


def errors(frames: list[dict[str, Any]]) -> list[str]:
    return [str(f.get("message")) for f in frames if f["type"] == "error"]


def streamed_text(frames: list[dict[str, Any]]) -> str:
    return "".join(f["delta"] for f in frames if f["type"] == "stream_delta")


def call_cap(request: Any) -> int | None:
    """The completion-token cap a chat request carries, if any."""
    if not isinstance(request, dict):
        return None
    for key in ("max_completion_tokens", "max_tokens", "n_predict"):
        if isinstance(request.get(key), int):
            return int(request[key])
    return None


def usage(exchange: Exchange) -> dict[str, int]:
    for chunk in reversed(exchange.data()):
        if isinstance(chunk, dict) and chunk.get("usage"):
            return dict(chunk["usage"])
    return {}


def check_calls(calls: list[Exchange], window: int) -> None:
    """Every request accepted, capped, and within the window with its cap."""
    assert calls, "Navi never called the model"
    refused = [(c.status, str(c.body)[:300]) for c in calls if c.status != 200 and not c.aborted]
    assert refused == [], f"the model server refused requests Navi built: {refused}"
    for call in calls:
        cap = call_cap(call.request)
        assert cap is not None and 0 < cap <= window, (
            f"uncapped call: {call.request.get('messages', [])[-1:]}"
        )
        counted = usage(call)
        if counted and not call.aborted:
            assert counted["prompt_tokens"] + counted["completion_tokens"] <= window, counted
            assert counted["completion_tokens"] <= cap, (counted, cap)
