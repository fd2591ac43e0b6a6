"""Background jobs' mode (issue 47, item 5): `task` (a turn of the agent loop, as before) or
`research` (the research loop: plan, read, notes, a cited report). Every job before it is a task.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("mode", sa.String(16), nullable=False, server_default="task"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("mode")
