# ruff: noqa: F811  (the `url` and `store` fixtures come from tests/helpers/document_stores.py)
"""The documents store, one contract on SQLite (FTS5) and PostgreSQL (tsvector): collections,
documents, indexing claims and leases, keyword, vector and hybrid search, passages."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime

import pytest
from sqlalchemy import Connection, insert, text

from navi.documents.base import Chunk, Place
from navi.storage import document_search
from navi.storage.documents import SqlDocumentStore
from navi.storage.schema import sessions
from tests.helpers.document_stores import store, url  # noqa: F401 - fixtures

WHEN = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


async def add_session(store: SqlDocumentStore, session_id: str, owner: str) -> None:
    def run(conn: Connection) -> None:
        conn.execute(
            insert(sessions).values(
                id=session_id,
                owner=owner,
                profile_id="secretary",
                pinned=False,
                context_token_count=0,
                display_count=0,
                context_count=0,
                planning_count=0,
                context_rev=0,
                created_at=WHEN,
                last_active=WHEN,
            )
        )

    await store.db.write(run)


async def indexed(
    store: SqlDocumentStore,
    owner: str,
    collection_id: str,
    name: str,
    texts: list[str],
    *,
    vectors: list[list[float]] | None = None,
    embedder: str | None = None,
    places: list[Place] | None = None,
) -> str:
    """A document added, claimed and finished with these chunks; its id."""
    doc = await store.add_document(owner, collection_id, name, data=name.encode())
    claimed = await store.claim("w", 60)
    assert claimed is not None and claimed.id == doc.id
    chunks = [Chunk(n, t, (places or [Place()] * len(texts))[n]) for n, t in enumerate(texts)]
    assert await store.finish(
        doc.id, "w", kind="text", pages=1, chunks=chunks, vectors=vectors, embedder=embedder
    )
    return doc.id


async def fts_rows(store: SqlDocumentStore, word: str) -> int:
    """Index rows matching `word`, whoever's (SQLite's FTS5 table, PostgreSQL's tsvector column)."""
    if store.db.is_sqlite:
        sql = "SELECT count(*) FROM document_chunks_fts WHERE document_chunks_fts MATCH 'text : ' || :w"
    else:
        sql = "SELECT count(*) FROM document_chunks WHERE search @@ plainto_tsquery('simple', :w)"
    return int(await store.db.read(lambda conn: conn.execute(text(sql), {"w": word}).scalar()))


