"""Session leases: which run holds a session, for every process on the database.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_leases",
        sa.Column("session_id", sa.String(36), primary_key=True),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("worker", sa.String(300), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("answered", sa.Boolean, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
    )
    op.create_index("ix_run_leases_worker", "run_leases", ["worker"])


def downgrade() -> None:
    op.drop_table("run_leases")
