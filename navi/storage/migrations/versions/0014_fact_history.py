"""Facts that change keep their past: a replaced or forgotten value stays as a retired row.

A retired row has `retired_at` set and, when a newer value replaced it, `replaced_by` naming the
current fact. So (owner, category, key) is unique only among current facts: a partial unique
index instead of the table constraint. `source` says how a value came in (extracted, remembered,
added, edited). SQLite cannot drop a table constraint, so there the table is rebuilt (same ids,
so the FTS5 index stays valid) and its triggers are made again.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

COLUMNS = "id, owner, category, key, value, session_id, created_at, updated_at, confirmations, embedding"
TRIGGERS = [
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
CURRENT = sa.text("retired_at IS NULL")


def _base_columns() -> list[sa.Column[object]]:
    return [
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
    ]


def _new_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("source", sa.String(32), nullable=False, server_default="extracted"),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("replaced_by", sa.Integer, nullable=True),
    ]


def _rebuild_sqlite(columns: list[sa.Column[object]], *extra: sa.Constraint) -> None:
    """Copy memory_facts into a table of `columns` (ids kept) and put its index and triggers back."""
    op.create_table("memory_facts_new", *columns, *extra)
    op.execute(f"INSERT INTO memory_facts_new ({COLUMNS}) SELECT {COLUMNS} FROM memory_facts")
    op.execute("DROP TABLE memory_facts")  # drops its index and triggers with it
    op.execute("ALTER TABLE memory_facts_new RENAME TO memory_facts")
    op.create_index("ix_memory_facts_owner_updated", "memory_facts", ["owner", "updated_at"])
    for statement in TRIGGERS:
        op.execute(statement)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(_base_columns() + _new_columns())
    else:
        op.drop_constraint("uq_memory_facts_owner_category_key", "memory_facts", type_="unique")
        for column in _new_columns():
            op.add_column("memory_facts", column)
    op.create_index(
        "uq_memory_facts_current",
        "memory_facts",
        ["owner", "category", "key"],
        unique=True,
        sqlite_where=CURRENT,
        postgresql_where=CURRENT,
    )
    op.create_index("ix_memory_facts_replaced_by", "memory_facts", ["replaced_by"])


def downgrade() -> None:
    op.execute("DELETE FROM memory_facts WHERE retired_at IS NOT NULL")  # history has no place there
    op.drop_index("ix_memory_facts_replaced_by", "memory_facts")
    op.drop_index("uq_memory_facts_current", "memory_facts")
    if op.get_bind().dialect.name == "sqlite":
        unique = sa.UniqueConstraint("owner", "category", "key", name="uq_memory_facts_owner_category_key")
        _rebuild_sqlite(_base_columns(), unique)
    else:
        for name in ("replaced_by", "retired_at", "source"):
            op.drop_column("memory_facts", name)
        op.create_unique_constraint(
            "uq_memory_facts_owner_category_key", "memory_facts", ["owner", "category", "key"]
        )
