"""Memory search on SQLite: `memory_facts` gets an index on (owner, id).

A keyword search weighs its words by the searching user's own facts only (how many there are, how
many hold each word), never everyone's (navi/storage/counts.py): a word's count walks its FTS5
list and asks of each row whose it is, which this narrow index answers without reading the row and
its text, and a user's facts are counted in it alone. PostgreSQL's `ts_rank` weighs a fact by its
own words, so it needs none.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("CREATE INDEX ix_memory_facts_owner_id ON memory_facts (owner, id)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP INDEX ix_memory_facts_owner_id")
