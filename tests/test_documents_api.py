"""The documents REST API (issue 43) on a live Navi: collections, uploads indexed in the
background, search with citations, the file served inline, per-user isolation, failures with a
reason, the size cap, delete and re-index, a conversation's uploads becoming its documents, and
the server answering others while a long document is read. Real PDFs made by fpdf2."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fpdf import FPDF
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.testing.fake_server import FakeModelServer
from tests.documents import makers
from tests.server_helpers import LiveNavi, live_navi

_register()  # `navi users add`

PAGE_THREE = "The termination clause allows either party to end the agreement with ninety days notice."


def pdf(pages: list[str]) -> bytes:
    """A real PDF, one page per text."""
    doc = FPDF()
    doc.set_font("Helvetica", size=12)
    for text in pages:
        doc.add_page()
        doc.multi_cell(0, 8, text)
    return bytes(doc.output())


@functools.cache
def contract() -> bytes:
    return pdf(
        [
            "Service agreement between Acme and Beta. Parties and definitions.",
            "Payment is due within thirty days of each invoice.",
            PAGE_THREE,
            "Signatures of both parties.",
        ]
    )


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server, documents_max_bytes=2 * 1024 * 1024) as server:
        yield server


def collection(http: httpx.Client, name: str = "Work") -> str:
    resp = http.post("/collections", json={"name": name})
    assert resp.status_code == 201, resp.text
    return str(resp.json()["id"])


def add(http: httpx.Client, cid: str, *files: tuple[str, bytes]) -> list[dict[str, Any]]:
    resp = http.post(
        f"/collections/{cid}/documents",
        files=[("file", (name, data, "application/octet-stream")) for name, data in files],
    )
    assert resp.status_code == 202, resp.text
    docs: list[dict[str, Any]] = resp.json()
    assert all(d["state"] == "queued" for d in docs)
    return docs


def settled(http: httpx.Client, doc_id: str, within: float = 60.0) -> dict[str, Any]:
    """The document once its indexing is over (ready or failed)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        doc: dict[str, Any] = http.get(f"/documents/{doc_id}").json()
        if doc["state"] in ("ready", "failed"):
            return doc
        time.sleep(0.1)
    raise AssertionError(f"document {doc_id} still {doc['state']} after {within} s")


def as_user(navi: LiveNavi, name: str) -> httpx.Client:
    added = CliRunner().invoke(
        app, ["users", "add", name], env={"DB_PATH": str(navi.settings.db_path), "LOG_LEVEL": "WARNING"}
    )
    assert added.exit_code == 0, added.output
    return httpx.Client(
        base_url=navi.url, timeout=30, headers={"Authorization": f"Bearer {added.stdout.strip()}"}
    )


def test_a_pdf_is_indexed_found_cited_and_served(navi: LiveNavi) -> None:
    with navi.client() as http:
        cid = collection(http)
        (doc,) = add(http, cid, ("contract.pdf", contract()))
        done = settled(http, doc["id"])
        assert done["state"] == "ready" and done["kind"] == "pdf" and done["pages"] == 4, done
        assert done["chunks"] >= 4 and done["progress"] == 1.0 and done["error"] is None

        hits = http.get("/documents/search", params={"q": "termination notice"}).json()
        assert hits, "the passage on page 3 is found"
        best = hits[0]
        assert best["citation"] == "contract.pdf, p. 3" and best["place"]["page"] == 3
        assert "ninety days notice" in best["text"] and best["document_id"] == doc["id"]
        assert best["collection_id"] == cid

        # Limited to the collection, and to the document; another collection finds nothing.
        other = collection(http, "House")
        assert http.get("/documents/search", params={"q": "termination", "collection": other}).json() == []
        scoped = http.get("/documents/search", params={"q": "termination", "document": doc["id"]}).json()
        assert [h["chunk_id"] for h in scoped][:1] == [best["chunk_id"]]

        passage = http.get(f"/documents/chunks/{best['chunk_id']}").json()
        assert passage["hit"]["citation"] == "contract.pdf, p. 3"
        assert (
            "ninety days" in passage["passage"] and "thirty days" in passage["passage"]
        )  # with its neighbour

        served = http.get(f"/documents/{doc['id']}/file")
        assert served.status_code == 200 and served.content == contract()
        assert served.headers["content-type"] == "application/pdf"
        assert served.headers["content-disposition"].startswith("inline")
        assert served.headers["x-content-type-options"] == "nosniff"

        listed = http.get("/documents", params={"collection": cid}).json()
        assert [d["id"] for d in listed] == [doc["id"]]
        (work,) = [c for c in http.get("/collections").json() if c["id"] == cid]
        assert work["name"] == "Work" and work["documents"] == 1


