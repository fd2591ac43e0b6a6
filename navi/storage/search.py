"""Search across conversations in SQL: the rows migration 0015 keeps, ranked by BM25.

Both databases take the newest `WINDOW` matches of the one user a query is for (the row's `owner`
column, filled by the triggers from the session; the session row gives the name and profile) and
rank only those. FTS5 walks the matches newest first and stops at the window: a user with few of a
shared database's messages searching a very common word walks everyone's matches of it (correct,
slower). A prefix of 2 or 3 characters is one list of FTS5's prefix index (migration 0019) rather
than a merge of every word it starts.

SQLite's window is ranked here, in Python (`bm25_order`), not by FTS5's `bm25()`: that function
counts every row holding each word, once per search, to weigh the words (their IDF) — at 1,000,000
messages three quarters of a typical search's time, and what no window bounds — and it counts
every user's rows, so the order of one user's hits would tell which words other users wrote. Here
each word's weight comes from the searching user's own messages only: how many of them there are
(counted once and then topped up: `Counts`, navi/storage/counts.py) and how many hold the word,
counted up to `COUNT_CAP` (a word in more of them than that weighs as little as one in exactly
that many); the last word is counted whole (a prefix of 4 letters or more would merge every word
it starts once more); docs/benchmarks.md has the figures. PostgreSQL ranks its window with
`ts_rank`, which weighs a match by the message alone (no counts over other rows, so nothing of
other users).

The words reach the database as bound parameters built from letters and digits only
(`SearchQuery.fts5`, `.tsquery`), so nothing typed is ever read as query syntax. Snippets are cut in
Python (navi/sessions/search.py), the same for every store.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sqlalchemy import Connection, DateTime, Float, TextualSelect, bindparam, text

from navi.sessions.models import as_utc
from navi.sessions.search import SearchHit, SearchQuery, bm25_idf, bm25_order, snippet
from navi.storage.counts import Counts

# Matches ranked per search: the newest WINDOW of the user's matches (in the date range and
# profile asked for), so a word in 100,000 of someone's messages costs what one in 100 does.
# (500 cost a quarter more at 1,000,000 messages: docs/benchmarks.md.)
WINDOW = 100
# A word's messages are counted up to this many, for its weight (see the module's docstring).
COUNT_CAP = 2000
_COLUMNS = """d.session_id, s.name AS session_name, s.profile_id, d.message_id, d.role,
    d.created_at, d.body"""
# The user's messages holding a word, up to :cap: FTS5 walks the word's list and the (owner, id)
# index of migration 0020 says whose each row is, without reading the row and its text (a third of
# the time the table takes; the planner would read the table).
_COUNT = text(
    """SELECT count(*) FROM (SELECT 1 FROM message_search_fts
        CROSS JOIN message_search d INDEXED BY ix_message_search_owner_id
        ON d.owner = :owner AND d.id = message_search_fts.rowid
        WHERE message_search_fts MATCH :match LIMIT :cap)"""
)
_DETAILS = (
    text(
        """SELECT d.id, d.session_id, s.name AS session_name, s.profile_id, d.message_id, d.role, d.created_at
        FROM message_search d JOIN sessions s ON s.id = d.session_id WHERE d.id IN :ids"""
    )
    .bindparams(bindparam("ids", expanding=True))
    .columns(created_at=DateTime(timezone=True))
)


def _filters(query: SearchQuery) -> tuple[str, str]:
    """(joins, conditions) of the owner, date and profile filters, on `di` (message_search) and `si`."""
    parts = ["di.owner = :owner"]
    if query.since is not None:
        parts.append("di.created_at >= :since")
    if query.until is not None:
        parts.append("di.created_at < :until")
    if query.profile is not None:
        parts.append("si.profile_id = :profile")
    joins = " JOIN sessions si ON si.id = di.session_id" if query.profile is not None else ""
    return joins, "".join(f" AND {p}" for p in parts)


def _with_dates(sql: str, query: SearchQuery) -> TextualSelect:
    dates = [bindparam(name, type_=DateTime(timezone=True)) for name in ("since", "until")]
    statement = text(sql).bindparams(*(d for d in dates if getattr(query, d.key) is not None))
    return statement.columns(created_at=DateTime(timezone=True), rank=Float)


def _sqlite_window(query: SearchQuery) -> TextualSelect:
    """The newest WINDOW matches of the owner in the filters: id and text."""
    joins, conditions = _filters(query)
    return _with_dates(
        f"""SELECT di.id, di.body FROM message_search_fts
            CROSS JOIN message_search di ON di.id = message_search_fts.rowid{joins}
            WHERE message_search_fts MATCH :match{conditions}
            ORDER BY message_search_fts.rowid DESC LIMIT :window""",
        query,
    )


def _postgres_statement(query: SearchQuery) -> TextualSelect:
    # The window is materialised, so the planner never joins it to the whole table; the owner is
    # compared as an expression, so the choice is the GIN index (rare words) or walking ids
    # backwards (common ones), never every row of the owner (see `search`).
    joins, conditions = _filters(query)
    conditions = conditions.replace("di.owner = :owner", "(di.owner || '') = :owner")
    return _with_dates(
        f"""WITH m AS MATERIALIZED (
                SELECT di.id FROM message_search di{joins}
                WHERE di.search @@ to_tsquery('simple'::regconfig, :match){conditions}
                ORDER BY di.id DESC LIMIT :window)
            SELECT {_COLUMNS}, ts_rank(d.search, q) AS rank
            FROM m JOIN message_search d ON d.id = m.id
            JOIN sessions s ON s.id = d.session_id,
            to_tsquery('simple'::regconfig, :match) q
            ORDER BY rank DESC, d.created_at DESC LIMIT :limit""",
        query,
    )


def _count(conn: Connection, params: dict[str, Any]) -> int:
    return int(conn.execute(_COUNT, params).scalar() or 0)


def new_counts() -> Counts:
    """What a store keeps of its users' counts between searches."""
    return Counts("message_search")


