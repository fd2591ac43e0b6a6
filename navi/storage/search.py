"""Search across conversations in SQL: the rows migration 0015 keeps, ranked by the database.

SQLite ranks with FTS5's bm25, PostgreSQL with `ts_rank` over the GIN-indexed `tsvector`; both
join the session row for its owner (every query is one owner's), name and profile. The words reach
the database as one bound parameter built from letters and digits only (`SearchQuery.fts5`,
`.tsquery`), so nothing typed is ever read as query syntax. Snippets are cut in Python
(navi/sessions/search.py), the same for every store.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, DateTime, Float, TextualSelect, bindparam, text

from navi.sessions.models import as_utc
from navi.sessions.search import SearchHit, SearchQuery, snippet

_COLUMNS = """d.session_id, s.name AS session_name, s.profile_id, d.message_id, d.role,
    d.created_at, d.body"""


def _filters(query: SearchQuery) -> str:
    parts = ["s.owner = :owner"]
    if query.since is not None:
        parts.append("d.created_at >= :since")
    if query.until is not None:
        parts.append("d.created_at < :until")
    if query.profile is not None:
        parts.append("s.profile_id = :profile")
    return " AND ".join(parts)


def _statement(query: SearchQuery, sqlite: bool) -> TextualSelect:
    if sqlite:
        sql = f"""SELECT {_COLUMNS}, f.rank AS rank
            FROM (SELECT rowid, rank FROM message_search_fts WHERE message_search_fts MATCH :match) f
            JOIN message_search d ON d.id = f.rowid
            JOIN sessions s ON s.id = d.session_id
            WHERE {_filters(query)}
            ORDER BY f.rank, d.created_at DESC LIMIT :limit"""
    else:
        sql = f"""SELECT {_COLUMNS}, ts_rank(d.search, q) AS rank
            FROM message_search d JOIN sessions s ON s.id = d.session_id,
                 to_tsquery('simple'::regconfig, :match) q
            WHERE d.search @@ q AND {_filters(query)}
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
    }
    for name in ("since", "until", "profile"):  # the filters the statement has
        if getattr(query, name) is not None:
            params[name] = getattr(query, name)
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