def test_another_user_gets_404_and_finds_nothing(navi: LiveNavi) -> None:
    with navi.client() as http:
        cid = collection(http)
        (doc,) = add(http, cid, ("contract.pdf", contract()))
        settled(http, doc["id"])
        chunk = http.get("/documents/search", params={"q": "termination"}).json()[0]["chunk_id"]
    with as_user(navi, "bob") as bob:
        for path in (
            f"/documents/{doc['id']}",
            f"/documents/{doc['id']}/file",
            f"/documents/chunks/{chunk}",
        ):
            resp = bob.get(path)
            assert resp.status_code == 404 and resp.json()["code"] == "not_found", (path, resp.text)
        assert bob.get("/documents/search", params={"q": "termination"}).json() == []
        assert bob.get("/documents").json() == [] and bob.get("/collections").json() == []
        assert bob.get("/documents", params={"collection": cid}).status_code == 404
        assert bob.delete(f"/documents/{doc['id']}").status_code == 404
        assert bob.post(f"/documents/{doc['id']}/reindex").status_code == 404
        assert bob.delete(f"/collections/{cid}").status_code == 404
        upload = bob.post(
            f"/collections/{cid}/documents", files={"file": ("x.txt", b"mine now", "text/plain")}
        )
        assert upload.status_code == 404
        # bob's own collection may share the owner's name: names are per user.
        assert bob.post("/collections", json={"name": "Work"}).status_code == 201
    with navi.client() as http:
        assert http.get(f"/documents/{doc['id']}").json()["state"] == "ready"  # untouched
        assert http.post("/collections", json={"name": "Work"}).status_code == 409


def test_broken_and_oversized_files(navi: LiveNavi) -> None:
    with navi.client() as http:
        cid = collection(http)
        cut = contract()[:600]  # a PDF cut short
        (broken,) = add(http, cid, ("broken.pdf", cut))
        failed = settled(http, broken["id"])
        assert failed["state"] == "failed" and failed["error"], failed
        assert "PDF" in failed["error"] or "damaged" in failed["error"], failed["error"]

        big = b"%PDF-1.4\n" + b"0" * (2 * 1024 * 1024 + 10)
        resp = http.post(f"/collections/{cid}/documents", files={"file": ("big.pdf", big, "application/pdf")})
        assert resp.status_code == 413 and "2 MB" in resp.json()["detail"], resp.text

        exe = http.post(f"/collections/{cid}/documents", files={"file": ("tool.exe", b"MZ\x90\x00", "x/y")})
        assert exe.status_code == 415 and ".exe" in exe.json()["detail"]
        binary = http.post(
            f"/collections/{cid}/documents", files={"file": ("blob", b"\x00\x01\x02" * 50, "x/y")}
        )
        assert binary.status_code == 415
        mixed = http.post(
            f"/collections/{cid}/documents",
            files=[
                ("file", ("fine.md", b"# Fine\n\nkept?", "text/markdown")),
                ("file", ("blob", b"\x00" * 9, "x/y")),
            ],
        )
        assert mixed.status_code == 415  # one refused: none of the request's files is added
        assert [d["name"] for d in http.get("/documents").json()] == ["broken.pdf"]  # nothing else kept

        assert (
            http.post("/collections/0123abcd/documents", files={"file": ("a.txt", b"x", "t/p")}).status_code
            == 404
        )
        assert http.post("/collections", json={"name": "  "}).status_code == 422


