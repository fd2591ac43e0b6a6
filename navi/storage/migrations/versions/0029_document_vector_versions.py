"""Document vectors kept in memory between searches: a version per owner, kept by triggers.

A vector search used to read every one of the owner's `document_vectors` rows on every search
(1.6 s at 100,000 documents). Each process now keeps an owner's vectors in memory
(navi/storage/document_vectors.py) and must learn when another process changed them. So
`document_vector_versions` holds one row per owner whose number goes up with every insert, update
or delete of that owner's `document_vectors` rows — by triggers, so no writer can forget it (a
cascade from a deleted document or collection fires them too). A search reads the one row and
compares it with the version its copy was made at.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

EVENTS = {"ai": ("INSERT", "new"), "au": ("UPDATE", "new"), "ad": ("DELETE", "old")}
SQLITE_BUMP = """INSERT INTO document_vector_versions (owner, version) VALUES ({row}.owner, 1)
    ON CONFLICT (owner) DO UPDATE SET version = document_vector_versions.version + 1"""

POSTGRES_FUNCTION = """CREATE FUNCTION navi_document_vectors_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    who text;
BEGIN
    IF TG_OP = 'DELETE' THEN who := OLD.owner; ELSE who := NEW.owner; END IF;
    INSERT INTO document_vector_versions (owner, version) VALUES (who, 1)
        ON CONFLICT (owner) DO UPDATE SET version = document_vector_versions.version + 1;
    IF TG_OP = 'UPDATE' AND OLD.owner <> NEW.owner THEN
        INSERT INTO document_vector_versions (owner, version) VALUES (OLD.owner, 1)
            ON CONFLICT (owner) DO UPDATE SET version = document_vector_versions.version + 1;
    END IF;
    RETURN NULL;
END $$"""


def upgrade() -> None:
    op.create_table(
        "document_vector_versions",
        sa.Column("owner", sa.String(128), primary_key=True),
        sa.Column("version", sa.BigInteger, nullable=False),
    )
    # Owners who have vectors already start at 1.
    op.execute(
        "INSERT INTO document_vector_versions (owner, version) SELECT DISTINCT owner, 1 FROM document_vectors"
    )
    if op.get_bind().dialect.name == "sqlite":
        for suffix, (event, row) in EVENTS.items():
            op.execute(
                f"""CREATE TRIGGER document_vectors_version_{suffix} AFTER {event} ON document_vectors
                BEGIN {SQLITE_BUMP.format(row=row)}; END"""
            )
        # An update that moves a row to another owner changes the old owner's vectors too.
        op.execute(
            f"""CREATE TRIGGER document_vectors_version_au_old AFTER UPDATE OF owner ON document_vectors
            WHEN old.owner <> new.owner BEGIN {SQLITE_BUMP.format(row="old")}; END"""
        )
    else:
        op.execute(POSTGRES_FUNCTION)
        op.execute(
            "CREATE TRIGGER document_vectors_version AFTER INSERT OR UPDATE OR DELETE ON document_vectors "
            "FOR EACH ROW EXECUTE FUNCTION navi_document_vectors_bump()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for suffix in [*EVENTS, "au_old"]:
            op.execute(f"DROP TRIGGER IF EXISTS document_vectors_version_{suffix}")
    else:
        op.execute("DROP TRIGGER IF EXISTS document_vectors_version ON document_vectors")
        op.execute("DROP FUNCTION IF EXISTS navi_document_vectors_bump()")
    op.drop_table("document_vector_versions")