def _weights(
    conn: Connection, query: SearchQuery, owner: str, counts: Counts, matched: int
) -> dict[str, float]:
    """Each query word's IDF among the owner's messages, from counts of the owner's messages that
    stop at COUNT_CAP. The last word is counted whole unless it is 2 or 3 characters (one list of
    the prefix index); a word starts at least the `matched` messages."""
    total = max(counts.total(conn, owner), matched)
    weights = {}
    for n, term in enumerate(query.terms):
        prefix = n == len(query.terms) - 1 and len(term) <= 3
        match = f'"{term}"*' if prefix else f'"{term}"'
        params = {"match": match, "owner": owner, "cap": COUNT_CAP}
        count = counts.holding(owner, match, total, partial(_count, conn, params))
        weights[term] = bm25_idf(total, max(matched, count))
    return weights


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


def search(conn: Connection, query: SearchQuery, owner: str, counts: Counts | None = None) -> list[SearchHit]:
    """The owner's best hits for `query`; `counts`, kept by the caller between searches (a fresh
    one counts everything again)."""
    sqlite = conn.dialect.name == "sqlite"
    params: dict[str, Any] = {
        "match": query.fts5() if sqlite else query.tsquery(),
        "owner": owner,
        "limit": query.limit,
        "window": WINDOW,
    }
    for name in ("since", "until", "profile"):  # the filters the statement has
        if getattr(query, name) is not None:
            params[name] = getattr(query, name)
    if sqlite:
        window = [(r.id, r.body) for r in conn.execute(_sqlite_window(query), params)]
        if not window:
            return []
        weights = _weights(conn, query, owner, counts or new_counts(), len(window))
        chosen = bm25_order(window, query, weights)[: query.limit]
        bodies = dict(window)
        details = {r.id: r for r in conn.execute(_DETAILS, {"ids": chosen})}
        return [_hit(details[i], bodies[i], query) for i in chosen if i in details]
    # PostgreSQL prices a prefix match on a GIN index so high that it would rather test every
    # row's tsvector (30 ms at 10,000 messages); for this transaction it may not.
    conn.execute(text("SET LOCAL enable_seqscan = off"))
    return [_hit(row, row.body, query) for row in conn.execute(_postgres_statement(query), params)]
