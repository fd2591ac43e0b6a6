"""Schedules, their runs, and the sessions' unread marks.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("profile_id", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(36), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("cron", sa.String(200), nullable=True),
        sa.Column("every_seconds", sa.Integer, nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("missed", sa.String(8), nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("done", sa.Boolean, nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_schedules_owner", "schedules", ["owner"])
    op.create_index("ix_schedules_next_run_at", "schedules", ["next_run_at"])
    op.create_table(
        "schedule_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "schedule_id",
            sa.String(32),
            sa.ForeignKey("schedules.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("manual", sa.Boolean, nullable=False),
        sa.Column("session_id", sa.String(36), nullable=True),
        sa.Column("preview", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.UniqueConstraint("schedule_id", "due_at", name="uq_schedule_runs_due"),
    )
    op.create_index("ix_schedule_runs_schedule_started", "schedule_runs", ["schedule_id", "started_at"])
    op.create_table(
        "session_unread",
        sa.Column(
            "session_id",
            sa.String(36),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_session_unread_owner", "session_unread", ["owner"])


def downgrade() -> None:
    op.drop_table("session_unread")
    op.drop_table("schedule_runs")
    op.drop_table("schedules")
