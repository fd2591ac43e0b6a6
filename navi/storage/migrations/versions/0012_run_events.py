"""Runs across workers: their frames (for following and replaying a run on any worker) and the
approvals they wait for (answerable from any worker).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_events",
        sa.Column("run_id", sa.String(32), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("session_id", sa.String(36), nullable=False),
        sa.Column("frame", sa.Text, nullable=True),
        sa.Column("at", sa.Float, nullable=False),
    )
    for name, where in (("ix_run_events_ends", "frame IS NULL"), ("ix_run_events_starts", "seq = 1")):
        condition = sa.text(where)
        op.create_index(name, "run_events", ["at"], postgresql_where=condition, sqlite_where=condition)
    op.create_table(
        "run_approvals",
        sa.Column("session_id", sa.String(36), primary_key=True),
        sa.Column("call_id", sa.String(200), primary_key=True),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("worker", sa.String(300), nullable=False),
        sa.Column("view", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_run_approvals_run_id", "run_approvals", ["run_id"])


def downgrade() -> None:
    op.drop_table("run_approvals")
    op.drop_table("run_events")
