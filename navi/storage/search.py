"""Search across conversations in SQL: the rows migration 0015 keeps, ranked by BM25.

Both databases take the newest `WINDOW` matches of the one user a query is for (the row's `owner`
column, filled by the triggers from the session; the session row gives the name and profile) and
rank only those, here in Python (`bm25_order`). FTS5 walks the matches newest first and stops at
the window: a user with few of a shared database's messages searching a very common word walks
everyone's matches of it (correct, slower). A prefix of 2 or 3 characters is one list of FTS5's
prefix index (migration 0019) rather than a merge of every word it starts.

Each word weighs by how few of the searching user's messages hold it (its IDF), read from
`message_search_words` (migration 0031), which triggers keep per user as messages are indexed and
deleted — one row per word, where counting them (FTS5's `bm25()` did, for every user's rows) walked
each word's whole list on every search: at 1,000,000 messages most of a search, and what no window
bounds. Only the searching user's counts are read, so the order of one user's hits never tells which
words other users wrote. The last word, a prefix, weighs as the words it starts together when it
is of 2 or 3 characters (the key's range, up to `PREFIX_WORDS` words), else as the whole word (a
prefix of 4 letters or more starts few other words). PostgreSQL's window was ranked by `ts_rank`
before, which weighs a match by its message alone; it is now ranked the same way as SQLite's.

A temporary chat's messages are indexed like any (the triggers do not know the session's kind) but
never found: the owner's temporary sessions — few, mostly none — are read first and left out of the
window by id, so the common search's statement and plan stay as they were.

The words reach the database as bound parameters built from letters and digits only
(`SearchQuery.fts5`, `.tsquery`), so nothing typed is ever read as query syntax. Snippets are cut in
Python (navi/sessions/search.py), the same for every store.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, DateTime, Float, TextualSelect, bindparam, select, text

from navi.sessions.models import as_utc
from navi.sessions.search import SearchHit, SearchQuery, bm25_idf, bm25_order, snippet
from navi.storage.counts import driver
from navi.storage.schema import sessions

# Matches ranked per search: the newest WINDOW of the user's matches (in the date range and
# profile asked for), so a word in 100,000 of someone's messages costs what one in 100 does.
# (500 cost a quarter more at 1,000,000 messages: docs/benchmarks.md.)
WINDOW = 100
# Words of the user's a short last word (2 or 3 characters) is summed over, at most, for its weight.
PREFIX_WORDS = 5000
# The owner's count of messages ('') and of each whole word of the query.
_WORDS = text("SELECT word, n FROM message_search_words WHERE owner = :owner AND word IN :words").bindparams(
    bindparam("words", expanding=True)
)
# Messages holding a word the prefix starts, summed over those words (a message with two of them
# counts twice: an upper bound, kept below the owner's count).
_PREFIX = text(
    """SELECT coalesce(sum(n), 0) FROM (SELECT n FROM message_search_words
        WHERE owner = :owner AND word >= :low AND word < :high LIMIT :most) AS w"""
)
_SQLITE_WORDS = "SELECT word, n FROM message_search_words WHERE owner = ? AND word IN ({marks})"
_SQLITE_PREFIX = """SELECT coalesce(sum(n), 0) FROM (SELECT n FROM message_search_words
    WHERE owner = :owner AND word >= :low AND word < :high LIMIT :most)"""
_DETAILS = (
    text(
        """SELECT d.id, d.session_id, s.name AS session_name, s.profile_id, d.message_id, d.role, d.created_at
        FROM message_search d JOIN sessions s ON s.id = d.session_id WHERE d.id IN :ids"""
    )
    .bindparams(bindparam("ids", expanding=True))
    .columns(created_at=DateTime(timezone=True))
)


def _filters(query: SearchQuery, hidden: bool) -> tuple[str, str]:
    """(joins, conditions) of the owner, date and profile filters, on `di` (message_search) and `si`;
    with `hidden`, the sessions in `:hidden` (temporary chats) left out."""
    parts = ["di.owner = :owner"]
    if hidden:
        parts.append("di.session_id NOT IN :hidden")
    if query.since is not None:
        parts.append("di.created_at >= :since")
    if query.until is not None:
        parts.append("di.created_at < :until")
    if query.profile is not None:
        parts.append("si.profile_id = :profile")
    joins = " JOIN sessions si ON si.id = di.session_id" if query.profile is not None else ""
    return joins, "".join(f" AND {p}" for p in parts)


def _with_dates(sql: str, query: SearchQuery, hidden: bool) -> TextualSelect:
    dates = [bindparam(name, type_=DateTime(timezone=True)) for name in ("since", "until")]
    statement = text(sql).bindparams(*(d for d in dates if getattr(query, d.key) is not None))
    if hidden:
        statement = statement.bindparams(bindparam("hidden", expanding=True))
    return statement.columns(created_at=DateTime(timezone=True), rank=Float)


def _sqlite_window(query: SearchQuery, hidden: bool) -> TextualSelect:
    """The newest WINDOW matches of the owner in the filters: id and text."""
    joins, conditions = _filters(query, hidden)
    return _with_dates(
        f"""SELECT di.id, di.body FROM message_search_fts
            CROSS JOIN message_search di ON di.id = message_search_fts.rowid{joins}
            WHERE message_search_fts MATCH :match{conditions}
            ORDER BY message_search_fts.rowid DESC LIMIT :window""",
        query,
        hidden,
    )


def _postgres_window(query: SearchQuery, hidden: bool) -> TextualSelect:
    # The owner is compared as an expression, so the choice is the GIN index (rare words) or
    # walking ids backwards (common ones), never every row of the owner (see `search`).
    joins, conditions = _filters(query, hidden)
    conditions = conditions.replace("di.owner = :owner", "(di.owner || '') = :owner")
    return _with_dates(
        f"""SELECT di.id, di.body FROM message_search di{joins}
            WHERE di.search @@ to_tsquery('simple'::regconfig, :match){conditions}
            ORDER BY di.id DESC LIMIT :window""",
        query,
        hidden,
    )


def weights(conn: Connection, query: SearchQuery, owner: str, matched: int) -> dict[str, float]:
    """Each query word's IDF among the owner's messages, from the counts the triggers keep; a word
    is held by at least the `matched` messages of the window."""
    *whole, last = query.terms
    short = len(last) <= 3
    words = ["", *whole] if short else ["", *whole, last]
    prefix = {"owner": owner, "low": last, "high": last + "\U0010ffff", "most": PREFIX_WORDS}
    if conn.dialect.name == "sqlite":  # to the driver: through SQLAlchemy each costs what running it does
        raw = driver(conn)
        marks = ", ".join("?" * len(words))
        found = dict(raw.execute(_SQLITE_WORDS.format(marks=marks), [owner, *words]).fetchall())
        if short:
            found[last] = raw.execute(_SQLITE_PREFIX, prefix).fetchone()[0]
    else:
        found = {r.word: int(r.n) for r in conn.execute(_WORDS, {"owner": owner, "words": words})}
        if short:
            found[last] = int(conn.execute(_PREFIX, prefix).scalar() or 0)
    total = max(found.get("", 0), matched)
    return {t: bm25_idf(total, min(total, max(matched, found.get(t, 0)))) for t in query.terms}


def _hit(row: Any, body: str, query: SearchQuery) -> SearchHit:
    shown, marks = snippet(body, query)
    return SearchHit(
        session_id=row.session_id,
        session_name=row.session_name,
        profile_id=row.profile_id,
        message_id=row.message_id,
        role=row.role,
        created_at=as_utc(row.created_at),
        snippet=shown,
        highlights=marks,
    )


def search(conn: Connection, query: SearchQuery, owner: str) -> list[SearchHit]:
    """The owner's best hits for `query`."""
    sqlite = conn.dialect.name == "sqlite"
    params: dict[str, Any] = {
        "match": query.fts5() if sqlite else query.tsquery(),
        "owner": owner,
        "window": WINDOW,
    }
    for name in ("since", "until", "profile"):  # the filters the statement has
        if getattr(query, name) is not None:
            params[name] = getattr(query, name)
    if not sqlite:
        # PostgreSQL prices a prefix match on a GIN index so high that it would rather test every
        # row's tsvector (30 ms at 10,000 messages); for this transaction it may not.
        conn.execute(text("SET LOCAL enable_seqscan = off"))
    temporary = select(sessions.c.id).where(sessions.c.owner == owner, sessions.c.temporary.is_(True))
    hidden = list(conn.execute(temporary).scalars())  # temporary chats: never found
    if hidden:
        params["hidden"] = hidden
    statement = _sqlite_window(query, bool(hidden)) if sqlite else _postgres_window(query, bool(hidden))
    window = [(r.id, r.body) for r in conn.execute(statement, params)]
    if not window:
        return []
    chosen = bm25_order(window, query, weights(conn, query, owner, len(window)))[: query.limit]
    bodies = dict(window)
    details = {r.id: r for r in conn.execute(_DETAILS, {"ids": chosen})}
    return [_hit(details[i], bodies[i], query) for i in chosen if i in details]
