"""Messages sent while a turn runs: queued to run after it, or steering it at its next step.

One row per waiting message, in the order it was sent (`id`); `message_id` is the id it will be
stored under once it runs (or steers), so every client can match it. Rows live only until the
message runs, steers, or is cancelled (navi/runs/queue.py). Numbered 0017: 0016 is taken by the
message tree (a parallel branch); the lead orders the two when both are merged.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "queued_messages",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("message_id", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("images", sa.Text, nullable=False),
        sa.Column("files", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_queued_messages_session", "queued_messages", ["session_id", "id"])


def downgrade() -> None:
    op.drop_table("queued_messages")