def test_html_is_served_as_text_never_rendered(navi: LiveNavi) -> None:
    page = b"<!doctype html><html><body><h1>Recipes</h1><p>Bake the bread at 220 degrees.</p>" + (
        b"<script>alert(1)</script></body></html>"
    )
    with navi.client() as http:
        cid = collection(http)
        (doc,) = add(http, cid, ("bread.html", page))
        assert settled(http, doc["id"])["state"] == "ready"
        served = http.get(f"/documents/{doc['id']}/file")
        assert served.headers["content-type"].startswith("text/plain")
        assert "sandbox" in served.headers["content-security-policy"]
        assert served.content == page
        (hit,) = http.get("/documents/search", params={"q": "bread degrees"}).json()
        assert hit["citation"].startswith("bread.html")


def test_delete_reindex_and_collections(navi: LiveNavi) -> None:
    with navi.client() as http:
        cid = collection(http)
        (doc, notes) = add(
            http, cid, ("contract.pdf", contract()), ("notes.md", b"# Garden\n\nWater the tomatoes daily.\n")
        )
        settled(http, doc["id"])
        assert settled(http, notes["id"])["state"] == "ready"

        again = http.post(f"/documents/{doc['id']}/reindex")
        assert again.status_code == 202 and again.json()["state"] in ("queued", "indexing", "ready")
        assert settled(http, doc["id"])["state"] == "ready"
        assert (
            http.get("/documents/search", params={"q": "termination"}).json()[0]["document_id"] == doc["id"]
        )

        assert http.delete(f"/documents/{doc['id']}").status_code == 204
        assert http.get(f"/documents/{doc['id']}").status_code == 404
        assert http.get("/documents/search", params={"q": "termination"}).json() == []
        assert (
            http.get("/documents/search", params={"q": "tomatoes"}).json()[0]["citation"]
            == "notes.md, § Garden"
        )

        assert http.delete(f"/collections/{cid}").status_code == 204
        assert http.get("/documents").json() == [] and http.get("/collections").json() == []
        assert http.get("/documents/search", params={"q": "tomatoes"}).json() == []


def test_a_conversation_upload_becomes_its_document(navi: LiveNavi) -> None:
    sid = navi.new_session()
    with navi.client() as http:
        resp = http.post(
            f"/sessions/{sid}/files", files={"file": ("contract.pdf", contract(), "application/pdf")}
        )
        assert resp.status_code == 201, resp.text
        body = resp.json()
        assert body["document_id"] and body["files"][0]["document_id"] == body["document_id"]
        assert settled(http, body["document_id"])["state"] == "ready"
        (own,) = http.get(f"/sessions/{sid}/collections").json()
        assert own["kind"] == "session" and own["session_id"] == sid and own["documents"] == 1
        hits = http.get("/documents/search", params={"q": "termination", "collection": own["id"]}).json()
        assert hits[0]["citation"] == "contract.pdf, p. 3"

        data = http.post(
            f"/sessions/{sid}/files", files={"file": ("data.json", b'{"a": 1}', "application/json")}
        )
        assert data.status_code == 201 and data.json()["document_id"] is None  # a file, not a document

        # Attach and detach a collection of one's own.
        work = collection(http)
        assert http.put(f"/sessions/{sid}/collections/{work}").status_code == 204
        assert {c["id"] for c in http.get(f"/sessions/{sid}/collections").json()} == {own["id"], work}
        assert http.delete(f"/sessions/{sid}/collections/{work}").status_code == 204
        assert http.delete(f"/sessions/{sid}/collections/{work}").status_code == 404
    with as_user(navi, "carol") as carol:
        assert carol.get(f"/sessions/{sid}/collections").status_code == 404
        mine = carol.post("/collections", json={"name": "Mine"}).json()["id"]
        assert carol.put(f"/sessions/{sid}/collections/{mine}").status_code == 404
        assert carol.put(f"/collections/{work}/profiles/secretary").status_code == 404

    # A collection attached to the conversation's profile: read by the owner's conversations with it.
    with navi.client() as http:
        profile = http.get(f"/sessions/{sid}").json()["profile_id"]
        assert http.put(f"/collections/{work}/profiles/{profile}").status_code == 204
        assert {c["id"] for c in http.get(f"/sessions/{sid}/collections").json()} == {own["id"], work}
        (listed,) = [c for c in http.get("/collections").json() if c["id"] == work]
        assert listed["profiles"] == [profile]
        unknown = http.put(f"/collections/{work}/profiles/no-such-profile")
        assert unknown.status_code == 404 and "no-such-profile" in unknown.text
        assert http.delete(f"/collections/{work}/profiles/{profile}").status_code == 204
        assert http.delete(f"/collections/{work}/profiles/{profile}").status_code == 404
        assert {c["id"] for c in http.get(f"/sessions/{sid}/collections").json()} == {own["id"]}


