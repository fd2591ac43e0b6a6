"""The tasks of Navi's own MCP server (issue 48, MCP Tasks): kept in the database, so any worker
answers a client's `tasks/get` and takes its `tasks/cancel`, whichever worker runs the call.

`result` and `error` are JSON; `started` and `beat` seconds since the epoch (the running worker
beats a working task; `cancel` is how another worker asks it to stop).

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_tasks",
        sa.Column("task_id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("message", sa.Text, nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("created", sa.String(40), nullable=False),
        sa.Column("updated", sa.String(40), nullable=False),
        sa.Column("started", sa.Float, nullable=False),
        sa.Column("beat", sa.Float, nullable=False),
        sa.Column("cancel", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_mcp_tasks_owner", "mcp_tasks", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_mcp_tasks_owner", table_name="mcp_tasks")
    op.drop_table("mcp_tasks")
