"""Search across conversations on SQLite: the FTS5 index gets prefix indexes of 2 and 3 characters.

A search's last word also matches the start of a longer word (`"conf"*`), and the page searches
as one types, from two characters on. Without a prefix index FTS5 answers a prefix by merging the
lists of every indexed word that starts with it, whole, before the first match comes out (a
search for two letters at 1,000,000 messages: seconds at worst); with one, a prefix of 2 or 3
characters is one list, read newest first up to the window like a whole word (docs/benchmarks.md).
The table is contentless, so it is made again and filled from `message_search`; the triggers of
migration 0015 write to it by name and go on. PostgreSQL's GIN index is unchanged.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from __future__ import annotations

import time

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

TOKENIZE = "tokenize='unicode61 remove_diacritics 2'"


def _rebuild(options: str) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    from navi.storage.counts import driver
    from navi.storage.migrate import PROGRESS_ROWS, progress

    op.execute("DROP TABLE message_search_fts")
    op.execute(f"CREATE VIRTUAL TABLE message_search_fts USING fts5(body, content='', {options})")
    # In steps of ids, with a line after each on a large database (1,000,000 messages: over a minute).
    raw = driver(op.get_bind())
    total, last = raw.execute("SELECT count(*), coalesce(max(id), 0) FROM message_search").fetchone()
    done, after, began = 0, 0, time.monotonic()  # (ids start at 1)
    while after < last:
        upto = raw.execute(
            "SELECT max(id) FROM (SELECT id FROM message_search WHERE id > ? ORDER BY id LIMIT ?)",
            (after, PROGRESS_ROWS),
        ).fetchone()[0]
        raw.execute(
            "INSERT INTO message_search_fts(rowid, body) SELECT id, body FROM message_search "
            "WHERE id > ? AND id <= ?",
            (after, upto),
        )
        done, after = min(total, done + PROGRESS_ROWS), upto
        if total > PROGRESS_ROWS:
            progress("indexing searched messages again", done, total, began)
    op.execute("INSERT INTO message_search_fts(message_search_fts) VALUES ('optimize')")  # one segment
    if total > PROGRESS_ROWS:
        progress("indexing searched messages again (merged)", total, total, began)


def upgrade() -> None:
    _rebuild(f"{TOKENIZE}, prefix='2 3'")


def downgrade() -> None:
    _rebuild(TOKENIZE)