def test_what_reading_noticed_is_kept_with_the_document(navi: LiveNavi) -> None:
    mixed = makers.pdf({1: "Only the first page has text.", 4: "And the fourth."}, count=5)
    with navi.client() as http:
        cid = collection(http)
        (doc,) = add(http, cid, ("mixed.pdf", mixed))
        done = settled(http, doc["id"])
        assert done["state"] == "ready"
        (warning,) = done["warnings"]
        assert "pages 2-3, 5 have no text layer" in warning and "OCR" in warning
        # Read again: queued without the old warnings, then the same ones back.
        again = http.post(f"/documents/{doc['id']}/reindex").json()
        assert again["state"] == "queued" and again["warnings"] == []
        assert settled(http, doc["id"])["warnings"] == [warning]
        (plain,) = add(http, cid, ("clean.md", b"# Clean\n\nNothing missing here."))
        assert settled(http, plain["id"])["warnings"] == []


def test_the_server_answers_while_a_long_document_is_read(navi: LiveNavi) -> None:
    long = pdf([f"Page {n} of the annual report. " + "Figures and words. " * 40 for n in range(1, 601)])
    with navi.client() as http:
        cid = collection(http)
        (doc,) = add(http, cid, ("annual.pdf", long))
        deadline = time.monotonic() + 30
        while http.get(f"/documents/{doc['id']}").json()["state"] == "queued":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        slowest, progress, reads = 0.0, [], 0
        while (state := http.get(f"/documents/{doc['id']}").json())["state"] == "indexing":
            progress.append(state["progress"])
            started = time.monotonic()
            assert http.get("/health").status_code == 200
            slowest = max(slowest, time.monotonic() - started)
            reads += 1
            time.sleep(0.05)
        assert reads >= 3, "the document was read long enough to ask meanwhile"
        assert slowest < 0.5, f"/health took {slowest:.3f} s while a document was read"
        # That the progress moves while a document is read is tested on the indexer itself
        # (tests/test_documents_indexer.py): here a fast machine may read it between two looks.
        assert all(0 <= p < 1 for p in progress), progress
        done = settled(http, doc["id"])
        assert done["state"] == "ready" and done["pages"] == 600
        hit = http.get("/documents/search", params={"q": "page 377"}).json()
        assert any(h["place"]["page"] == 377 for h in hit)


@pytest.mark.postgres
def test_on_postgresql(tmp_path: Path, fake_server: FakeModelServer, pg_url: str) -> None:
    with live_navi(tmp_path, fake_server, database_url=pg_url) as navi, navi.client() as http:
        cid = collection(http)
        (doc,) = add(http, cid, ("contract.pdf", contract()))
        done = settled(http, doc["id"])
        assert done["state"] == "ready" and done["pages"] == 4, done
        (best, *_) = http.get("/documents/search", params={"q": "termination notice"}).json()
        assert best["citation"] == "contract.pdf, p. 3" and "ninety days" in best["text"]
        served = http.get(f"/documents/{doc['id']}/file")
        assert served.content == contract() and served.headers["content-type"] == "application/pdf"
        assert http.delete(f"/documents/{doc['id']}").status_code == 204
        assert http.get("/documents/search", params={"q": "termination"}).json() == []
