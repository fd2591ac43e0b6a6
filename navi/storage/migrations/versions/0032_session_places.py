"""Where a conversation sits (issue 49, item 16): `folder` (a name the user gave; null: none),
`archived` (hidden from the list until it is brought back) and `temporary` (a chat that is deleted
when it is closed and never read for memory). Every session before it is in no folder, listed and
kept.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-09
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


COLUMNS = ("folder", "archived", "temporary")


def upgrade() -> None:
    # Plain ALTER TABLE ADD COLUMN on both databases: a batch would rebuild `sessions` on SQLite,
    # which the message search's triggers name.
    op.add_column("sessions", sa.Column("folder", sa.String(100), nullable=True))
    op.add_column("sessions", sa.Column("archived", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("sessions", sa.Column("temporary", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    for name in reversed(COLUMNS):  # ALTER TABLE DROP COLUMN (SQLite 3.35 and later)
        op.drop_column("sessions", name)
