"""Channels: who may talk to Navi from outside (an address per channel, as a Navi user), which
outside message belongs to which session (an email's Message-ID, a room's event), and where a
schedule delivers its answer (`schedules.deliver`, JSON: {"channel", "to"}).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_allow",
        sa.Column("channel", sa.String(32), primary_key=True),
        sa.Column("address", sa.String(320), primary_key=True),
        sa.Column("user", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "channel_threads",
        sa.Column("channel", sa.String(32), primary_key=True),
        sa.Column("key", sa.String(512), primary_key=True),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_channel_threads_session", "channel_threads", ["session_id"])
    with op.batch_alter_table("schedules") as batch:
        batch.add_column(sa.Column("deliver", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("schedules") as batch:
        batch.drop_column("deliver")
    op.drop_index("ix_channel_threads_session", table_name="channel_threads")
    op.drop_table("channel_threads")
    op.drop_table("channel_allow")
