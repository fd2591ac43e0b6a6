"""Display messages: an index on the message id, so a recall key finds its message at once.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_session_messages_message_id", "session_messages", ["message_id"])


def downgrade() -> None:
    op.drop_index("ix_session_messages_message_id", table_name="session_messages")
