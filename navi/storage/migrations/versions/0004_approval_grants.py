"""Approvals: the "always allow" answers users gave, per owner, tool and (for terminal) program.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "approval_grants",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("tool", sa.String(128), primary_key=True),
        sa.Column("subject", sa.String(512), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("approval_grants")
