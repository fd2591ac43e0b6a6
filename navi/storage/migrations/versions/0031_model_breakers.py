"""Model endpoints' circuit breaker (issue 48, item 2): an endpoint that failed is skipped by every
worker until `until` (seconds since the epoch), then tried again.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "model_breakers",
        sa.Column("endpoint", sa.String(64), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("until", sa.Float, nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("model_breakers")
