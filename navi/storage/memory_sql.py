"""The memory store's SQL: the full-text queries, row conversion, and the rules that write a fact
(add, update, retire, edit) inside one transaction. `navi.storage.memory` is the store that uses them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from sqlalchemy import Connection, DateTime, Float, bindparam, insert, select, text, update

from navi.llm.messages import utcnow
from navi.logging import get_logger
from navi.memory.base import (
    OUTCOMES,
    Fact,
    Source,
    UpsertOutcome,
    decide,
    log_decision,
)
from navi.sessions.models import as_utc
from navi.sessions.search import fold
from navi.storage import fact_rank
from navi.storage.counts import Counts, driver
from navi.storage.schema import memory_facts

log = get_logger(__name__)

Embed = Callable[[list[str]], Awaitable[list[list[float]]]]
CANDIDATES = 30  # from each ranking, before they are fused
RRF_K = 60  # reciprocal rank fusion: a result at rank r adds 1 / (RRF_K + r)
# Below this cosine similarity a fact is not "about" the query: without it every question would
# find something by meaning, and a question with no answer in memory could never come back empty.
# Each model has its own scale, so an embedder may bring its own (`min_similarity`).
MIN_SIMILARITY = 0.5

# Ranking every match of a very common word costs time in proportion to the matches (50,000 of
# them in the benchmark). So the newest WINDOW matches are taken first — FTS5 walks its index in
# rowid order and stops — and only those are ranked. When a query matches fewer than WINDOW facts
# (the usual case) this is exactly "rank all matches"; when it matches more, the best of the most
# recent WINDOW come back, which for a personal memory is the right tie-break anyway. The window is
# the owner's own (current) matches: other users' facts never push someone's out of it. They are
# ranked in Python (`navi.storage.fact_rank`), not by FTS5's `bm25()`, which counts every fact
# holding each word on every search (docs/benchmarks.md).
WINDOW = 100

# The statements of a SQLite keyword search go straight to the driver (`sqlite_ranked`): through
# SQLAlchemy each would cost about as much as running it. FTS5 walks the matches and each is then
# looked up in the table (CROSS JOIN: the planner must not walk the owner's facts instead).
SQLITE_WINDOW = """SELECT f.id, f.owner, f.category, f.key, f.value, f.session_id, f.created_at,
    f.updated_at, f.confirmations, f.source, f.retired_at, f.replaced_by
    FROM memory_facts_fts CROSS JOIN memory_facts f ON f.id = memory_facts_fts.rowid
    WHERE memory_facts_fts MATCH :query AND f.owner = :owner AND (:history OR f.retired_at IS NULL)
    ORDER BY memory_facts_fts.rowid DESC LIMIT :window"""
# How many of the owner's facts (current or not, as FTS5's bm25 counts) hold a word: the newest
# COUNT_CAP of them and the oldest id among those (`fact_rank.matches` estimates the rest from it).
# FTS5 walks the word's list and the (owner, id) index of migration 0022 says whose each row is,
# without reading the row — unless every fact is the owner's (`Counts.span`), when the list alone
# gives the same numbers in a third of the time.
SQLITE_COUNT = """SELECT count(*), min(id) FROM (SELECT f.id FROM memory_facts_fts
    CROSS JOIN memory_facts f INDEXED BY ix_memory_facts_owner_id
    ON f.owner = :owner AND f.id = memory_facts_fts.rowid
    WHERE memory_facts_fts MATCH :match ORDER BY memory_facts_fts.rowid DESC LIMIT :cap)"""
SQLITE_COUNT_ALONE = """SELECT count(*), min(rowid) FROM (SELECT rowid FROM memory_facts_fts
    WHERE memory_facts_fts MATCH :match ORDER BY rowid DESC LIMIT :cap)"""
# The owner's facts before id :oldest, in that index alone (for a word past COUNT_CAP).
SQLITE_BEFORE = "SELECT count(*) FROM memory_facts WHERE owner = :owner AND id < :oldest"
SQLITE_SINCE = "SELECT count(*) FROM memory_facts WHERE owner = :owner AND id >= :oldest"
# PostgreSQL's GIN index finds matches but cannot return them newest-first, so there is no cheap
# window: every match is ranked, with only the id and the rank carried until the top ones are chosen.
POSTGRES_SEARCH = text(
    """SELECT f.id, f.owner, f.category, f.key, f.value, f.session_id, f.created_at, f.updated_at,
              f.confirmations, f.source, f.retired_at, f.replaced_by, r.rank AS rank
       FROM (SELECT id, retired_at IS NOT NULL AS retired, ts_rank(search, query) AS rank
             FROM memory_facts, to_tsquery('english', :query) query
             WHERE owner = :owner AND search @@ query AND (:history OR retired_at IS NULL)
             ORDER BY retired, rank DESC LIMIT :limit) r
       JOIN memory_facts f ON f.id = r.id
       ORDER BY r.retired, r.rank DESC"""
).columns(
    created_at=DateTime(timezone=True),
    updated_at=DateTime(timezone=True),
    retired_at=DateTime(timezone=True),
    rank=Float,
)
CURRENT = memory_facts.c.retired_at.is_(None)
# A fact without its vector (kilobytes that nothing but the scan reads).
FACT_COLUMNS = [c for c in memory_facts.c if c.name != "embedding"]
FACTS_BY_ID = select(*FACT_COLUMNS).where(memory_facts.c.id.in_(bindparam("ids", expanding=True)))
_STATES = select(memory_facts.c.id, memory_facts.c.owner, memory_facts.c.retired_at).where(
    memory_facts.c.id.in_(bindparam("ids", expanding=True))
)
# On SQLite, one statement whatever the number of ids (the driver keeps it prepared).
_SQLITE_STATES = """SELECT id, owner, retired_at IS NOT NULL FROM memory_facts
    WHERE id IN (SELECT value FROM json_each(:ids))"""


def fact_states(conn: Connection, ids: list[int]) -> list[tuple[int, str, bool]]:
    """Each fact's (id, owner, retired), by primary key only."""
    if conn.dialect.name == "sqlite":
        rows = driver(conn).execute(_SQLITE_STATES, {"ids": json.dumps(ids)})
        return [(fact_id, owner, bool(retired)) for fact_id, owner, retired in rows]
    return [(r.id, r.owner, r.retired_at is not None) for r in conn.execute(_STATES, {"ids": ids})]


