"""A conversation is a tree: each display message names its parent, a session its active leaf.

Existing sessions were flat lists: each message's parent is the one before it, and the active
leaf is the last message, so every session shows exactly what it showed before.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN on both databases: a rebuilt table would lose 0015's search triggers.
    op.add_column("session_messages", sa.Column("parent_id", sa.String(64), nullable=True))
    op.add_column("sessions", sa.Column("active_leaf", sa.String(64), nullable=True))
    op.execute(
        """UPDATE session_messages SET parent_id = (
            SELECT p.message_id FROM session_messages p
            WHERE p.session_id = session_messages.session_id
              AND p.position = session_messages.position - 1)"""
    )
    op.execute(
        """UPDATE sessions SET active_leaf = (
            SELECT m.message_id FROM session_messages m
            WHERE m.session_id = sessions.id AND m.position = sessions.display_count - 1)"""
    )


def downgrade() -> None:
    op.drop_column("sessions", "active_leaf")
    op.drop_column("session_messages", "parent_id")
