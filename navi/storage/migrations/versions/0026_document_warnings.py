"""What reading a document noticed (issue 43): `documents.warnings`.

A document can be read and still be partly missing: pages of a PDF without a text layer (scanned;
Navi does no OCR), a PDF cut short, text past the length kept. The indexer stored none of it
(only its log said so); the column keeps the sentences, as a JSON list, until the document is
read again.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("warnings", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("warnings")
