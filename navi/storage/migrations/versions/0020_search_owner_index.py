"""Search across conversations on SQLite: `message_search` gets an index on (owner, id).

A search weighs its words by the searching user's own messages only (how many there are, how many
hold each word), never everyone's (navi/storage/search.py): a word's count walks its FTS5 list and
asks of each row whose it is, which this narrow index answers without reading the row and its text
(about three times faster than the table), and a user's messages are counted in it alone.
PostgreSQL has had the same index since migration 0015.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("CREATE INDEX ix_message_search_owner_id ON message_search (owner, id)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP INDEX ix_message_search_owner_id")
