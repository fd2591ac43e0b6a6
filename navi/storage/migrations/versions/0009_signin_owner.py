"""Browser sign-ins carry their user: the owner's (as every sign-in before) or a user's, with the
digest of the token that user signed in with, so removing the user (or giving the name a new
token) ends the sign-in.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("browser_sessions") as batch:
        batch.add_column(sa.Column("owner", sa.String(128), nullable=False, server_default="local"))
        batch.add_column(sa.Column("user_token_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("browser_sessions") as batch:
        batch.drop_column("user_token_sha256")
        batch.drop_column("owner")
