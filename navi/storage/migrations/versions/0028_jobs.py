"""Background jobs (issue 47): `jobs`, one row per job — its owner, its own session and the
conversation that asked for it, its state and budgets, its steps so far, its result or error, and
the lease of the worker running it (`lease_worker`, `lease_until` in seconds since the epoch on
the database's clock), which a worker renews while it runs and another takes over once it has run
out.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("origin_session_id", sa.String(36), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("steps", sa.Integer, nullable=False, server_default="0"),
        sa.Column("max_steps", sa.Integer, nullable=False),
        sa.Column("max_seconds", sa.Integer, nullable=False),
        sa.Column("last_step", sa.String(200), nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("stop_requested", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("lease_worker", sa.String(200), nullable=True),
        sa.Column("lease_until", sa.Float, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_jobs_owner", "jobs", ["owner", "created_at"])
    op.create_index("ix_jobs_state", "jobs", ["state", "created_at"])
    op.create_index("ix_jobs_session", "jobs", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_jobs_session", table_name="jobs")
    op.drop_index("ix_jobs_state", table_name="jobs")
    op.drop_index("ix_jobs_owner", table_name="jobs")
    op.drop_table("jobs")
