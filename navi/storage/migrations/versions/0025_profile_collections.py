"""Collections attached to a profile (issue 43): `doc_profile_collections`.

A person attaches a collection to one of the profiles (the built-in "secretary", a persona…): every
conversation of theirs that speaks with that profile reads it, as one attached to the conversation
itself does. Profiles are the server's and shared, collections are one person's, so the row names
the owner; it goes with the collection.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "doc_profile_collections",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("profile_id", sa.String(64), primary_key=True),
        sa.Column(
            "collection_id",
            sa.String(32),
            sa.ForeignKey("doc_collections.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_doc_profile_collections_collection", "doc_profile_collections", ["collection_id"])


def downgrade() -> None:
    op.drop_index("ix_doc_profile_collections_collection", "doc_profile_collections")
    op.drop_table("doc_profile_collections")
