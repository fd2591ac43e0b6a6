"""The model each user picked for a built-in profile (issue 49, item 13): `profile_models`, one row
per user and profile ("backend:model"; no row: the profile's configured model).

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "profile_models",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("profile_id", sa.String(64), primary_key=True),
        sa.Column("model", sa.String(300), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("profile_models")
