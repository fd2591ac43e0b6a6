"""Who sent a message, and an imported session's own system prompt.

`queued_messages.sender` (JSON, NULL for none): the `name`, `location` and `metadata` a client
sent with a message that waits while a turn runs, so it is stored with them when it runs (stored
messages keep them in their JSON document, which needs no column). `sessions.system_prompt`
(NULL for none): the system prompt of an imported archive, kept as the session's own layer of the
system prompt (navi/profiles/persona.py) instead of being dropped.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("queued_messages") as batch:
        batch.add_column(sa.Column("sender", sa.Text, nullable=True))
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("system_prompt", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("system_prompt")
    with op.batch_alter_table("queued_messages") as batch:
        batch.drop_column("sender")
