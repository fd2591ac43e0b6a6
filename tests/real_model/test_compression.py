"""A long conversation in a small window, on Gemma 3 270M: compression with a real model.

Six turns in a 4,096-token window whose compression threshold (half of it) is below what Navi's
own instructions take, and a model that cannot summarise well. Gemma 3's template refuses anything
but strict alternation: after each compression the summary (a user message) meets the next user
message, and the memory, plan and notes all belong to one system message. Navi must compress the
conversation more than once, keep every request inside the window, and never condense again and
again what cannot shrink. In a module of its own so a parallel run gives Gemma's tests a worker of
their own (tests/conftest.py, `_GROUPS`).
"""

from __future__ import annotations

from typing import Any

import pytest

from navi.testing.llama import LlamaServer
from tests.real_model.helpers import EIGHT_TURNS, SMALL_WINDOW_COMPRESSION, check_calls, compressions_per_turn

# Five facts and the question: two compressions and more in a live run (each turn after the first
# compression reads its whole prompt again: about half a minute of one core per turn). The replay
# test (test_replay.py) serves the eight turns recorded, with these settings, as
# fixtures/real_model/compression-gemma3.jsonl (`record=True` on eight turns records it again).
SIX_TURNS = [*EIGHT_TURNS[:5], EIGHT_TURNS[-1]]

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]


async def test_a_long_conversation_compresses_within_a_small_window_and_never_again_and_again(
    gemma3_server: LlamaServer, navi_on: Any
) -> None:
    # Memory is taken from each turn as it is folded away (its own call, after the answer); Gemma
    # writes to whatever cap it is given, so a short one here (the test is about the window).
    with navi_on(gemma3_server, **SMALL_WINDOW_COMPRESSION, llm_max_tokens_extraction=48) as real:
        sid = real.navi.new_session()
        turns = await compressions_per_turn(real, sid, SIX_TURNS)  # each within the window
        calls = real.chat
        with real.navi.client() as http:
            context = http.get(f"/sessions/{sid}/context").json()
    check_calls(calls, gemma3_server.ctx)
    passes = [m["metadata"] for markers in turns for m in markers]
    assert len(passes) >= 2, f"only {len(passes)} compressions in {len(SIX_TURNS)} turns"
    assert any(m.get("is_summary") for m in context["messages"])
    # Once a turn at most, each shrinking the context: a handful in all, not one per call.
    assert all(len(markers) <= 1 for markers in turns), [len(m) for m in turns]
    assert all(p["messages_after"] < p["messages_before"] for p in passes), passes
    assert len(passes) <= len(SIX_TURNS) - 1, passes
