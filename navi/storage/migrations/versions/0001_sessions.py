"""Sessions: the session row, both message buffers and planning logs.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _buffer(name: str) -> None:
    op.create_table(
        name,
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("message_id", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sqlite_with_rowid=False,
    )


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("profile_id", sa.String(64), nullable=False),
        sa.Column("name", sa.Text, nullable=True),
        sa.Column("pinned", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("context_token_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("display_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("context_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("planning_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_active", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_sessions_owner", "sessions", ["owner"])
    op.create_index("ix_sessions_listing", "sessions", ["pinned", "last_active"])
    _buffer("session_messages")
    _buffer("session_context")
    op.create_table(
        "session_planning_logs",
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.drop_table("session_planning_logs")
    op.drop_table("session_context")
    op.drop_table("session_messages")
    op.drop_index("ix_sessions_listing", "sessions")
    op.drop_index("ix_sessions_owner", "sessions")
    op.drop_table("sessions")
