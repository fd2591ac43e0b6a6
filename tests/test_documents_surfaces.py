"""Documents over Navi's other surfaces (issue 43): the MCP server's `search_documents` (per user, over
streamable HTTP with each user's token) and the OpenAI-compatible API's collection, chosen by the
`X-Navi-Collection` header or the model name's `+docs=NAME` suffix, on a live Navi whose model is
the fake model server (which records what Navi sent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import openai
import pytest

from navi.agent.quoting import DOCUMENTS_HEADING, DOCUMENTS_OPEN
from navi.compose import build_runtime
from navi.config import load_settings
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import ScriptRequest
from tests.documents.agent_helpers import TERMINATION, contract_pdf, index
from tests.server_helpers import LiveNavi, live_navi, use_script
from tests.test_mcp_server import folder_settings, http_session, structured, text_of

SECRET = "The vault code is 7341 and the vault stands in the cellar."


async def prepare(tmp_path: Path, fake: FakeModelServer) -> dict[str, Any]:
    """Before Navi starts: users alice and bob; the owner's "Work" (the contract) and alice's
    "Privé" (the vault) collections, indexed. Their tokens and ids."""
    runtime = await build_runtime(load_settings(**folder_settings(tmp_path, fake)), seed_tools=False)
    try:
        tokens = {name: (await runtime.users.add(name))[1] for name in ("alice", "bob")}
        store = runtime.retrieval.store
        work = await store.create_collection("local", "Work")
        await index(store, "local", work.id, "contract.pdf", contract_pdf())
        private = await store.create_collection("alice", "Privé")
        await index(store, "alice", private.id, "vault.txt", SECRET.encode())
    finally:
        await runtime.aclose()
    return {"tokens": tokens, "work": work.id, "private": private.id}


def note_of(request: ScriptRequest) -> str | None:
    for m in request.messages:
        before, found, after = (m.content or "").partition(DOCUMENTS_HEADING)
        if found:
            return found + after
    return None


async def test_mcp_search_documents_is_per_user(tmp_path: Path, fake_server: FakeModelServer) -> None:
    ids = await prepare(tmp_path, fake_server)
    tokens = ids["tokens"]
    with live_navi(tmp_path, fake_server) as navi:
        async with http_session(navi, navi.token) as owner:
            found = structured(
                await owner.call_tool("search_documents", {"query": "terminate notice", "limit": 3})
            )["passages"]
            assert found[0]["citation"] == TERMINATION and found[0]["page"] == 3
            assert "ninety days written notice" in found[0]["text"]
            assert found[0]["document"] == "contract.pdf" and found[0]["collection_id"] == ids["work"]
            scoped = structured(
                await owner.call_tool("search_documents", {"query": "notice", "collection": "work"})
            )
            assert [p["citation"] for p in scoped["passages"]] == [TERMINATION]
            assert structured(await owner.call_tool("search_documents", {"query": "vault code"})) == {
                "passages": []
            }
            theirs = await owner.call_tool(
                "search_documents", {"query": "vault", "collection": ids["private"]}
            )
            assert theirs.is_error and "no collection" in text_of(theirs)
        async with http_session(navi, tokens["alice"]) as alice:
            mine = structured(await alice.call_tool("search_documents", {"query": "vault code"}))["passages"]
            assert [p["citation"] for p in mine] == ["vault.txt"] and "7341" in mine[0]["text"]
            by_name = structured(
                await alice.call_tool("search_documents", {"query": "cellar", "collection": "Privé"})
            )
            assert len(by_name["passages"]) == 1
            assert structured(await alice.call_tool("search_documents", {"query": "ninety days notice"})) == {
                "passages": []
            }
        async with http_session(navi, tokens["bob"]) as bob:
            for query in ("vault code", "terminate notice"):
                assert structured(await bob.call_tool("search_documents", {"query": query})) == {
                    "passages": []
                }


def sdk(navi: LiveNavi, token: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{navi.url}/v1", api_key=token or navi.token, max_retries=0)


QUESTION = [{"role": "user", "content": "How much notice do I need to terminate the agreement?"}]


@pytest.mark.parametrize(
    ("model", "headers"),
    [
        ("secretary+docs=Work", {}),
        ("secretary", {"X-Navi-Collection": "Work"}),
        ("secretary", {"X-Navi-Collection": "work"}),  # names match without case
    ],
)
async def test_openai_api_turn_reads_the_collection_it_names(
    tmp_path: Path, fake_server: FakeModelServer, model: str, headers: dict[str, str]
) -> None:
    await prepare(tmp_path, fake_server)
    with live_navi(tmp_path, fake_server) as navi, sdk(navi) as client:
        script = use_script(fake_server)
        script.turn("Ninety days (contract.pdf, p. 3).", "I cannot tell.")
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=QUESTION, extra_headers=headers
        )
        answer = raw.parse()
        assert answer.choices[0].message.content == "Ninety days (contract.pdf, p. 3)."
        sid = raw.headers["X-Session-Id"]
        # The collection was this turn's, not the session's: the next request in it reads nothing.
        client.chat.completions.create(
            model="secretary", messages=QUESTION, extra_headers={"X-Session-Id": sid}
        )
        with navi.client() as http:
            stored = http.get(f"/sessions/{sid}").json()["messages"]
    first, second = script.of_kind("turn")
    note = note_of(first)
    assert note is not None and f"[1] {TERMINATION}" in note and "ninety days written notice" in note
    assert DOCUMENTS_OPEN not in first.system_text
    assert note_of(second) is None
    assert stored[0]["metadata"]["collections"] and "collections" not in stored[2]["metadata"]


async def test_openai_api_refuses_a_collection_that_is_not_the_users(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    ids = await prepare(tmp_path, fake_server)
    with live_navi(tmp_path, fake_server) as navi:
        script = use_script(fake_server)
        with sdk(navi) as client:
            for model, headers in (
                ("secretary+docs=Privé", {}),  # alice's, asked for by the owner
                ("secretary", {"X-Navi-Collection": ids["private"]}),
                ("secretary", {"X-Navi-Collection": "Nowhere"}),
            ):
                with pytest.raises(openai.NotFoundError) as missing:
                    client.chat.completions.create(model=model, messages=QUESTION, extra_headers=headers)
                assert missing.value.code == "collection_not_found"
            with pytest.raises(openai.NotFoundError) as unknown:
                client.chat.completions.create(model="butler+docs=Work", messages=QUESTION)
            assert unknown.value.code == "model_not_found"
        # Alice names hers, percent-encoded (a header is ASCII): her turn reads it.
        script.turn("It is 7341.")
        with sdk(navi, ids["tokens"]["alice"]) as client:
            client.chat.completions.create(
                model="secretary",
                messages=[{"role": "user", "content": "What is the vault code?"}],
                extra_headers={"X-Navi-Collection": quote("Privé")},
            )
    (turn,) = script.of_kind("turn")  # the refused requests reached no model
    note = note_of(turn)
    assert note is not None and "[1] vault.txt" in note and "7341" in note
