"""A research job's progress (issue 47, item 5): `plan`, its sub-questions once planned (a JSON
list), and `sources`, how many sources it has read — the jobs list shows both while it runs.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("plan", sa.Text(), nullable=True))
        batch.add_column(sa.Column("sources", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("sources")
        batch.drop_column("plan")
