"""The documents' tables (issue 43: navi/documents/, navi/storage/documents.py), on the one
`MetaData` of navi/storage/schema.py, kept beside it so that module stays one screenful per part."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from navi.storage.schema import metadata

# Documents (issue 43, navi/documents/, navi/storage/documents.py): collections of files a person
# gave Navi, per owner; which collections each conversation reads; the documents with their
# indexing state and lease (a worker indexes a document it claimed while `lease_until`, seconds
# since the epoch on the database's clock, has not passed); an upload's bytes; and the chunks the
# index holds. On SQLite an FTS5 table (`document_chunks_fts`) indexes the chunks' text, on
# PostgreSQL a generated `tsvector` column (`search`), both made by migration 0024.
doc_collections = Table(
    "doc_collections",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("owner", String(128), nullable=False),
    Column("name", String(200), nullable=False),
    Column("kind", String(16), nullable=False),
    # A conversation's own collection goes with the conversation.
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=True),
    Column("path", Text, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("owner", "name", name="uq_doc_collections_owner_name"),
)
Index("ix_doc_collections_session", doc_collections.c.session_id)

doc_session_collections = Table(
    "doc_session_collections",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "collection_id", String(32), ForeignKey("doc_collections.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("owner", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_doc_session_collections_collection", doc_session_collections.c.collection_id)

# A person's collections attached to a profile: read by every conversation of theirs with it.
doc_profile_collections = Table(
    "doc_profile_collections",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("profile_id", String(64), primary_key=True),
    Column(
        "collection_id", String(32), ForeignKey("doc_collections.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_doc_profile_collections_collection", doc_profile_collections.c.collection_id)

documents = Table(
    "documents",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("collection_id", String(32), ForeignKey("doc_collections.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(500), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("size", Integer, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("source", String(16), nullable=False),
    Column("path", Text, nullable=True),
    Column("state", String(16), nullable=False),
    Column("progress", Float, nullable=False),
    Column("error", Text, nullable=True),
    Column("warnings", Text, nullable=True),  # JSON list: what reading it noticed
    Column("pages", Integer, nullable=False),
    Column("chunks", Integer, nullable=False),
    Column("lease_worker", String(300), nullable=True),
    Column("lease_until", Float, nullable=True),
    Column("lease_seconds", Float, nullable=True),  # what `progress` renews the lease by
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("collection_id", "name", name="uq_documents_collection_name"),
)
Index("ix_documents_state", documents.c.state, documents.c.updated_at)

document_blobs = Table(
    "document_blobs",
    metadata,
    Column("document_id", String(32), ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

document_chunks = Table(
    "document_chunks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("document_id", String(32), ForeignKey("documents.id", ondelete="CASCADE"), nullable=False),
    Column("owner", String(128), nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("page", Integer, nullable=True),
    Column("slide", Integer, nullable=True),
    Column("sheet", String(200), nullable=True),
    Column("cells", String(64), nullable=True),
    Column("headings", Text, nullable=False),  # JSON list of strings, outermost first
    Column("text", Text, nullable=False),
)
Index("ix_document_chunks_document", document_chunks.c.document_id, document_chunks.c.ordinal)
Index("ix_document_chunks_owner_id", document_chunks.c.owner, document_chunks.c.id)

# A document's chunk vectors, one row per document: `vectors` is a float32 matrix of unit rows
# (`count` x `dim`), row i the vector of chunk `chunk_ids[i]` (int64), all made by `embedder`. A
# search reads a few rows of megabytes, not a row per chunk (navi/storage/document_search.py).
document_vectors = Table(
    "document_vectors",
    metadata,
    Column("document_id", String(32), ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True),
    Column("owner", String(128), nullable=False),
    Column("embedder", String(200), nullable=False),
    Column("dim", Integer, nullable=False),
    Column("count", Integer, nullable=False),
    Column("chunk_ids", LargeBinary, nullable=False),
    Column("vectors", LargeBinary, nullable=False),
)
Index(
    "ix_document_vectors_owner",
    document_vectors.c.owner,
    document_vectors.c.embedder,
    document_vectors.c.document_id,
)

# A number per owner raised by migration 0029's triggers on every change to the owner's
# `document_vectors` rows: a process's copy of them in memory is current while it matches
# (navi/storage/document_vectors.py).
document_vector_versions = Table(
    "document_vector_versions",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("version", BigInteger, nullable=False),
)
