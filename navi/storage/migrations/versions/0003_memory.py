"""Long-term memory: facts with full-text search, the narrative summary, extraction state.

Full-text search is the database's own: an FTS5 table kept in step by triggers on SQLite, a
generated `tsvector` column with a GIN index on PostgreSQL.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

SQLITE_FTS = [
    """CREATE VIRTUAL TABLE memory_facts_fts USING fts5(
        category, key, value, content='memory_facts', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER memory_facts_ai AFTER INSERT ON memory_facts BEGIN
        INSERT INTO memory_facts_fts(rowid, category, key, value)
        VALUES (new.id, new.category, replace(new.key, '_', ' '), new.value);
    END""",
    """CREATE TRIGGER memory_facts_ad AFTER DELETE ON memory_facts BEGIN
        INSERT INTO memory_facts_fts(memory_facts_fts, rowid, category, key, value)
        VALUES ('delete', old.id, old.category, replace(old.key, '_', ' '), old.value);
    END""",
    """CREATE TRIGGER memory_facts_au AFTER UPDATE OF category, key, value ON memory_facts BEGIN
        INSERT INTO memory_facts_fts(memory_facts_fts, rowid, category, key, value)
        VALUES ('delete', old.id, old.category, replace(old.key, '_', ' '), old.value);
        INSERT INTO memory_facts_fts(rowid, category, key, value)
        VALUES (new.id, new.category, replace(new.key, '_', ' '), new.value);
    END""",
]


def upgrade() -> None:
    op.create_table(
        "memory_facts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("category", sa.String(64), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("confirmations", sa.Integer, nullable=False, server_default="1"),
        sa.Column("embedding", sa.Text, nullable=True),
        sa.UniqueConstraint("owner", "category", "key", name="uq_memory_facts_owner_category_key"),
    )
    op.create_index("ix_memory_facts_owner_updated", "memory_facts", ["owner", "updated_at"])
    op.create_table(
        "memory_summary",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "session_memory_state",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("extracted_at", sa.DateTime(timezone=True), nullable=False),
    )
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_FTS:
            op.execute(statement)
    else:
        op.execute(
            "ALTER TABLE memory_facts ADD COLUMN search tsvector GENERATED ALWAYS AS "
            "(to_tsvector('english', category || ' ' || replace(key, '_', ' ') || ' ' || value)) STORED"
        )
        op.execute("CREATE INDEX ix_memory_facts_search ON memory_facts USING GIN (search)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("memory_facts_ai", "memory_facts_ad", "memory_facts_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS memory_facts_fts")
    op.drop_table("session_memory_state")
    op.drop_table("memory_summary")
    op.drop_index("ix_memory_facts_owner_updated", "memory_facts")
    op.drop_table("memory_facts")
