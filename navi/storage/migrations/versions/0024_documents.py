"""Documents (issue 43): collections, the documents in them, their bytes, chunks and the index.

- `doc_collections`: a person's collections (name unique per owner); a conversation's own
  collection names its session and goes with it.
- `doc_session_collections`: the collections a conversation reads; rows go with the session or the
  collection.
- `documents`: one row per file, with its indexing state and the lease of the worker indexing it
  (`lease_until`, seconds since the epoch on the database's clock); (collection, name) unique.
- `document_blobs`: an upload's bytes, so any worker can index and serve it.
- `document_chunks`: the indexed passages with their place.
- `document_vectors`: a document's chunk vectors, one row per document (a float32 matrix and the
  chunks' ids, with the name of the model that made them), so a vector search reads a few large
  rows instead of a row per chunk.

The chunks' text is indexed for keyword search as the conversation search is (migration 0015): on
SQLite a contentless FTS5 table with the same tokenizer, kept by triggers (a cascade from a deleted
document or collection fires them too); on PostgreSQL a generated `tsvector` column ('simple'
configuration) with a GIN index. Every search is one owner's: (owner, id) is indexed on both, and
the FTS5 table indexes the owner's name too, so that a search walks the owner's matches only, not
every newer match of other users first (at 100,000 chunks each of two users, a common word took
the older user 105 ms this way and 0.3 ms with the owner in the index).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

SQLITE = [
    """CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
        owner, text, content='', tokenize='unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER document_chunks_fts_ai AFTER INSERT ON document_chunks BEGIN
        INSERT INTO document_chunks_fts(rowid, owner, text) VALUES (new.id, new.owner, new.text);
    END""",
    """CREATE TRIGGER document_chunks_fts_ad AFTER DELETE ON document_chunks BEGIN
        INSERT INTO document_chunks_fts(document_chunks_fts, rowid, owner, text)
        VALUES ('delete', old.id, old.owner, old.text);
    END""",
]
POSTGRES = [
    "ALTER TABLE document_chunks ADD COLUMN search tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, text)) STORED",
    "CREATE INDEX ix_document_chunks_search ON document_chunks USING GIN (search)",
]


def upgrade() -> None:
    op.create_table(
        "doc_collections",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=True
        ),
        sa.Column("path", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("owner", "name", name="uq_doc_collections_owner_name"),
    )
    op.create_index("ix_doc_collections_session", "doc_collections", ["session_id"])
    op.create_table(
        "doc_session_collections",
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column(
            "collection_id",
            sa.String(32),
            sa.ForeignKey("doc_collections.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_doc_session_collections_collection", "doc_session_collections", ["collection_id"])
    op.create_table(
        "documents",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column(
            "collection_id",
            sa.String(32),
            sa.ForeignKey("doc_collections.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("path", sa.Text, nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("progress", sa.Float, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("pages", sa.Integer, nullable=False),
        sa.Column("chunks", sa.Integer, nullable=False),
        sa.Column("lease_worker", sa.String(300), nullable=True),
        sa.Column("lease_until", sa.Float, nullable=True),
        sa.Column("lease_seconds", sa.Float, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("collection_id", "name", name="uq_documents_collection_name"),
    )
    op.create_index("ix_documents_owner", "documents", ["owner"])
    op.create_index("ix_documents_state", "documents", ["state", "updated_at"])
    op.create_table(
        "document_blobs",
        sa.Column(
            "document_id", sa.String(32), sa.ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "document_chunks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "document_id", sa.String(32), sa.ForeignKey("documents.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("page", sa.Integer, nullable=True),
        sa.Column("slide", sa.Integer, nullable=True),
        sa.Column("sheet", sa.String(200), nullable=True),
        sa.Column("cells", sa.String(64), nullable=True),
        sa.Column("headings", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
    )
    op.create_index("ix_document_chunks_document", "document_chunks", ["document_id", "ordinal"])
    op.create_index("ix_document_chunks_owner_id", "document_chunks", ["owner", "id"])
    op.create_table(
        "document_vectors",
        sa.Column(
            "document_id", sa.String(32), sa.ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("embedder", sa.String(200), nullable=False),
        sa.Column("dim", sa.Integer, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("chunk_ids", sa.LargeBinary, nullable=False),
        sa.Column("vectors", sa.LargeBinary, nullable=False),
    )
    op.create_index("ix_document_vectors_owner", "document_vectors", ["owner", "embedder", "document_id"])
    for statement in SQLITE if op.get_bind().dialect.name == "sqlite" else POSTGRES:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS document_chunks_fts_ai")
        op.execute("DROP TRIGGER IF EXISTS document_chunks_fts_ad")
        op.execute("DROP TABLE IF EXISTS document_chunks_fts")
    for table in (
        "document_vectors",
        "document_chunks",
        "document_blobs",
        "documents",
        "doc_session_collections",
        "doc_collections",
    ):
        op.drop_table(table)
