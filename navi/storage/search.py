"""Search across conversations in SQL: the rows migration 0015 keeps, ranked by the database.

SQLite ranks with FTS5's bm25, PostgreSQL with `ts_rank` over the GIN-indexed `tsvector`, each
among the newest `WINDOW` matches of the one user a query is for (the row's `owner` column, filled
by the triggers from the session); the session row gives the name and profile. FTS5 walks the
matches newest first and stops at the window: a user with few of a shared database's messages
searching a very common word walks everyone's matches of it (correct, slower). FTS5's bm25 also
counts every match of each word once per search (its IDF), which no window bounds: the cost of a
word in half of a million messages (docs/benchmarks.md). A prefix of 2 or 3 characters is one list
of FTS5's prefix index (migration 0019) rather than a merge of every word it starts. The words reach
the database as one bound parameter built from letters and digits only (`SearchQuery.fts5`,
`.tsquery`), so nothing typed is ever read as query syntax. Snippets are cut in Python
(navi/sessions/search.py), the same for every store.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, DateTime, Float, TextualSelect, bindparam, text

from navi.sessions.models import as_utc
from navi.sessions.search import SearchHit, SearchQuery, snippet

# Matches ranked per search: the newest WINDOW of the user's matches (in the date range and
# profile asked for), so a word in 100,000 of someone's messages costs what one in 100 does.
# (500 cost a quarter more at 1,000,000 messages: docs/benchmarks.md.)
WINDOW = 100
_COLUMNS = """d.session_id, s.name AS session_name, s.profile_id, d.message_id, d.role,
    d.created_at, d.body"""


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


def _statement(query: SearchQuery, sqlite: bool) -> TextualSelect:
    joins, conditions = _filters(query)
    if sqlite:
        joins = f" JOIN message_search di ON di.id = message_search_fts.rowid{joins}"
        sql = f"""SELECT {_COLUMNS}, m.rank AS rank
            FROM (SELECT message_search_fts.rowid AS id, bm25(message_search_fts) AS rank
                  FROM message_search_fts{joins}
                  WHERE message_search_fts MATCH :match{conditions}
                  ORDER BY message_search_fts.rowid DESC LIMIT :window) m
            JOIN message_search d ON d.id = m.id
            JOIN sessions s ON s.id = d.session_id
            ORDER BY m.rank, d.created_at DESC LIMIT :limit"""
    else:
        # The window is materialised, so the planner never joins it to the whole table; the owner
        # is compared as an expression, so the choice is the GIN index (rare words) or walking ids
        # backwards (common ones), never every row of the owner (see `search`).
        conditions = conditions.replace("di.owner = :owner", "(di.owner || '') = :owner")
        sql = f"""WITH m AS MATERIALIZED (
                SELECT di.id FROM message_search di{joins}
                WHERE di.search @@ to_tsquery('simple'::regconfig, :match){conditions}
                ORDER BY di.id DESC LIMIT :window)
            SELECT {_COLUMNS}, ts_rank(d.search, q) AS rank
            FROM m JOIN message_search d ON d.id = m.id
            JOIN sessions s ON s.id = d.session_id,
            to_tsquery('simple'::regconfig, :match) q
            ORDER BY rank DESC, d.created_at DESC LIMIT :limit"""
    dates = [bindparam(name, type_=DateTime(timezone=True)) for name in ("since", "until")]
    statement = text(sql).bindparams(*(d for d in dates if getattr(query, d.key) is not None))
    return statement.columns(created_at=DateTime(timezone=True), rank=Float)


def search(conn: Connection, query: SearchQuery, owner: str) -> list[SearchHit]:
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
    if not sqlite:
        # PostgreSQL prices a prefix match on a GIN index so high that it would rather test every
        # row's tsvector (30 ms at 10,000 messages); for this transaction it may not.
        conn.execute(text("SET LOCAL enable_seqscan = off"))
    hits = []
    for row in conn.execute(_statement(query, sqlite), params):
        shown, marks = snippet(row.body, query)
        hits.append(
            SearchHit(
                session_id=row.session_id,
                session_name=row.session_name,
                profile_id=row.profile_id,
                message_id=row.message_id,
                role=row.role,
                created_at=as_utc(row.created_at),
                snippet=shown,
                highlights=marks,
            )
        )
    return hits
