"""MCP servers' questions waiting in runs, for every worker (issue 48): where workers share a
PostgreSQL database, a question (`elicitation_required`) a run of one worker waits on is a row any
worker lists and answers — the answer is stored in the row once (the first answer counts) and the
run's worker is told to take it, as approvals' answers are (`run_approvals`).

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_elicitations",
        sa.Column("session_id", sa.String(36), primary_key=True),
        sa.Column("elicitation_id", sa.String(200), primary_key=True),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("worker", sa.String(300), nullable=False),
        sa.Column("view", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_run_elicitations_run_id", "run_elicitations", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_run_elicitations_run_id", table_name="run_elicitations")
    op.drop_table("run_elicitations")
