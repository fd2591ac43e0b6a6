"""What small real models do to a turn, and Navi surviving it: planning, memory extraction, naming,
stop in every phase, a failed turn followed by a good one (compression in a small window:
test_compression.py).

Every test asserts on Navi's behaviour — the server accepted every request Navi built (Gemma 3's
template refuses anything but strict alternation), every call was capped, no prompt plus its cap
went past the window, stop was quick — never on the model's wording.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest

from navi.llm.calls import CallLimits
from navi.testing.llama import LlamaServer
from navi.testing.replay import Exchange
from tests.real_model.helpers import RealNavi, call_cap, check_calls, errors

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]

STOP_LATENCY = 1.0  # seconds from the stop request to `stream_stopped`


def system_messages(call: Exchange) -> int:
    return sum(1 for m in call.request.get("messages", []) if m.get("role") == "system")


async def turn_stopping(
    real: RealNavi, sid: str, text: str, when: Callable[[dict[str, Any]], bool]
) -> tuple[list[dict[str, Any]], float]:
    """Send a message, press stop when a frame matches `when`; the latency to `stream_stopped`."""
    frames: list[dict[str, Any]] = []
    stopped_at = None
    # A socket opened while the previous run is still finishing (its post-turn writes) follows and
    # replays that run first; wait until it is over, so every frame read here is this turn's.
    async with httpx.AsyncClient(base_url=real.navi.url, headers=real.navi.auth) as http:
        for _ in range(600):
            if not (await http.get(f"/sessions/{sid}")).json()["active"]:
                break
            await asyncio.sleep(0.1)
    async with real.navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "message", "content": text}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 600))
            frames.append(frame)
            if stopped_at is None and when(frame):
                stopped_at = time.perf_counter()
                async with httpx.AsyncClient(base_url=real.navi.url, headers=real.navi.auth) as http:
                    assert (await http.post(f"/sessions/{sid}/stop")).json()["ok"]
            if frame["type"] in ("stream_end", "stream_stopped", "error") and "seq" in frame:
                break
    assert stopped_at is not None, f"the phase never came: {[f['type'] for f in frames]}"
    return frames, time.perf_counter() - stopped_at


async def test_planning_then_an_answer(smollm2_server: LlamaServer, navi_on: Any) -> None:
    with navi_on(smollm2_server, planning_enabled=True, llm_max_tokens_planning=64) as real:
        sid = real.navi.new_session()
        frames = await real.turn(sid, "Make a short checklist for moving house, then tell me the first step.")
        assert errors(frames) == [] and frames[-1]["type"] == "stream_end"
        phases = [f["phase"] for f in frames if f["type"] == "status"]
        assert phases[:1] == ["preparing"] and "planning" in phases and "waiting" in phases
        real.proxy.wait_idle(timeout=120)
        calls = real.chat
    check_calls(calls, smollm2_server.ctx)
    planning = calls[0]
    assert call_cap(planning.request) == 64  # the planning call carries its own cap
    assert all(system_messages(c) == 1 for c in calls)


async def test_memory_is_taken_only_from_what_the_person_said(
    smollm2_server: LlamaServer, navi_on: Any
) -> None:
    with navi_on(smollm2_server) as real:
        sid = real.navi.new_session()
        said = "Hi, my name is Ada Lovelace and I live in Bergen. I have a cat called Turnip."
        frames = await real.turn(sid, said)
        assert frames[-1]["type"] == "stream_end"
        real.proxy.wait_idle(timeout=120)
        real.navi.runtime.extractor.stale = timedelta(0)  # read the session now, not once it is idle
        async with httpx.AsyncClient(base_url=real.navi.url, headers=real.navi.auth, timeout=600) as http:
            report = (await http.post("/memory/extract")).json()
            facts = (await http.get("/memory/facts")).json()
            name = (await http.get(f"/sessions/{sid}")).json()["name"]
        assert report["sessions"] == 1 and report["failed"] == []
        calls = real.chat
    check_calls(calls, smollm2_server.ctx)
    spoken = set(re.findall(r"\w+", said.lower()))
    for fact in facts:  # whatever the model made of it, nothing the person did not say
        assert set(re.findall(r"\w+", fact["value"].lower())) <= spoken, fact
    assert name and len(name) <= 60 and not name.lstrip().startswith(("-", "*", "1.", '"'))


async def test_stop_reaches_every_phase(smollm2_server: LlamaServer, navi_on: Any) -> None:
    # Short caps: every phase is reached within them, and the last turn, which runs to its end,
    # stays short.
    caps = {"llm_max_tokens_planning": 32, "llm_max_tokens_answer": 32}
    with navi_on(smollm2_server, planning_enabled=True, **caps) as real:
        sid = real.navi.new_session()
        phases: dict[str, Callable[[dict[str, Any]], bool]] = {
            "planning": lambda f: f["type"] == "status" and f["phase"] == "planning",
            "prompt read": lambda f: f["type"] == "status" and f["phase"] == "waiting",
            "streaming": lambda f: f["type"] == "stream_delta",
        }
        latencies = {}
        for name, when in phases.items():
            frames, latency = await turn_stopping(
                real, sid, "Write a long story about a lighthouse keeper.", when
            )
            assert frames[-1]["type"] == "stream_stopped", (name, frames[-1])
            latencies[name] = latency
        assert all(latency < STOP_LATENCY for latency in latencies.values()), latencies
        # The session is usable at once after a stop.
        frames = await real.turn(sid, "Just say hello.")
        assert frames[-1]["type"] == "stream_end" and errors(frames) == []
        real.proxy.wait_idle(timeout=120)
        calls = real.chat
    assert sum(c.aborted for c in calls) >= 2  # the planning and answer requests were cut
    check_calls(calls, smollm2_server.ctx)


async def test_a_failed_turn_then_a_good_one(smollm2_server: LlamaServer, navi_on: Any) -> None:
    with navi_on(smollm2_server) as real:
        sid = real.navi.new_session()
        agent = real.navi.runtime.agent
        normal = agent.config.limits
        agent.config.limits = CallLimits(first_token=0.05, idle=normal.idle)  # no model answers that fast
        failed = await real.turn(sid, "What is the capital of Norway?")
        assert failed[-1]["type"] == "error" and "no output within" in failed[-1]["message"]
        agent.config.limits = normal
        frames = await real.turn(sid, "What is the capital of Norway?")
        assert frames[-1]["type"] == "stream_end" and errors(frames) == []
        real.proxy.wait_idle(timeout=120)
        with real.navi.client() as http:
            info = http.get(f"/sessions/{sid}").json()
        calls = real.chat
    assert info["name"], "a session whose first turn failed is named after the good one"
    assert [m["role"] for m in info["messages"]].count("user") == 2  # nothing lost
    check_calls([c for c in calls if not c.aborted], smollm2_server.ctx)
