"""The documents store on SQLite or PostgreSQL, through `Database` (the interface: navi/documents/base.py).

Every method that takes an owner reads and writes that owner's rows only; another user's ids are
as absent. Collections hold documents; a conversation reads the collections attached to it and its
own (made on first use, named after the session, and deleted with it).

**Documents.** An upload's bytes are kept in `document_blobs`, so any worker can index and serve
it; a folder's file is named by its path. Adding a document under a name its collection already
has replaces it in place (same id): the new bytes, queued again, and its old chunks removed at
once — they were the old file's text, and the bytes served now are the new file's. `requeue`
(same bytes) keeps the old chunks searchable until the new ones replace them.

**Indexing.** A worker `claim`s the oldest queued document, or one whose lease ran out (its
worker is gone), atomically: on PostgreSQL the row is chosen `FOR UPDATE SKIP LOCKED`, on SQLite
inside the `BEGIN IMMEDIATE` transaction every write takes; either way the update checks the
state again and its row count, so each document is claimed by one worker. Leases are on the
database's clock (`clock.db_now`), so workers on several machines agree. `progress` renews the
lease (by the seconds it was claimed for); `progress`, `finish` and `fail` do nothing and return
False once the document is no longer leased to the caller (claimed by another, replaced,
requeued or deleted). A lease that ran out but was not claimed again is still the caller's.

Search is in `navi.storage.document_search`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import Connection, delete, func, insert, literal, select, update
from sqlalchemy.exc import IntegrityError

from navi.documents.base import (
    Chunk,
    Collection,
    CollectionKind,
    Document,
    DocumentSource,
    DocumentStore,
    Hit,
)
from navi.llm.messages import utcnow
from navi.storage import document_search as found
from navi.storage import migrate
from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.document_rows import (
    DOCUMENT_COLUMNS,
    C,
    D,
    chunk_rows,
    collections_where,
    insert_collection,
    new_id,
    queued,
    session_owner,
    to_document,
)
from navi.storage.document_vectors import DocumentVectors
from navi.storage.schema import sessions
from navi.storage.schema_documents import (
    doc_collections,
    doc_profile_collections,
    doc_session_collections,
    document_blobs,
    document_chunks,
    document_vectors,
    documents,
)

MAX_LIMIT = 100
DEFAULT_LEASE = 300.0  # seconds a lease is renewed by when its length is not known


class SqlDocumentStore(DocumentStore):
    """Documents in `db`. A database handed in is migrated and disposed by whoever opened it;
    `at(url)` makes a store that owns its database (tests)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._now = db_now(db.dialect)
        self._counts = found.new_counts()  # owners' word counts, between searches
        self.vectors = DocumentVectors()  # owners' vectors, between searches
        self._owns_db = False

    @classmethod
    def at(cls, url: str) -> SqlDocumentStore:
        store = cls(Database(url))
        store._owns_db = True
        return store

    async def open(self) -> None:
        if self._owns_db:
            await migrate.upgrade(self.db)

    async def aclose(self) -> None:
        if self._owns_db:
            await self.db.dispose()

    # Collections

    async def create_collection(
        self,
        owner: str,
        name: str,
        *,
        kind: CollectionKind = "user",
        session_id: str | None = None,
        path: str | None = None,
    ) -> Collection:
        name = name.strip()
        if not name:
            raise ValueError("a collection needs a name")
        made = Collection(new_id(), owner, name, kind, session_id, path, utcnow())
        try:
            await self.db.write(lambda conn: insert_collection(conn, made))
        except IntegrityError as exc:
            raise ValueError(f"there is already a collection named {name!r}") from exc
        return made

    async def list_collections(self, owner: str) -> list[Collection]:
        return await self.db.read(lambda conn: collections_where(conn, C.owner == owner))

    async def get_collection(self, owner: str, collection_id: str) -> Collection | None:
        rows = await self.db.read(
            lambda conn: collections_where(conn, C.owner == owner, C.id == collection_id)
        )
        return rows[0] if rows else None

    async def session_collection(self, owner: str, session_id: str) -> Collection:
        """The conversation's own collection, made on first use; LookupError when the
        conversation is not the owner's."""

        def run(conn: Connection) -> Collection | None:
            if session_owner(conn, session_id) != owner:
                raise LookupError("no such conversation")
            where = (C.owner == owner, C.kind == "session", C.session_id == session_id)
            rows = collections_where(conn, *where)
            if rows:
                return rows[0]
            made = Collection(
                new_id(), owner, f"conversation {session_id}", "session", session_id, None, utcnow()
            )
            insert_collection(conn, made)
            return made

        for _ in range(3):  # two first uses at once: the second finds the first's
            try:
                made = await self.db.write(run)
            except IntegrityError:
                continue
            if made is not None:
                return made
        raise LookupError("the conversation's collection could not be made")

    async def delete_collection(self, owner: str, collection_id: str) -> bool:
        stmt = delete(doc_collections).where(C.owner == owner, C.id == collection_id)
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    async def attach(self, owner: str, session_id: str, collection_id: str) -> bool:
        """False when the conversation or the collection is not the owner's; True when attached
        (already, or now)."""

        def run(conn: Connection) -> bool:
            mine = conn.execute(select(C.id).where(C.owner == owner, C.id == collection_id)).first()
            if mine is None or session_owner(conn, session_id) != owner:
                return False
            key = (
                doc_session_collections.c.session_id == session_id,
                doc_session_collections.c.collection_id == collection_id,
            )
            if conn.execute(select(literal(1)).where(*key)).first() is None:
                conn.execute(
                    insert(doc_session_collections).values(
                        session_id=session_id, collection_id=collection_id, owner=owner, created_at=utcnow()
                    )
                )
            return True

        try:
            return await self.db.write(run)
        except IntegrityError:  # attached at the same moment by another request
            return True

    async def detach(self, owner: str, session_id: str, collection_id: str) -> bool:
        t = doc_session_collections.c
        stmt = delete(doc_session_collections).where(
            t.owner == owner, t.session_id == session_id, t.collection_id == collection_id
        )
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    async def attach_profile(self, owner: str, profile_id: str, collection_id: str) -> bool:
        P = doc_profile_collections.c

        def run(conn: Connection) -> bool:
            mine = conn.execute(select(C.id).where(C.owner == owner, C.id == collection_id)).first()
            if mine is None:
                return False
            key = (P.owner == owner, P.profile_id == profile_id, P.collection_id == collection_id)
            if conn.execute(select(literal(1)).where(*key)).first() is None:
                conn.execute(
                    insert(doc_profile_collections).values(
                        owner=owner, profile_id=profile_id, collection_id=collection_id, created_at=utcnow()
                    )
                )
            return True

        try:
            return await self.db.write(run)
        except IntegrityError:  # attached at the same moment by another request
            return True

    async def detach_profile(self, owner: str, profile_id: str, collection_id: str) -> bool:
        P = doc_profile_collections.c
        stmt = delete(doc_profile_collections).where(
            P.owner == owner, P.profile_id == profile_id, P.collection_id == collection_id
        )
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    async def attached(self, owner: str, session_id: str) -> list[Collection]:
        t = doc_session_collections.c
        P = doc_profile_collections.c
        profile = select(sessions.c.profile_id).where(sessions.c.id == session_id, sessions.c.owner == owner)
        ids = (
            select(t.collection_id)
            .where(t.owner == owner, t.session_id == session_id)
            .union(select(P.collection_id).where(P.owner == owner, P.profile_id == profile.scalar_subquery()))
        )

        def run(conn: Connection) -> list[Collection]:
            rows = collections_where(conn, C.owner == owner, C.id.in_(ids))
            own = collections_where(conn, C.owner == owner, C.kind == "session", C.session_id == session_id)
            return rows + [c for c in own if c.documents and c.id not in {r.id for r in rows}]

        return await self.db.read(run)

    # Documents

    async def add_document(
        self,
        owner: str,
        collection_id: str,
        name: str,
        *,
        data: bytes | None = None,
        path: str | None = None,
        source: DocumentSource = "upload",
        size: int | None = None,
        sha256: str | None = None,
    ) -> Document:
        """A queued document (see `DocumentStore`); ValueError for an empty name or neither bytes
        nor a path, LookupError when the collection is not the owner's."""
        name = name.strip()
        if not name:
            raise ValueError("a document needs a name")
        if data is None and path is None:
            raise ValueError("a document needs its bytes or its path")
        now = utcnow()
        values = {
            "kind": "",
            "size": len(data) if data is not None else (size or 0),
            "sha256": hashlib.sha256(data).hexdigest() if data is not None else (sha256 or ""),
            "source": source,
            "path": path,
            "pages": 0,
            "chunks": 0,
            **queued(),
        }

        def run(conn: Connection) -> str:
            if conn.execute(select(C.id).where(C.owner == owner, C.id == collection_id)).first() is None:
                raise LookupError("no such collection")
            old = conn.execute(
                select(D.id).where(D.collection_id == collection_id, D.name == name).with_for_update()
            ).scalar()
            if old is None:
                document_id = new_id()
                conn.execute(
                    insert(documents).values(
                        id=document_id,
                        owner=owner,
                        collection_id=collection_id,
                        name=name,
                        created_at=now,
                        **values,
                    )
                )
            else:
                document_id = old
                conn.execute(update(documents).where(D.id == old).values(**values))
                conn.execute(delete(document_vectors).where(document_vectors.c.document_id == old))
                conn.execute(delete(document_chunks).where(document_chunks.c.document_id == old))
                conn.execute(delete(document_blobs).where(document_blobs.c.document_id == old))
            if data is not None:
                conn.execute(insert(document_blobs).values(document_id=document_id, data=data))
            return document_id

        try:
            document_id = await self.db.write(run)
        except IntegrityError:  # the same name added at the same moment: now it is a replacement
            document_id = await self.db.write(run)
        made = await self.get_document(owner, document_id)
        assert made is not None
        return made

    async def list_documents(self, owner: str, collection_id: str | None = None) -> list[Document]:
        stmt = select(*DOCUMENT_COLUMNS).where(D.owner == owner)
        if collection_id is not None:
            stmt = stmt.where(D.collection_id == collection_id)
        stmt = stmt.order_by(D.name, D.id)
        return await self.db.read(lambda conn: [to_document(r) for r in conn.execute(stmt)])

    async def get_document(self, owner: str, document_id: str) -> Document | None:
        stmt = select(*DOCUMENT_COLUMNS).where(D.owner == owner, D.id == document_id)
        row = await self.db.read(lambda conn: conn.execute(stmt).first())
        return None if row is None else to_document(row)

    async def document_bytes(self, owner: str, document_id: str) -> bytes | None:
        stmt = (
            select(document_blobs.c.data)
            .join(documents, D.id == document_blobs.c.document_id)
            .where(D.owner == owner, D.id == document_id)
        )
        data = await self.db.read(lambda conn: conn.execute(stmt).scalar())
        return None if data is None else bytes(data)

    async def delete_document(self, owner: str, document_id: str) -> bool:
        stmt = delete(documents).where(D.owner == owner, D.id == document_id)
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    async def requeue(self, owner: str, document_id: str) -> bool:
        stmt = update(documents).where(D.owner == owner, D.id == document_id).values(**queued())
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    # Indexing

    def _claimable(self) -> Any:
        return (D.state == "queued") | ((D.state == "indexing") & (D.lease_until < self._now))

    async def claim(self, worker: str, lease_seconds: float) -> Document | None:
        postgres = self.db.dialect == "postgresql"

        def run(conn: Connection) -> Document | None:
            pick = select(D.id).where(self._claimable()).order_by(D.updated_at, D.id).limit(1)
            if postgres:  # a row another worker is claiming is skipped, not waited for
                pick = pick.with_for_update(skip_locked=True)
            chosen = conn.execute(pick).scalar()
            if chosen is None:
                return None
            taken = conn.execute(
                update(documents)
                .where(D.id == chosen, self._claimable())
                .values(
                    state="indexing",
                    progress=0.0,
                    error=None,
                    lease_worker=worker,
                    lease_until=self._now + lease_seconds,
                    lease_seconds=lease_seconds,
                )
            )
            if taken.rowcount != 1:
                return None
            return to_document(conn.execute(select(*DOCUMENT_COLUMNS).where(D.id == chosen)).one())

        # Looked for in a read first: every worker's indexer asks every few seconds, and a write
        # transaction (SQLite's BEGIN IMMEDIATE) for nothing would hold up every other writer.
        waiting = select(D.id).where(self._claimable()).limit(1)
        if await self.db.read(lambda conn: conn.execute(waiting).scalar()) is None:
            return None
        return await self.db.write(run)

    def _leased(self, document_id: str, worker: str) -> Any:
        return (D.id == document_id) & (D.state == "indexing") & (D.lease_worker == worker)

    async def progress(self, document_id: str, worker: str, fraction: float) -> bool:
        lease = func.coalesce(D.lease_seconds, DEFAULT_LEASE)
        stmt = (
            update(documents)
            .where(self._leased(document_id, worker))
            .values(progress=min(1.0, max(0.0, float(fraction))), lease_until=self._now + lease)
        )
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    async def finish(
        self,
        document_id: str,
        worker: str,
        *,
        kind: str,
        pages: int,
        chunks: list[Chunk],
        vectors: list[list[float]] | None,
        embedder: str | None,
        warnings: list[str] | None = None,
    ) -> bool:
        """See `DocumentStore`; ValueError when `vectors` are not one per chunk or come without
        the embedder's name."""
        if len({c.ordinal for c in chunks}) != len(chunks):
            raise ValueError("each chunk needs its own ordinal")
        if vectors is not None and (len(vectors) != len(chunks) or not embedder):
            raise ValueError("one vector per chunk, with the embedder's name")
        matrix = found.unit_rows(vectors) if vectors else None

        def run(conn: Connection) -> bool:
            owner = conn.execute(
                select(D.owner).where(self._leased(document_id, worker)).with_for_update()
            ).scalar()
            if owner is None:
                return False
            conn.execute(delete(document_vectors).where(document_vectors.c.document_id == document_id))
            conn.execute(delete(document_chunks).where(document_chunks.c.document_id == document_id))
            if chunks:
                conn.execute(insert(document_chunks), chunk_rows(document_id, owner, chunks))
            if matrix is not None and embedder:
                found.store_vectors(conn, document_id, owner, embedder, [c.ordinal for c in chunks], matrix)
            conn.execute(
                update(documents)
                .where(D.id == document_id)
                .values(
                    state="ready",
                    progress=1.0,
                    error=None,
                    warnings=json.dumps(warnings[:20], ensure_ascii=False) if warnings else None,
                    kind=kind[:16],
                    pages=pages,
                    chunks=len(chunks),
                    lease_worker=None,
                    lease_until=None,
                    lease_seconds=None,
                    updated_at=utcnow(),
                )
            )
            return True

        return await self.db.write(run)

    async def fail(self, document_id: str, worker: str, reason: str) -> bool:
        stmt = (
            update(documents)
            .where(self._leased(document_id, worker))
            .values(
                state="failed",
                error=reason,
                progress=0.0,
                lease_worker=None,
                lease_until=None,
                lease_seconds=None,
                updated_at=utcnow(),
            )
        )
        return await self.db.write(lambda conn: conn.execute(stmt).rowcount == 1)

    # Search

    async def search(
        self,
        owner: str,
        query: str,
        *,
        collections: list[str] | None = None,
        documents: list[str] | None = None,
        limit: int = 5,
        query_vector: list[float] | None = None,
        embedder: str | None = None,
    ) -> list[Hit]:
        """See `DocumentStore` and `navi.storage.document_search`. Vectors are compared only when
        `embedder` names the model that made `query_vector`. Scores: BM25 for keywords alone,
        cosine for vectors alone, the fused score (0..1, `document_search.fuse`) for both."""
        limit = max(1, min(MAX_LIMIT, limit))
        scope = found.Scope(
            owner,
            None if collections is None else tuple(collections),
            None if documents is None else tuple(documents),
        )
        terms = found.words(query)
        vector = query_vector if query_vector and embedder else None

        def run(conn: Connection) -> list[Hit]:
            k = max(limit, found.CANDIDATES) if vector is not None else limit
            by_words = found.keyword(conn, scope, terms, k, self._counts)
            if vector is None:
                return found.hits(conn, owner, by_words)
            assert embedder is not None
            by_meaning = found.nearest(conn, scope, embedder, vector, k, self.vectors)
            if not by_words:
                return found.hits(conn, owner, by_meaning[:limit])
            return found.hits(conn, owner, found.fuse(by_words, by_meaning, limit))

        return await self.db.read(run)

    async def passage(self, owner: str, chunk_id: int, *, around: int = 1) -> tuple[Hit, str] | None:
        rows = await self.db.read(lambda conn: found.chunk_rows(conn, owner, chunk_id, around))
        middle = next((r for r in rows if r.id == chunk_id), None)
        if middle is None:
            return None
        return found.to_hit(middle, 0.0), "\n\n".join(r.text for r in rows)
