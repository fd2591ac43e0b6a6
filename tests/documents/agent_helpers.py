"""Documents for the agent's tests: a contract PDF made by fpdf2 with known text on known pages, and
indexing done here as the indexer does it (claim → extract → chunk → embed → finish)."""

from __future__ import annotations

from typing import Any

from navi.compose import build_runtime
from navi.config import load_settings
from navi.documents.base import Document, DocumentStore
from navi.documents.chunking import chunk
from navi.documents.extract import extract
from tests.documents import makers

CONTRACT_PAGES = {
    1: "Service agreement between Ada Lovelace and Navi Ltd. Navi Ltd answers questions about the "
    "documents Ada keeps.",
    2: "Fees. Ada pays 40 euros each month. Invoices are paid within 30 days of receipt by bank transfer.",
    3: "Either party may terminate this agreement with ninety days written notice sent by registered letter.",
    4: "The office cat, Miso, is fed at noon and must never be given chocolate or milk.",
    5: "This agreement is governed by the laws of Norway and disputes go to the court of Oslo.",
}
CONTRACT_SECTIONS = {1: "1 Parties", 2: "4 Fees", 3: "9 Termination", 5: "12 Governing law"}
TERMINATION = "contract.pdf, p. 3, § 9 Termination"


def contract_pdf() -> bytes:
    return makers.pdf(CONTRACT_PAGES, count=5, sections=CONTRACT_SECTIONS, title="Service agreement")


async def index(
    store: DocumentStore, owner: str, collection_id: str, name: str, data: bytes, embed: Any = None
) -> Document:
    """Add the document and index it now; `embed` (memory's embedder) gives its chunks vectors."""
    doc = await store.add_document(owner, collection_id, name, data=data)
    claimed = await store.claim("test-indexer", 60)
    assert claimed is not None and claimed.id == doc.id
    extracted = extract(data, name)
    chunks = chunk(extracted)
    vectors = await embed([c.text for c in chunks]) if embed is not None else None
    assert await store.finish(
        doc.id,
        "test-indexer",
        kind=extracted.kind,
        pages=extracted.pages,
        chunks=chunks,
        vectors=vectors,
        embedder=embed.name if embed is not None else None,
    )
    return doc


async def attached_contract(settings: dict[str, Any]) -> str:
    """Before Navi starts, in the database `settings` name: the contract indexed in the owner's
    "Work" (with vectors when they name an embedder), and a session of the owner that reads it.
    The session's id."""
    runtime = await build_runtime(load_settings(**settings), seed_tools=False, runs_agents=False)
    try:
        assert runtime.retrieval is not None
        store = runtime.retrieval.store
        work = await store.create_collection("local", "Work")
        await index(store, "local", work.id, "contract.pdf", contract_pdf(), runtime.retrieval.embed)
        session = await runtime.sessions.create("secretary")
        assert await store.attach("local", session.id, work.id)
        return session.id
    finally:
        await runtime.aclose()
