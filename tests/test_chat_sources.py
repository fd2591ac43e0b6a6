"""`navi chat` lists the documents an answer cites under it — numbered, as links to the file at the
cited page — and `/source N` prints the cited passage (how a document that is not a PDF is shown)."""

from __future__ import annotations

from pathlib import Path

from navi.cli.chat.sources import cited, resolve
from navi.testing.fake_server import FakeModelServer
from tests.documents.agent_helpers import contract_pdf
from tests.helpers.terminal import NAVI, Terminal
from tests.server_helpers import live_navi, use_script
from tests.test_chat_keys import env_for
from tests.test_documents_api import add, collection, settled

DOCS = [
    {"id": "d1", "name": "contract.pdf", "kind": "pdf"},
    {"id": "d2", "name": "notes/boiler.md", "kind": "markdown"},
]


def test_citations_are_read_with_their_sentence_and_resolved_to_documents() -> None:
    answer = (
        "You need ninety days' notice (contract.pdf, p. 3). The boiler is serviced in October "
        "[boiler.md, § Service; contract.pdf, p. 4]. Prices rose (see above) and (contract.pdf, p. 3) again."
    )
    found = cited(answer)
    assert [c for c, _ in found] == [
        "contract.pdf, p. 3",
        "boiler.md, § Service",
        "contract.pdf, p. 4",
        "see above",
    ]
    assert found[0][1] == "You need ninety days' notice."
    sources = resolve(found, DOCS, "http://127.0.0.1:8000")
    assert [(s.number, s.citation, s.document_id, s.page) for s in sources] == [
        (1, "contract.pdf, p. 3", "d1", 3),
        (2, "boiler.md, § Service", "d2", None),  # by the name below its folder
        (3, "contract.pdf, p. 4", "d1", 4),
    ]  # "see above" names no document
    assert sources[0].url == "http://127.0.0.1:8000/documents/d1/file#page=3"
    assert sources[1].url == "http://127.0.0.1:8000/documents/d2/file" and not sources[1].pdf
    assert cited("No brackets here.") == []


def test_an_answer_citing_an_attached_pdf_lists_its_source_and_source_n_shows_the_passage(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script = use_script(fake_server)
    script.turn("Ninety days' written notice (contract.pdf, p. 3).")
    with live_navi(tmp_path, fake_server, planning_enabled=False) as navi:
        with navi.client() as http:
            work = collection(http)
            (doc,) = add(http, work, ("contract.pdf", contract_pdf()))
            assert settled(http, doc["id"])["state"] == "ready"
            sid = navi.new_session()
            assert http.put(f"/sessions/{sid}/collections/{work}").status_code == 204

        term = Terminal([*NAVI, "chat", sid], env_for(navi, tmp_path))
        try:
            term.wait_for_prompt()
            term.type("How much notice do I need to end the agreement?")
            term.send("Enter")
            shown = term.wait_for("/source N shows a cited passage")
            assert "Sources" in shown
            assert "[1] contract.pdf, p. 3" in shown
            assert f"/documents/{doc['id']}/file#page=3" in shown
            term.type("/source 1")
            term.send("Enter")
            passage = term.wait_for("registered letter").rsplit("/source 1", 1)[1]
            assert "Either party may terminate this agreement with ninety days written notice" in passage
            assert "office cat" not in passage.split("registered letter")[0]
            term.type("/source 7")
            term.send("Enter")
            term.wait_for("/source needs a number from 1 to 1")
        finally:
            term.close()