def to_fact(row: Any, score: float = 0.0) -> Fact:
    return Fact(
        id=row.id,
        owner=row.owner,
        category=row.category,
        key=row.key,
        value=row.value,
        session_id=row.session_id,
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
        confirmations=row.confirmations,
        source=row.source,
        retired_at=as_utc(row.retired_at) if row.retired_at is not None else None,
        replaced_by=row.replaced_by,
        score=score,
    )


class _Row(NamedTuple):
    """A fact's row as SQLITE_WINDOW reads it: its dates still SQLAlchemy's text."""

    id: int
    owner: str
    category: str
    key: str
    value: str
    session_id: str | None
    created_at: Any
    updated_at: Any
    confirmations: int
    source: str
    retired_at: Any
    replaced_by: int | None

    def dated(self) -> _Row:
        """With datetimes for dates (SQLAlchemy keeps them in SQLite as ISO text)."""
        return self._replace(
            created_at=datetime.fromisoformat(self.created_at),
            updated_at=datetime.fromisoformat(self.updated_at),
            retired_at=datetime.fromisoformat(self.retired_at) if self.retired_at else None,
        )


def new_counts() -> Counts:
    """What a store keeps of its users' fact counts between searches."""
    return Counts("memory_facts")


class _Matching:
    """Counts a word among the owner's facts, for `Counts.holding` (which asks only for a word it
    does not keep): the word's newest COUNT_CAP facts, and beyond them an estimate from how many
    of the owner's facts those reach back over (`fact_rank.matches`)."""

    def __init__(self, conn: Connection, counts: Counts, owner: str, total: int) -> None:
        self.conn, self.counts, self.owner, self.total = conn, counts, owner, total
        self._span: tuple[bool, int, int] | None = None

    def __call__(self, word: str) -> int:
        raw, owner, total, cap = driver(self.conn), self.owner, self.total, fact_rank.COUNT_CAP
        if self._span is None:
            self._span = self.counts.span(self.conn, owner)
        alone, first, last = self._span
        statement = SQLITE_COUNT_ALONE if alone else SQLITE_COUNT
        found, oldest = raw.execute(statement, {"match": f'"{word}"', "owner": owner, "cap": cap}).fetchone()
        if found < cap:
            return int(found)
        if total == last - first + 1:  # every id from first to last is one of the owner's facts
            since = last - oldest + 1
        elif oldest - first < last - oldest:  # the shorter part of the owner's (owner, id) index
            since = total - raw.execute(SQLITE_BEFORE, {"owner": owner, "oldest": oldest}).fetchone()[0]
        else:
            since = raw.execute(SQLITE_SINCE, {"owner": owner, "oldest": oldest}).fetchone()[0]
        return fact_rank.matches(found, since, total)


