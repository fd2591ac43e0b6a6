"""Notifications (issue 47): Web Push subscriptions, which pages are visible, and each user's
notification settings.

- `push_subscriptions`: one row per browser (its endpoint, unique) with the user it notifies and
  the keys its messages are encrypted for.
- `page_presence`: one row per open page (a WebSocket), with whether the person can see it and
  when it last said so (`seen_at`, seconds since the epoch on the database's clock); every worker
  writes its own pages' rows and reads everyone's, so "is any of this user's pages visible"
  has one answer across workers.
- `notify_settings`: a user's choices (which kinds notify, quiet hours) as JSON.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("endpoint", sa.Text, nullable=False),
        sa.Column("p256dh", sa.String(128), nullable=False),
        sa.Column("auth", sa.String(64), nullable=False),
        sa.Column("user_agent", sa.String(300), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_push_subscriptions_owner", "push_subscriptions", ["owner"])
    op.create_table(
        "page_presence",
        sa.Column("page_id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("visible", sa.Boolean, nullable=False),
        sa.Column("seen_at", sa.Float, nullable=False),
    )
    op.create_index("ix_page_presence_owner", "page_presence", ["owner"])
    op.create_table(
        "notify_settings",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("data", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("notify_settings")
    op.drop_index("ix_page_presence_owner", table_name="page_presence")
    op.drop_table("page_presence")
    op.drop_index("ix_push_subscriptions_owner", table_name="push_subscriptions")
    op.drop_table("push_subscriptions")
