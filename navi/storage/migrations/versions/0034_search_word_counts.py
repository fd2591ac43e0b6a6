"""Search across conversations: each user's word counts kept by triggers, for BM25's word weights.

A search weighs each of its words by how few of the searching user's messages hold it (BM25's IDF,
navi/storage/search.py). Counting those on every search walked each word's whole list of matches
(FTS5's `bm25()` did, then a count capped at 2,000 did): at 1,000,000 messages most of a search.
`message_search_words` holds, per owner, how many of their searched messages hold each word, and
under the empty word how many searched messages they have; triggers on `message_search` add a
message's distinct words when it is indexed and take them away when it is deleted, so a search
reads one row per word.

SQLite splits a message into words with `navi_words(body)`, a function every connection Navi opens
defines (navi/storage/database.py): the message's distinct words as FTS5's tokenizer sees them
(folded, diacritics removed), as a JSON array led by the empty word. (A connection without it —
the `sqlite3` shell — cannot write or delete searched messages.) PostgreSQL takes the words of the
row's `tsvector`; its words are compared bytewise (`COLLATE "C"`), so a prefix is a range of the key.
A user's rows are written after their empty word's row, which every writer of that user's messages
updates first: it is held to the end of the transaction, so two transactions never wait on each
other's word rows in opposite orders.

Existing messages are counted here once; past 20,000 messages a progress line tells how far.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-07
"""

from __future__ import annotations

import time
from collections import Counter

from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None

SQLITE = [
    """CREATE TABLE message_search_words (
        owner VARCHAR(128) NOT NULL, word TEXT NOT NULL, n INTEGER NOT NULL,
        PRIMARY KEY (owner, word)) WITHOUT ROWID""",
    """CREATE TRIGGER message_search_words_ai AFTER INSERT ON message_search BEGIN
        INSERT INTO message_search_words (owner, word, n)
        SELECT new.owner, value, 1 FROM json_each(navi_words(new.body)) WHERE true
        ON CONFLICT (owner, word) DO UPDATE SET n = n + 1;
    END""",
    """CREATE TRIGGER message_search_words_ad AFTER DELETE ON message_search BEGIN
        UPDATE message_search_words SET n = n - 1
        WHERE owner = old.owner AND word IN (SELECT value FROM json_each(navi_words(old.body)));
        DELETE FROM message_search_words
        WHERE owner = old.owner AND n <= 0 AND word IN (SELECT value FROM json_each(navi_words(old.body)));
    END""",
]
POSTGRES = [
    """CREATE TABLE message_search_words (
        owner VARCHAR(128) NOT NULL, word TEXT COLLATE "C" NOT NULL, n INTEGER NOT NULL,
        PRIMARY KEY (owner, word))""",
    """CREATE FUNCTION navi_message_words_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO message_search_words (owner, word, n) VALUES (NEW.owner, '', 1)
        ON CONFLICT (owner, word) DO UPDATE SET n = message_search_words.n + 1;
        INSERT INTO message_search_words (owner, word, n)
        SELECT NEW.owner, w, 1 FROM unnest(tsvector_to_array(NEW.search)) w ORDER BY w
        ON CONFLICT (owner, word) DO UPDATE SET n = message_search_words.n + 1;
        RETURN NULL;
    END $$""",
    """CREATE FUNCTION navi_message_words_drop() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE message_search_words SET n = n - 1 WHERE owner = OLD.owner AND word = '';
        UPDATE message_search_words SET n = n - 1
        WHERE owner = OLD.owner AND word = ANY (tsvector_to_array(OLD.search));
        DELETE FROM message_search_words
        WHERE owner = OLD.owner AND n <= 0 AND word = ANY (array[''] || tsvector_to_array(OLD.search));
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER message_search_words_ai AFTER INSERT ON message_search "
    "FOR EACH ROW EXECUTE FUNCTION navi_message_words_add()",
    "CREATE TRIGGER message_search_words_ad AFTER DELETE ON message_search "
    "FOR EACH ROW EXECUTE FUNCTION navi_message_words_drop()",
]


def _count_sqlite() -> None:
    """Existing messages' words, counted in Python with the function the triggers call."""
    from navi.storage.counts import driver
    from navi.storage.database import indexed_words  # what navi_words returns, as a list
    from navi.storage.migrate import PROGRESS_ROWS, progress

    raw = driver(op.get_bind())
    total = raw.execute("SELECT count(*) FROM message_search").fetchone()[0]
    counts: Counter[tuple[str, str]] = Counter()

    done, last, began = 0, -1, time.monotonic()
    while True:
        rows = raw.execute(
            "SELECT id, owner, body FROM message_search WHERE id > ? ORDER BY id LIMIT ?",
            (last, PROGRESS_ROWS),
        ).fetchall()
        if not rows:
            break
        for _, owner, body in rows:
            counts.update((owner, w) for w in indexed_words(body))
        done, last = done + len(rows), rows[-1][0]
        if total > PROGRESS_ROWS:
            progress("counting the words of searched messages", done, total, began)
    raw.executemany(
        "INSERT INTO message_search_words (owner, word, n) VALUES (?, ?, ?)",
        ((owner, word, n) for (owner, word), n in counts.items()),
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE:
            op.execute(statement)
        _count_sqlite()
    else:
        for statement in POSTGRES:
            op.execute(statement)
        op.execute(
            """INSERT INTO message_search_words (owner, word, n)
            SELECT owner, w, count(*) FROM message_search,
                unnest(array[''] || tsvector_to_array(search)) w
            GROUP BY owner, w"""
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS message_search_words_ai")
        op.execute("DROP TRIGGER IF EXISTS message_search_words_ad")
    else:
        op.execute("DROP TRIGGER IF EXISTS message_search_words_ai ON message_search")
        op.execute("DROP TRIGGER IF EXISTS message_search_words_ad ON message_search")
        op.execute("DROP FUNCTION IF EXISTS navi_message_words_add()")
        op.execute("DROP FUNCTION IF EXISTS navi_message_words_drop()")
    op.drop_table("message_search_words")