def sqlite_ranked(
    conn: Connection,
    words: list[str],
    *,
    owner: str,
    limit: int,
    history: bool,
    counts: Counts | None = None,
) -> list[tuple[Any, float]]:
    """The owner's best `limit` facts for `words` (any may match, by stem) on SQLite, with their
    BM25 (higher is better); current facts before retired ones. Each word weighs by the owner's
    facts alone — how many there are, how many hold it — so another user's facts never move the
    order. `counts`, kept by the caller between searches (a fresh one counts everything again)."""
    raw = driver(conn)
    params = {
        "query": " OR ".join(f'"{w}"' for w in words),
        "owner": owner,
        "history": history,
        "window": WINDOW,
    }
    window = raw.execute(SQLITE_WINDOW, params).fetchall()  # plain tuples: only the best become _Rows
    if not window:
        return []
    counts = counts or new_counts()
    total = max(len(window), counts.total(conn, owner))
    first: dict[str, str] = {}  # each stem of the query, and the first word with it
    for word in words:
        first.setdefault(fact_rank.stem(fold(word)), word)
    matching = _Matching(conn, counts, owner, total)
    matched = {s: counts.holding(owner, s, total, partial(matching, word)) for s, word in first.items()}
    scores = fact_rank.order([r[2:5] for r in window], list(first), matched, total)
    # Current before retired (column 10: retired_at), then the best, then the newest.
    best = sorted(zip(window, scores, strict=True), key=lambda p: (bool(p[0][10]), -p[1], -p[0][0]))
    return [(_Row(*row).dated(), score) for row, score in best[:limit]]


def all_rows(stmt: Any, conn: Connection) -> list[Any]:
    return list(conn.execute(stmt).all())


def execute_many(stmt: Any, values: list[dict[str, Any]], conn: Connection) -> None:
    conn.execute(stmt, values)


def embed_text(fact: Fact) -> str:
    """What is embedded for a fact: its words, with keys' underscores as spaces."""
    return f"{fact.category} {fact.key} {fact.value}".replace("_", " ")


def _apply(
    conn: Connection,
    row: Any,
    owner: str,
    category: str,
    key: str,
    value: str,
    session_id: str | None,
    source: Source,
) -> tuple[Fact, UpsertOutcome]:
    """Carry out `decide` for a new value against the current `row` (None: there is none)."""
    now = utcnow()
    decision = decide(to_fact(row) if row is not None else None, value)
    previous = None
    if row is None:
        fact_id = conn.execute(
            insert(memory_facts)
            .values(
                owner=owner,
                category=category,
                key=key,
                value=value,
                session_id=session_id,
                source=source,
                created_at=now,
                updated_at=now,
                confirmations=1,
            )
            .returning(memory_facts.c.id)
        ).scalar_one()
    elif decision == "ignore":
        fact_id = row.id
        conn.execute(
            update(memory_facts)
            .where(memory_facts.c.id == row.id)
            .values(
                updated_at=now,
                session_id=session_id or row.session_id,
                confirmations=row.confirmations + 1,
            )
        )
    else:  # update: the old value becomes history, the fact keeps its id
        fact_id = row.id
        previous = conn.execute(
            insert(memory_facts)
            .values(
                owner=row.owner,
                category=row.category,
                key=row.key,
                value=row.value,
                session_id=row.session_id,
                source=row.source,
                created_at=row.created_at,
                updated_at=row.updated_at,
                confirmations=row.confirmations,
                embedding=row.embedding,
                retired_at=now,
                replaced_by=row.id,
            )
            .returning(memory_facts.c.id)
        ).scalar_one()
        conn.execute(
            update(memory_facts)
            .where(memory_facts.c.id == row.id)
            .values(
                value=value,
                source=source,
                created_at=now,
                updated_at=now,
                session_id=session_id,  # where the new value came from (None: no conversation)
                confirmations=1,
                embedding=None,
            )
        )
    fact = to_fact(conn.execute(select(memory_facts).where(memory_facts.c.id == fact_id)).one())
    log_decision(decision, fact, source=source, previous=previous)
    return fact, OUTCOMES[decision]


def upsert_row(
    conn: Connection,
    owner: str,
    category: str,
    key: str,
    value: str,
    session_id: str | None,
    source: Source,
) -> tuple[Fact, UpsertOutcome]:
    where = (
        (memory_facts.c.owner == owner)
        & (memory_facts.c.category == category)
        & (memory_facts.c.key == key)
        & CURRENT
    )
    row = conn.execute(select(memory_facts).where(where).with_for_update()).first()
    return _apply(conn, row, owner, category, key, value, session_id, source)


def edit_row(
    conn: Connection, fact_id: int, owner: str, value: str, source: Source
) -> tuple[Fact, UpsertOutcome] | None:
    where = (memory_facts.c.id == fact_id) & (memory_facts.c.owner == owner) & CURRENT
    row = conn.execute(select(memory_facts).where(where).with_for_update()).first()
    if row is None:
        return None
    return _apply(conn, row, owner, row.category, row.key, value, None, source)


def retire_rows(conn: Connection, owner: str, key: str, category: str | None) -> list[Fact]:
    where = (memory_facts.c.owner == owner) & (memory_facts.c.key == key) & CURRENT
    if category:
        where &= memory_facts.c.category == category
    ids = [r.id for r in conn.execute(select(memory_facts.c.id).where(where).with_for_update())]
    if not ids:
        return []
    conn.execute(update(memory_facts).where(memory_facts.c.id.in_(ids)).values(retired_at=utcnow()))
    retired = [to_fact(r) for r in conn.execute(select(memory_facts).where(memory_facts.c.id.in_(ids)))]
    for fact in retired:
        log_decision("retire", fact, source="forget")
    return retired
