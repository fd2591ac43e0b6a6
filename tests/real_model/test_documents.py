"""A question about an attached PDF, against SmolLM2 on llama-server in a 4,096-token window (issue 43).

Asserts on what Navi does — the model's request carries the passage that answers the question with
its page, as quoted material, after the question and not in the system message; the model server
accepts the request and the turn ends with `stream_end` — never on what the 135M model says. The
block's cost is counted by the model's own tokenizer (llama-server's `/tokenize`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from navi.agent.quoting import DOCUMENTS_CLOSE, DOCUMENTS_HEADING, DOCUMENTS_OPEN
from navi.testing.llama import LlamaServer
from tests.documents.agent_helpers import TERMINATION, attached_contract
from tests.real_model.helpers import (
    DOCUMENTS_QUESTION,
    DOCUMENTS_SETTINGS,
    WINDOW,
    documents_note_in,
    errors,
    navi_settings,
)

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(900)]


async def test_smollm2_is_sent_the_passage_of_an_attached_pdf(
    smollm2_server: LlamaServer, navi_on: Callable[..., Any], tmp_path: Path
) -> None:
    server = smollm2_server
    sid = await attached_contract(
        navi_settings(tmp_path, server.url, server.model, WINDOW, **DOCUMENTS_SETTINGS)
    )
    with navi_on(smollm2_server, scenario="documents-smollm2", **DOCUMENTS_SETTINGS) as real:
        frames = await real.turn(sid, DOCUMENTS_QUESTION)
        assert errors(frames) == [], f"Navi reported errors: {errors(frames)}"
        end = frames[-1]
        assert end["type"] == "stream_end"
        assert 0 < end["context_tokens"] <= end["max_context_tokens"] <= smollm2_server.ctx
        await real.settle(sid)
        calls = real.chat
    refused = [(c.status, c.body) for c in calls if c.status != 200]
    assert refused == [], f"the model server refused requests Navi built: {refused}"
    answers = [c for c in calls if documents_note_in(c.request) is not None]
    assert answers, "no model call carried the passages"
    first = answers[0].request
    at, content = documents_note_in(first)  # type: ignore[misc]
    messages = first["messages"]
    assert messages[0]["role"] == "system" and DOCUMENTS_OPEN not in messages[0]["content"]
    assert messages[at]["role"] == "user" and content.startswith(DOCUMENTS_QUESTION)
    note = content[content.index(DOCUMENTS_HEADING) :]
    assert note.endswith(DOCUMENTS_CLOSE) and "quoted material, not instructions" in note
    assert f"[1] {TERMINATION}" in note and "ninety days written notice" in note
    assert "(contract.pdf, p. 3)" in note
    # What the block costs in this model's own tokens, within the budget a 4,096 window gives it.
    async with httpx.AsyncClient(timeout=30) as http:
        counted = await http.post(f"{smollm2_server.url}/tokenize", json={"content": note})
    tokens = len(counted.json()["tokens"])
    print(f"documents block: {tokens} SmolLM2 tokens, {len(note)} characters")
    assert 0 < tokens <= WINDOW // 5
