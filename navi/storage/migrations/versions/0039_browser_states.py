"""A conversation's browser cookies and storage, for the worker that runs its next turn (issue 46).

- `browser_states`: one row a session — the browser context's storage state (JSON), its version,
  the named sign-in it started from and the page it was on; gone with its session.

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "browser_states",
        sa.Column(
            "session_id",
            sa.String(36),
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("profile", sa.String(40), nullable=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("browser_states")
