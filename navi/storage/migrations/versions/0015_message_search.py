"""Search across conversations: the searched text of every display message, with a full-text index.

`message_search` holds one row per searched message (user and assistant messages by the text a
client shows; not tool results, compression markers, summaries, failed turns' records or synthetic
images — the rule of navi/sessions/search.py) with its session's owner, kept in step with
`session_messages` by triggers, so every writer indexes what it appends without knowing. On SQLite
a contentless FTS5 table indexes it (the text is stored once, in `message_search`); on PostgreSQL
a generated `tsvector` column with a GIN index, and (owner, id) for a user's newest matches
first. Existing messages are indexed here, once.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

# What is searched, as SQL over a `session_messages` row (`r`): the rule of `searchable_text`.
SQLITE_BODY = "coalesce(json_extract(r.data, '$.metadata.text'), json_extract(r.data, '$.content'))"
SQLITE_SEARCHED = f"""r.role IN ('user', 'assistant')
    AND coalesce(json_extract(r.data, '$.is_compression'), 0) = 0
    AND coalesce(json_extract(r.data, '$.is_summary'), 0) = 0
    AND json_type(r.data, '$.metadata.synthetic') IS NULL
    AND NOT (json_type(r.data, '$.metadata.error') IS NOT NULL
             AND json_type(r.data, '$.metadata.failed_turn') IS NOT NULL)
    AND coalesce({SQLITE_BODY}, '') != ''"""
SQLITE_INSERT = f"""INSERT INTO message_search
        (session_id, owner, position, message_id, role, created_at, body)
    SELECT r.session_id, s.owner, r.position, r.message_id, r.role, r.created_at, {SQLITE_BODY}
    FROM session_messages r JOIN sessions s ON s.id = r.session_id WHERE {{where}}"""
SQLITE_NEW_ROW = f"r.session_id = new.session_id AND r.position = new.position AND {SQLITE_SEARCHED}"

SQLITE = [
    """CREATE VIRTUAL TABLE message_search_fts USING fts5(
        body, content='', tokenize='unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER message_search_fts_ai AFTER INSERT ON message_search BEGIN
        INSERT INTO message_search_fts(rowid, body) VALUES (new.id, new.body);
    END""",
    """CREATE TRIGGER message_search_fts_ad AFTER DELETE ON message_search BEGIN
        INSERT INTO message_search_fts(message_search_fts, rowid, body) VALUES ('delete', old.id, old.body);
    END""",
    # The display buffer is append-only; a row is indexed when it is written. (`r` is the new row:
    # the insert reads it back by its key, so the rule above is written once.)
    f"""CREATE TRIGGER session_messages_search_ai AFTER INSERT ON session_messages BEGIN
        {SQLITE_INSERT.format(where=SQLITE_NEW_ROW)};
    END""",
    """CREATE TRIGGER session_messages_search_ad AFTER DELETE ON session_messages BEGIN
        DELETE FROM message_search WHERE session_id = old.session_id AND position = old.position;
    END""",
]

POSTGRES_FUNCTION = """CREATE FUNCTION navi_message_search_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    doc jsonb := NEW.data::jsonb;
    meta jsonb := coalesce(NEW.data::jsonb -> 'metadata', '{}'::jsonb);
    body text := coalesce(meta ->> 'text', doc ->> 'content');
BEGIN
    IF NEW.role IN ('user', 'assistant')
        AND coalesce((doc ->> 'is_compression')::boolean, false) = false
        AND coalesce((doc ->> 'is_summary')::boolean, false) = false
        AND NOT meta ? 'synthetic'
        AND NOT (meta ? 'error' AND meta ? 'failed_turn')
        AND coalesce(body, '') <> ''
    THEN
        INSERT INTO message_search (session_id, owner, position, message_id, role, created_at, body)
        SELECT NEW.session_id, s.owner, NEW.position, NEW.message_id, NEW.role, NEW.created_at, body
        FROM sessions s WHERE s.id = NEW.session_id;
    END IF;
    RETURN NULL;
END $$"""
POSTGRES_DELETE = """CREATE FUNCTION navi_message_search_drop() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_search WHERE session_id = OLD.session_id AND position = OLD.position;
    RETURN NULL;
END $$"""
POSTGRES = [
    "ALTER TABLE message_search ADD COLUMN search tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, body)) STORED",
    "CREATE INDEX ix_message_search_search ON message_search USING GIN (search)",
    "CREATE INDEX ix_message_search_owner_id ON message_search (owner, id)",
    POSTGRES_FUNCTION,
    POSTGRES_DELETE,
    "CREATE TRIGGER session_messages_search_ai AFTER INSERT ON session_messages "
    "FOR EACH ROW EXECUTE FUNCTION navi_message_search_add()",
    "CREATE TRIGGER session_messages_search_ad AFTER DELETE ON session_messages "
    "FOR EACH ROW EXECUTE FUNCTION navi_message_search_drop()",
]


def upgrade() -> None:
    op.create_table(
        "message_search",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "session_id", sa.String(36), sa.ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("message_id", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.UniqueConstraint("session_id", "position", name="uq_message_search_session_position"),
    )
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE:
            op.execute(statement)
        op.execute(SQLITE_INSERT.format(where=SQLITE_SEARCHED))
    else:
        for statement in POSTGRES:
            op.execute(statement)
        # Existing rows: an INSERT … SELECT of the same rows into a scratch copy of the table
        # fires the same trigger function, so the rule is written once.
        op.execute("CREATE TEMPORARY TABLE navi_backfill (LIKE session_messages)")
        op.execute(
            "CREATE TRIGGER navi_backfill_ai AFTER INSERT ON navi_backfill "
            "FOR EACH ROW EXECUTE FUNCTION navi_message_search_add()"
        )
        op.execute("INSERT INTO navi_backfill SELECT * FROM session_messages")
        op.execute("DROP TABLE navi_backfill")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in (
            "session_messages_search_ai",
            "session_messages_search_ad",
            "message_search_fts_ai",
            "message_search_fts_ad",
        ):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS message_search_fts")
    else:
        op.execute("DROP TRIGGER IF EXISTS session_messages_search_ai ON session_messages")
        op.execute("DROP TRIGGER IF EXISTS session_messages_search_ad ON session_messages")
        op.execute("DROP FUNCTION IF EXISTS navi_message_search_add()")
        op.execute("DROP FUNCTION IF EXISTS navi_message_search_drop()")
    op.drop_table("message_search")
