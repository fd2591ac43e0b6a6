"""A fact's stored vector moves to the last column of `memory_facts` (issue 44).

A vector with its attribute's is about 4 KB of text, more than SQLite keeps of a row on its page:
the rest goes to overflow pages. With the vector in the middle of the row, every read of a column
after it (`source`, `retired_at`, `replaced_by`: read by every search, for each candidate) followed
the overflow chain, a page read per fact. Last, the columns a search reads stay on the row's own
page. On PostgreSQL the order does not matter (a large value lives out of line there), and the
table changes the same way so both stay alike.

The column keeps its name: it is added at the end, filled, the old one dropped, the new renamed.
SQLite drops a column from 3.35 on; an older SQLite keeps the old order, which only costs time.

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlite3

import sqlalchemy as sa
from alembic import op

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None


def _can_drop() -> bool:
    return op.get_bind().dialect.name != "sqlite" or sqlite3.sqlite_version_info >= (3, 35)


def upgrade() -> None:
    if not _can_drop():
        return
    op.add_column("memory_facts", sa.Column("embedding_last", sa.Text, nullable=True))
    op.execute("UPDATE memory_facts SET embedding_last = embedding WHERE embedding IS NOT NULL")
    op.drop_column("memory_facts", "embedding")
    op.alter_column("memory_facts", "embedding_last", new_column_name="embedding")


def downgrade() -> None:
    """The order stays: a column's place is not part of the schema Navi checks."""
