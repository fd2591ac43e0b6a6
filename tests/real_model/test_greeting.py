"""A greeting over the WebSocket, against real small models on llama-server.

Asserts on what Navi does — the turn ends with `stream_end`, no error frame, every model call was
accepted by the model's own chat template and capped, the context fits the window — never on what
the model says.
"""

from __future__ import annotations

import pytest

from tests.real_model.helpers import call_cap, errors, streamed_text

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(600)]


@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
async def test_greeting_ends_with_stream_end_and_no_error(
    model: str, request: pytest.FixtureRequest, navi_on: object
) -> None:
    server = request.getfixturevalue(f"{model}_server")
    with navi_on(server, scenario=f"greeting-{model}") as real:  # type: ignore[operator]
        sid = real.navi.new_session()
        frames = await real.turn(sid, "Hello! How are you today?")
        end = frames[-1]
        assert errors(frames) == [], f"Navi reported errors: {errors(frames)}"
        assert end["type"] == "stream_end"
        assert end["content"] == streamed_text(frames)  # the answer shown is the answer streamed
        assert 0 < end["context_tokens"] <= end["max_context_tokens"] <= server.ctx
        real.proxy.wait_idle(timeout=120)  # naming runs after the turn
        calls = real.chat
    assert calls, "Navi never called the model"
    refused = [(c.status, c.body) for c in calls if c.status != 200]
    assert refused == [], f"the model server refused requests Navi built: {refused}"
    uncapped = [c.request.get("messages", [])[-1:] for c in calls if call_cap(c.request) is None]
    assert uncapped == [], f"model calls without a token cap: {uncapped}"
    assert all(0 < (call_cap(c.request) or 0) <= server.ctx for c in calls)
