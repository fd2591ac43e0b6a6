"""Custom instructions and the page's profiles (issue 49, items 13 and 14).

- `user_instructions`: a user's "about me" and "how to answer", as JSON.
- `custom_profiles`: profiles people made on the page (name, instructions, tools, model) as JSON,
  with their owner.
- `sessions.model`: the model picked for one conversation ("backend:model"; NULL: its profile's).

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_instructions",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_table(
        "custom_profiles",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_custom_profiles_owner", "custom_profiles", ["owner"])
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("model", sa.String(300), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("model")
    op.drop_index("ix_custom_profiles_owner", table_name="custom_profiles")
    op.drop_table("custom_profiles")
    op.drop_table("user_instructions")
