"""Where a conversation sits (issue 49, item 16): `folder` (a name the user gave; null: none),
`archived` (hidden from the list until it is brought back) and `temporary` (a chat that is deleted
when it is closed and never read for memory). Every session before it is in no folder, listed and
kept.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-09
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("folder", sa.String(100), nullable=True))
        batch.add_column(sa.Column("archived", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("temporary", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("temporary")
        batch.drop_column("archived")
        batch.drop_column("folder")
