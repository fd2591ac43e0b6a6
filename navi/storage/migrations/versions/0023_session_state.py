"""Per-session state every worker sees: `session_state` (the todo list, the scratchpad, the memory
snapshot, compression's findings, one JSON value per session and name) and `extraction_claims`
(which worker reads a session for memory, and how many of its messages were read). Both go with
their session.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def _session_id() -> sa.Column[str]:
    return sa.Column(
        "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
    )


def upgrade() -> None:
    op.create_table(
        "session_state",
        _session_id(),
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "extraction_claims",
        _session_id(),
        sa.Column("through", sa.Integer, nullable=False, server_default="0"),
        sa.Column("worker", sa.String(64), nullable=True),
        sa.Column("until", sa.Float, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("extraction_claims")
    op.drop_table("session_state")