async def test_collections_per_owner(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", " Contracts ")
    assert (mine.name, mine.kind, mine.documents) == ("Contracts", "user", 0)
    with pytest.raises(ValueError):
        await store.create_collection("alice", "Contracts")
    with pytest.raises(ValueError):
        await store.create_collection("alice", "  ")
    theirs = await store.create_collection("bob", "Contracts")  # unique per owner only
    await store.add_document("alice", mine.id, "a.txt", data=b"x")
    assert [(c.name, c.documents) for c in await store.list_collections("alice")] == [("Contracts", 1)]
    assert await store.get_collection("bob", mine.id) is None
    assert await store.delete_collection("bob", mine.id) is False
    assert (await store.get_collection("alice", mine.id)) is not None
    assert [c.id for c in await store.list_collections("bob")] == [theirs.id]
    with pytest.raises(LookupError):
        await store.add_document("bob", mine.id, "b.txt", data=b"y")


async def test_session_collection_attach_and_cascade(store: SqlDocumentStore) -> None:
    await add_session(store, "s1", "alice")
    await add_session(store, "s2", "bob")
    own = await store.session_collection("alice", "s1")
    assert own.kind == "session" and own.session_id == "s1"
    assert (await store.session_collection("alice", "s1")).id == own.id
    with pytest.raises(LookupError):
        await store.session_collection("alice", "s2")  # bob's conversation
    assert await store.attached("alice", "s1") == []  # its own collection counts once it has documents
    await store.add_document("alice", own.id, "notes.md", data=b"# notes")
    shelf = await store.create_collection("alice", "Shelf")
    bobs = await store.create_collection("bob", "Bob's")
    assert await store.attach("alice", "s1", shelf.id)
    assert await store.attach("alice", "s1", shelf.id)  # twice: still once
    assert not await store.attach("alice", "s1", bobs.id)
    assert not await store.attach("bob", "s1", bobs.id)  # not bob's conversation
    assert [c.id for c in await store.attached("alice", "s1")] == [shelf.id, own.id]
    assert await store.attached("bob", "s1") == []
    assert not await store.detach("bob", "s1", shelf.id)
    assert await store.detach("alice", "s1", shelf.id)
    assert [c.id for c in await store.attached("alice", "s1")] == [own.id]
    await store.attach("alice", "s1", shelf.id)
    await store.db.write(lambda conn: conn.execute(text("DELETE FROM sessions WHERE id = 's1'")))
    # The conversation's own collection and its attachments went with it; the shelf stays.
    assert [c.id for c in await store.list_collections("alice")] == [shelf.id]
    n = await store.db.read(
        lambda conn: conn.execute(text("SELECT count(*) FROM doc_session_collections")).scalar()
    )
    assert n == 0


async def test_a_collection_attached_to_a_profile_is_read_by_its_owners_conversations_with_it(
    store: SqlDocumentStore,
) -> None:
    await add_session(store, "s1", "alice")  # speaks with "secretary"
    await add_session(store, "s2", "bob")  # bob's, with "secretary" too
    recipes = await store.create_collection("alice", "Recipes")
    bobs = await store.create_collection("bob", "Bob's")
    assert await store.attached("alice", "s1") == []
    assert await store.attach_profile("alice", "secretary", recipes.id)
    assert await store.attach_profile("alice", "secretary", recipes.id)  # twice: still once
    assert not await store.attach_profile("alice", "secretary", bobs.id)  # not hers
    assert [c.id for c in await store.attached("alice", "s1")] == [recipes.id]
    assert await store.attached("bob", "s2") == []  # alice's attachment is hers alone
    listed = await store.get_collection("alice", recipes.id)
    assert listed is not None and listed.profiles == ["secretary"]
    await store.attach_profile("alice", "server_admin", recipes.id)
    assert [c.profiles for c in await store.list_collections("alice")] == [["secretary", "server_admin"]]
    # Attached to the conversation too: read once.
    assert await store.attach("alice", "s1", recipes.id)
    assert [c.id for c in await store.attached("alice", "s1")] == [recipes.id]
    await store.detach("alice", "s1", recipes.id)
    # Another profile for the conversation: the collection is not read any more.
    await store.db.write(
        lambda conn: conn.execute(text("UPDATE sessions SET profile_id = 'smart_home' WHERE id = 's1'"))
    )
    assert await store.attached("alice", "s1") == []
    assert not await store.detach_profile("bob", "secretary", recipes.id)
    assert await store.detach_profile("alice", "secretary", recipes.id)
    assert not await store.detach_profile("alice", "secretary", recipes.id)
    assert await store.delete_collection("alice", recipes.id)
    n = await store.db.read(
        lambda conn: conn.execute(text("SELECT count(*) FROM doc_profile_collections")).scalar()
    )
    assert n == 0  # the rows went with the collection


async def test_documents_bytes_replace_and_owner_isolation(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    doc = await store.add_document("alice", shelf.id, "report.txt", data=b"first version")
    assert (doc.state, doc.size, doc.source, doc.chunks) == ("queued", 13, "upload", 0)
    assert doc.sha256 == hashlib.sha256(b"first version").hexdigest()
    assert await store.document_bytes("alice", doc.id) == b"first version"
    assert await store.document_bytes("bob", doc.id) is None
    assert await store.get_document("bob", doc.id) is None
    assert await store.list_documents("bob") == []
    assert not await store.delete_document("bob", doc.id)
    assert not await store.requeue("bob", doc.id)
    claimed = await store.claim("w", 60)
    assert claimed is not None
    assert await store.finish(
        doc.id, "w", kind="text", pages=1, chunks=[Chunk(0, "old words")], vectors=None, embedder=None
    )
    again = await store.add_document("alice", shelf.id, "report.txt", data=b"second")
    assert again.id == doc.id and again.state == "queued" and again.size == 6 and again.chunks == 0
    assert await store.document_bytes("alice", doc.id) == b"second"
    assert await store.search("alice", "old") == []  # the old file's chunks went at once
    assert await fts_rows(store, "old") == 0
    assert [d.name for d in await store.list_documents("alice", shelf.id)] == ["report.txt"]
    folder = await store.add_document("alice", shelf.id, "b.txt", path="/srv/b.txt", source="folder")
    assert folder.path == "/srv/b.txt" and await store.document_bytes("alice", folder.id) is None
    with pytest.raises(ValueError):
        await store.add_document("alice", shelf.id, "c.txt")


async def test_delete_cascades_chunks_and_index(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    one = await indexed(store, "alice", shelf.id, "one.txt", ["zebra crossing"])
    await indexed(store, "alice", shelf.id, "two.txt", ["zebra stripes", "okapi"])
    assert await fts_rows(store, "zebra") == 2
    assert await store.delete_document("alice", one)
    assert await fts_rows(store, "zebra") == 1
    assert [h.document_name for h in await store.search("alice", "zebra")] == ["two.txt"]
    assert await store.delete_collection("alice", shelf.id)
    assert await fts_rows(store, "zebra") == 0 and await fts_rows(store, "okapi") == 0
    counts = await store.db.read(
        lambda conn: conn.execute(
            text(
                "SELECT (SELECT count(*) FROM document_chunks), (SELECT count(*) FROM documents),"
                " (SELECT count(*) FROM document_blobs)"
            )
        ).one()
    )
    assert tuple(counts) == (0, 0, 0)


async def test_claims_once_each_with_two_databases(url: str) -> None:
    a, b = SqlDocumentStore.at(url), SqlDocumentStore.at(url)
    await a.open()
    await b.open()
    try:
        shelf = await a.create_collection("alice", "Shelf")
        ids = {(await a.add_document("alice", shelf.id, f"{n}.txt", data=b"x")).id for n in range(12)}

        async def worker(store: SqlDocumentStore, name: str) -> list[str]:
            got = []
            while (doc := await store.claim(name, 60)) is not None:
                assert doc.state == "indexing"
                got.append(doc.id)
            return got

        results = await asyncio.gather(worker(a, "a1"), worker(a, "a2"), worker(b, "b1"), worker(b, "b2"))
        claimed = [i for got in results for i in got]
        assert sorted(claimed) == sorted(ids)  # every document, each once
    finally:
        await a.aclose()
        await b.aclose()


async def test_leases(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    doc = await store.add_document("alice", shelf.id, "a.txt", data=b"x")
    assert (await store.claim("w1", 60)).id == doc.id  # type: ignore[union-attr]
    assert await store.claim("w2", 60) is None  # leased, not expired
    assert await store.progress(doc.id, "w1", 0.5)
    assert not await store.progress(doc.id, "w2", 0.5)
    assert (await store.get_document("alice", doc.id)).progress == 0.5  # type: ignore[union-attr]
    # w1's lease runs out (its row says so): w2 takes the document over, and w1 can no longer act.
    await store.db.write(
        lambda conn: conn.execute(text("UPDATE documents SET lease_until = lease_until - 120"))
    )
    taken = await store.claim("w2", 60)
    assert taken is not None and taken.id == doc.id and taken.progress == 0.0
    assert not await store.progress(doc.id, "w1", 0.9)
    assert not await store.finish(
        doc.id, "w1", kind="text", pages=1, chunks=[Chunk(0, "w1")], vectors=None, embedder=None
    )
    assert not await store.fail(doc.id, "w1", "gone")
    assert await store.finish(
        doc.id, "w2", kind="text", pages=3, chunks=[Chunk(0, "first text")], vectors=None, embedder=None
    )
    done = await store.get_document("alice", doc.id)
    assert done is not None and (done.state, done.pages, done.chunks, done.kind) == ("ready", 3, 1, "text")
    assert not await store.finish(doc.id, "w2", kind="text", pages=1, chunks=[], vectors=None, embedder=None)
    # Requeued: the old chunks stay searchable until the new ones replace them.
    assert await store.requeue("alice", doc.id)
    assert [h.text for h in await store.search("alice", "first")] == ["first text"]
    assert (await store.claim("w3", 60)).id == doc.id  # type: ignore[union-attr]
    chunks = [Chunk(0, "second text"), Chunk(1, "more second")]
    assert await store.finish(doc.id, "w3", kind="text", pages=1, chunks=chunks, vectors=None, embedder=None)
    assert await store.search("alice", "first") == []
    assert {h.text for h in await store.search("alice", "second")} == {"second text", "more second"}
    assert (await store.get_document("alice", doc.id)).chunks == 2  # type: ignore[union-attr]
    # A failure, with its reason; queued again, it is claimed again.
    await store.requeue("alice", doc.id)
    assert (await store.claim("w4", 60)).id == doc.id  # type: ignore[union-attr]
    assert await store.fail(doc.id, "w4", "the file is encrypted")
    failed = await store.get_document("alice", doc.id)
    assert failed is not None and (failed.state, failed.error) == ("failed", "the file is encrypted")
    assert await store.claim("w5", 60) is None


async def test_oldest_queued_first(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    first = await store.add_document("alice", shelf.id, "z.txt", data=b"1")
    second = await store.add_document("alice", shelf.id, "a.txt", data=b"2")
    assert [(await store.claim("w", 60)).id for _ in range(2)] == [first.id, second.id]  # type: ignore[union-attr]


async def test_keyword_search_ranks_the_owners_chunks(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", "Mine")
    theirs = await store.create_collection("bob", "Theirs")
    await indexed(
        store,
        "alice",
        mine.id,
        "contract.pdf",
        [
            "The tenant may end the lease with three months notice.",
            "Rent is paid monthly.",
            "Termination: notice of termination must be written.",
        ],
        places=[Place(page=1), Place(page=2), Place(page=12, headings=("Terms", "9 Termination"))],
    )
    await indexed(store, "bob", theirs.id, "bob.txt", ["termination termination termination notice"])
    hits = await store.search("alice", "termination notice")
    assert [h.ordinal for h in hits] == [2, 0]
    assert hits[0].citation() == "contract.pdf, p. 12, § 9 Termination"
    assert hits[0].collection_id == mine.id and hits[0].score > hits[1].score > 0
    assert all(h.document_name == "contract.pdf" for h in hits)
    assert [h.document_name for h in await store.search("bob", "termination")] == ["bob.txt"]
    assert await store.search("carol", "termination") == []
    assert await store.search("alice", "termination", collections=[theirs.id]) == []
    assert await store.search("alice", "termination", collections=[]) == []
    assert [h.ordinal for h in await store.search("alice", "rent monthly", limit=1)] == [1]
    # Owners' names are in SQLite's index too: never matched by a query's words, and a name that
    # starts another ("alice", "alice.smith") finds only its own owner's chunks.
    assert await store.search("alice", "bob") == []
    other = await store.create_collection("alice.smith", "Hers")
    await indexed(store, "alice.smith", other.id, "smith.txt", ["termination of the smith lease"])
    found = await store.search("alice", "termination lease", limit=10)
    assert {h.document_name for h in found} == {"contract.pdf"}
    assert [h.document_name for h in await store.search("alice.smith", "termination")] == ["smith.txt"]


async def test_ranking_is_not_weighed_by_other_users(store: SqlDocumentStore) -> None:
    """The order of one user's hits is the same whatever other users' documents hold."""
    mine = await store.create_collection("alice", "Mine")
    texts = ["apple apple banana", "banana banana apple", "apple cherry", "banana cherry"]
    await indexed(store, "alice", mine.id, "fruit.txt", texts)
    before = [(h.chunk_id, round(h.score, 9)) for h in await store.search("alice", "apple banana", limit=10)]
    theirs = await store.create_collection("bob", "Theirs")
    await indexed(store, "bob", theirs.id, "bob.txt", ["apple " * 5] * 50 + ["banana"])
    after = [(h.chunk_id, round(h.score, 9)) for h in await store.search("alice", "apple banana", limit=10)]
    assert before == after and len(before) == 4


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "NEAR(a b)",
        "*",
        "-",
        "a -b",
        "(",
        ")",
        "term*",
        "AND OR NOT",
        "col:term",
        "^start",
        "''",
        "\\",
        "🙂",
        "naïve café",
        "文書 検索",
        "x" * 500,
        "",
        "   ",
        "a" * 70,
    ],
)
async def test_hostile_queries_never_fail(store: SqlDocumentStore, query: str) -> None:
    mine = await store.create_collection("alice", "Mine")
    await indexed(
        store, "alice", mine.id, "a.txt", ["NEAR the start, a term and a col", "naïve café 文書 検索"]
    )
    hits = await store.search("alice", query, query_vector=[1.0, 0.0], embedder="e")
    assert isinstance(hits, list)


async def test_unicode_words(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", "Mine")
    await indexed(store, "alice", mine.id, "u.txt", ["Über die Brücke", "naïve café", "Straße"])
    assert [h.ordinal for h in await store.search("alice", "brücke")] == [0]
    assert [h.ordinal for h in await store.search("alice", "CAFÉ")] == [1]
    assert [h.ordinal for h in await store.search("alice", "straße")] == [2]


async def test_vector_search_only_same_embedder(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", "Mine")
    await indexed(
        store,
        "alice",
        mine.id,
        "v.txt",
        ["north", "east", "north east"],
        vectors=[[1, 0, 0], [0, 1, 0], [0.7, 0.7, 0]],
        embedder="m1",
    )
    await indexed(store, "alice", mine.id, "w.txt", ["other model"], vectors=[[1, 0, 0]], embedder="m2")
    theirs = await store.create_collection("bob", "Theirs")
    await indexed(store, "bob", theirs.id, "b.txt", ["bob north"], vectors=[[1, 0, 0]], embedder="m1")
    hits = await store.search("alice", "", query_vector=[0.9, 0.1, 0], embedder="m1", limit=3)
    assert [h.text for h in hits] == ["north", "north east", "east"]
    assert hits[0].score == pytest.approx(0.9 / (0.82**0.5), abs=0.01)  # kept as int8 in memory
    assert [h.text for h in await store.search("alice", "", query_vector=[0, 1, 0], embedder="m2")] == [
        "other model"
    ]
    assert await store.search("alice", "", query_vector=[1, 0, 0], embedder="m3") == []
    assert await store.search("alice", "", query_vector=[1, 0, 0], embedder="m1", documents=[]) == []
    with pytest.raises(ValueError):
        await store.finish("x", "w", kind="text", pages=1, chunks=[Chunk(0, "a")], vectors=[], embedder="m1")


async def test_the_sign_bits_find_the_nearest_among_many(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from navi.storage import document_vectors

    # Past EXACT_MAX vectors only the RESCORE closest by their signs are scored.
    monkeypatch.setattr(document_vectors, "EXACT_MAX", 4)
    monkeypatch.setattr(document_vectors, "RESCORE", 3)
    mine = await store.create_collection("alice", "Mine")
    for d in range(3):
        vectors = [[1.0, float(4 * d + n) - 5.5] for n in range(4)]  # the last is closest to (0, 1)
        texts = [f"c{4 * d + n}" for n in range(4)]
        await indexed(store, "alice", mine.id, f"v{d}.txt", texts, vectors=vectors, embedder="m")
    hits = await store.search("alice", "", query_vector=[0, 1], embedder="m", limit=3)
    assert [h.text for h in hits] == ["c11", "c10", "c9"]


async def test_vectors_kept_in_memory_follow_another_workers_writes(url: str) -> None:
    """Two stores on one database are two workers: each keeps its own copy of the vectors, and
    sees the other's new, re-indexed and deleted documents on its next search."""
    first, second = SqlDocumentStore.at(url), SqlDocumentStore.at(url)
    await first.open()
    await second.open()
    try:
        mine = await first.create_collection("alice", "Mine")
        doc = await indexed(first, "alice", mine.id, "a.txt", ["east"], vectors=[[1, 0]], embedder="m")

        async def nearest(store: SqlDocumentStore) -> list[str]:
            return [h.text for h in await store.search("alice", "", query_vector=[0, 1], embedder="m")]

        assert await nearest(second) == ["east"]  # its copy is made
        await indexed(first, "alice", mine.id, "b.txt", ["north"], vectors=[[0, 1]], embedder="m")
        assert await nearest(second) == ["north", "east"]
        await first.requeue("alice", doc)  # indexed again, now pointing north-east
        assert (await first.claim("w", 60)) is not None
        assert await first.finish(
            doc, "w", kind="text", pages=1, chunks=[Chunk(0, "north east")], vectors=[[1, 1]], embedder="m"
        )
        assert await nearest(second) == ["north", "north east"]
        assert await first.delete_document("alice", doc)
        assert await nearest(second) == ["north"]
        # Another owner's writes leave alice's copy alone, and alice's are never bob's.
        theirs = await first.create_collection("bob", "Theirs")
        await indexed(first, "bob", theirs.id, "c.txt", ["bob north"], vectors=[[0, 1]], embedder="m")
        assert await nearest(second) == ["north"]
        # A search scoped to a collection reads only its documents.
        other = await first.create_collection("alice", "Other")
        await indexed(first, "alice", other.id, "d.txt", ["due north"], vectors=[[0, 1]], embedder="m")
        scoped = await second.search("alice", "", query_vector=[0, 1], embedder="m", collections=[other.id])
        assert [h.text for h in scoped] == ["due north"]
    finally:
        await first.aclose()
        await second.aclose()


async def test_vectors_follow_their_chunks(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", "Mine")
    doc = await indexed(store, "alice", mine.id, "v.txt", ["a", "b"], vectors=[[1, 0], [0, 1]], embedder="m")
    await store.requeue("alice", doc)
    assert (await store.claim("w", 60)) is not None
    # Re-indexed in another order and without vectors: the old vectors go with the old chunks.
    chunks = [Chunk(1, "b2"), Chunk(0, "a2")]
    assert await store.finish(
        doc, "w", kind="text", pages=1, chunks=chunks, vectors=[[0, 1], [1, 0]], embedder="m"
    )
    assert [
        h.text for h in await store.search("alice", "", query_vector=[1, 0.1], embedder="m", limit=2)
    ] == [
        "a2",
        "b2",
    ]
    await store.requeue("alice", doc)
    assert (await store.claim("w", 60)) is not None
    assert await store.finish(
        doc, "w", kind="text", pages=1, chunks=[Chunk(0, "c")], vectors=None, embedder=None
    )
    assert await store.search("alice", "", query_vector=[1, 0], embedder="m") == []
    with pytest.raises(ValueError):
        await store.finish(
            doc, "w", kind="text", pages=1, chunks=[Chunk(0, "a"), Chunk(0, "b")], vectors=None, embedder=None
        )
    await store.add_document("alice", mine.id, "v.txt", data=b"new")
    rows = await store.db.read(
        lambda conn: conn.execute(text("SELECT count(*) FROM document_vectors")).scalar()
    )
    assert rows == 0


async def test_hybrid_fuses_keyword_and_vector_ranks(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", "Mine")
    await indexed(
        store,
        "alice",
        mine.id,
        "h.txt",
        ["invoice due date", "payment deadline for bills", "invoice invoice invoice", "weather report"],
        vectors=[[0.8, 0.6], [1, 0], [0, 1], [-1, 0]],
        embedder="m",
    )
    words_only = await store.search("alice", "invoice due", limit=4)
    assert [h.ordinal for h in words_only] == [0, 2]
    hybrid = await store.search("alice", "invoice due", query_vector=[1, 0], embedder="m", limit=4)
    # Vector ranks: 1 (cosine 1), 0 (0.8), 2 (0), 3 (-1); keyword ranks: 0 (both words), 2. Fused
    # by score relative to each ranking's best, words 0.1 and meaning 0.9: 1 first (found by its
    # meaning alone, 0.9), then 0 (0.1 + 0.9 × 0.8), then 2 (one word, no meaning: under 0.1).
    assert document_search.WORDS_WEIGHT == 0.1
    assert [h.ordinal for h in hybrid] == [1, 0, 2, 3]
    assert hybrid[0].score == pytest.approx(0.9)
    assert hybrid[1].score == pytest.approx(0.1 + 0.9 * 0.8, abs=0.01)  # int8 vectors in memory
    assert 0 < hybrid[2].score < 0.1 and hybrid[3].score == 0
    # With words at 0.3 (the weight before) 0 comes first: 0.3 + 0.7 × 0.8 against 0.7.
    document_search.WORDS_WEIGHT = 0.3
    try:
        heavier = await store.search("alice", "invoice due", query_vector=[1, 0], embedder="m", limit=4)
    finally:
        document_search.WORDS_WEIGHT = 0.1
    assert [h.ordinal for h in heavier] == [0, 1, 2, 3]
    # Without the embedder's name the vector is not compared.
    assert [h.ordinal for h in await store.search("alice", "invoice due", query_vector=[1, 0])] == [0, 2]


async def test_passage_with_neighbours(store: SqlDocumentStore) -> None:
    mine = await store.create_collection("alice", "Mine")
    texts = [f"part {n}" for n in range(5)]
    await indexed(store, "alice", mine.id, "p.txt", texts, places=[Place(page=n + 1) for n in range(5)])
    (hit,) = await store.search("alice", "part", documents=None, limit=1)
    chunk = next(h for h in await store.search("alice", "part", limit=5) if h.ordinal == 2)
    found = await store.passage("alice", chunk.chunk_id)
    assert found is not None
    middle, passage = found
    assert middle.ordinal == 2 and middle.place.page == 3 and passage == "part 1\n\npart 2\n\npart 3"
    first = next(h for h in await store.search("alice", "part", limit=5) if h.ordinal == 0)
    assert (await store.passage("alice", first.chunk_id, around=2))[1] == "part 0\n\npart 1\n\npart 2"  # type: ignore[index]
    assert await store.passage("bob", chunk.chunk_id) is None
    assert await store.passage("alice", 10**9) is None
    assert hit.document_name == "p.txt"


async def test_common_words_weigh_little(store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from navi.storage import document_search

    monkeypatch.setattr(document_search, "COUNT_CAP", 3)  # "common" is in more chunks than that
    mine = await store.create_collection("alice", "Mine")
    texts = [f"common filler {n}" for n in range(6)] + ["common rare", "rare alone here"]
    await indexed(store, "alice", mine.id, "c.txt", texts)
    # The two chunks holding the rare word come first.
    assert [h.ordinal for h in await store.search("alice", "common rare", limit=2)] == [6, 7]
    # For three, the chunks holding only "common" are read too, and the first of them comes third.
    assert [h.ordinal for h in await store.search("alice", "common rare", limit=3)] == [6, 7, 0]
    # A word in many chunks alone still finds them (its own window, the newest first).
    assert len(await store.search("alice", "common", limit=10)) == 7


async def test_the_kept_chunk_count_follows_another_workers_writes(url: str) -> None:
    """A word's weight depends on how many chunks the owner has, which each store keeps between
    searches: another worker's new documents, and its deleting the newest, move it at once, so a
    store that searched before ranks with the same scores as one that never did."""
    first, second = SqlDocumentStore.at(url), SqlDocumentStore.at(url)
    await first.open()
    await second.open()

    async def score(store: SqlDocumentStore) -> float:
        (hit,) = await store.search("alice", "zephyr")
        return hit.score

    async def fresh_score() -> float:
        fresh = SqlDocumentStore.at(url)
        await fresh.open()
        try:
            return await score(fresh)
        finally:
            await fresh.aclose()

    try:
        mine = await first.create_collection("alice", "Mine")
        await indexed(first, "alice", mine.id, "z.txt", ["the zephyr blew", "calm air", "still air"])
        before = await score(first)
        assert before == pytest.approx(await fresh_score())
        added = [
            await indexed(second, "alice", mine.id, f"f{n}.txt", [f"filler {n}", f"more filler {n}"])
            for n in range(4)
        ]
        grown = await score(first)
        assert grown > before  # a rarer word among more chunks weighs more
        assert grown == pytest.approx(await fresh_score())
        assert await second.delete_document("alice", added[-1])  # the newest chunks go
        shrunk = await score(first)
        assert shrunk == pytest.approx(await fresh_score()) and shrunk < grown
        # Another owner's chunks never count.
        theirs = await second.create_collection("bob", "Theirs")
        await indexed(second, "bob", theirs.id, "b.txt", ["bob " + str(n) for n in range(20)])
        assert await score(first) == pytest.approx(await fresh_score())
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.parametrize(
    "body",
    [
        "Plain words, punctuation; and digits 3.5 / 42%",
        "snake_case and kebab-case and CamelCase\tand\nnew lines\x00\x1f~`",
        "",
        "   ",
        "__init__ a_b_c x--y (brackets) [more] {even} <tags>",
    ],
)
def test_ascii_words_are_the_indexs_words(body: str) -> None:
    from navi.sessions.search import words_of
    from navi.storage.document_search import _ascii_words

    assert _ascii_words(body) == [w.encode() for w in words_of(body)]
