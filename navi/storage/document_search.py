"""Searching one owner's document chunks in SQL: keyword ranks, vector ranks, and their fusion.

**Keywords.** A query is words of letters and digits (as the conversation search reads it:
quotes, `NEAR`, `*`, `-`, brackets are never query syntax), at most MAX_TERMS. Any word may
match; chunks are ranked by BM25 in Python, each word weighed by the searching owner's own chunks
only — how many they have (kept between searches by `Counts`, topped up from the (owner, id)
index; on both databases) and how many hold the word,
counted up to COUNT_CAP — never by other users' documents, which FTS5's `bm25()` would count
(navi/storage/search.py says why). Only candidates are ranked, each found by a statement with a
LIMIT, so a search costs about the same at 1,000 chunks or 1,000,000:

- the owner's newest WINDOW chunks holding every word, and
- the owner's newest WINDOW chunks holding each of the RARE_TERMS rarest words. A word in no more
  than WINDOW of the owner's chunks has every one of them a candidate. A word in COUNT_CAP chunks
  or more weighs little, so a chunk holding only such words ranks low anyway: their windows (the
  costliest, walking the most matches) are read only while fewer than the `k` asked for were found.

SQLite finds them with the FTS5 table of migration 0024 (`unicode61 remove_diacritics 2`, as the
conversation search; it indexes the owner's name too, so a search walks that owner's matches
only), PostgreSQL with the GIN index on the `tsvector` column ('simple'), queried
with `plainto_tsquery`, which reads no syntax either. (PostgreSQL's 'simple' keeps diacritics: a
search for "cafe" there does not find "café", as in the conversation search.)

**Vectors.** A document's vectors are one row of `document_vectors`: a float32 matrix of unit
rows and its chunks' ids, with the name of the model that made them; a query compares only with
vectors of the same name and dimension. They are scanned in memory: each process keeps a compact
copy of the owner's vectors between searches, and a search checks it against the owner's version
number, which migration 0029's triggers raise on every change by any worker
(navi/storage/document_vectors.py).

**Fusion.** With both, each ranking's best CANDIDATES are fused by their scores, each taken
relative to its ranking's best (BM25 / the best BM25, cosine / the best cosine) and weighted
WORDS_WEIGHT and 1 - WORDS_WEIGHT: a passage far ahead in one ranking stays ahead, which
reciprocal rank fusion (rank 1 and rank 2 worth nearly the same) threw away. On bench/documents.py
this found the right page in the top 5 for 87% of the questions against 83% by reciprocal rank
(docs/benchmarks.md). Words weigh 0.1: with the chunker's passages of 60 tokens, on the full
corpus, 0.906 against 0.897 at 0.2 and 0.873 at 0.3 (tuning half 0.909, held-out 0.903); the
keywords still decide between passages the vectors find alike, and find what the vectors miss.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, bindparam, insert, select, text

from navi.documents.base import Hit, Place
from navi.sessions.search import bm25_idf, bm25_norm, bm25_tf, fold, words_of
from navi.storage.counts import Counts
from navi.storage.document_vectors import DocumentVectors
from navi.storage.schema_documents import document_chunks, document_vectors

MAX_TERMS = 12
MAX_TERM_CHARS = 64
WINDOW = 100  # candidates per statement
RARE_TERMS = 4  # words whose own matches are candidates too
COUNT_CAP = 2000  # a word's chunks are counted up to this many, for its weight
CANDIDATES = 30  # from each ranking, before they are fused
WORDS_WEIGHT = 0.1  # of the keyword ranking in the fusion; the vector ranking has the rest
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Words:
    """A query's words: `folded` as the ranking compares them (`fold`, like `words_of`), `plain`
    (only lower-cased) for the index, which folds them its own way."""

    folded: tuple[str, ...]
    plain: tuple[str, ...]


def words(query: str) -> Words:
    folded: list[str] = []
    plain: list[str] = []
    for match in _WORD.finditer(query[: MAX_TERMS * (MAX_TERM_CHARS + 8)]):
        word = match.group()[:MAX_TERM_CHARS]
        key = fold(word)
        if key and key not in folded:
            folded.append(key)
            plain.append(word.lower())
        if len(folded) == MAX_TERMS:
            break
    return Words(tuple(folded), tuple(plain))


@dataclass(frozen=True)
class Scope:
    """Whose chunks, and (None: all of them) only those of these collections or documents."""

    owner: str
    collections: tuple[str, ...] | None = None
    documents: tuple[str, ...] | None = None

    @property
    def empty(self) -> bool:
        return self.collections == () or self.documents == ()

    def sql(self) -> str:
        """Conditions on chunk `c`, for `params`."""
        parts = ["c.owner = :owner"]
        if self.collections is not None:
            mine = "SELECT id FROM documents WHERE owner = :owner AND collection_id IN :collections"
            parts.append(f"c.document_id IN ({mine})")
        if self.documents is not None:
            parts.append("c.document_id IN :documents")
        return " AND ".join(parts)

    def params(self) -> dict[str, Any]:
        found: dict[str, Any] = {"owner": self.owner}
        if self.collections is not None:
            found["collections"] = list(self.collections)
        if self.documents is not None:
            found["documents"] = list(self.documents)
        return found

    def statement(self, sql: str) -> Any:
        names = [n for n in ("collections", "documents") if getattr(self, n) is not None]
        return text(sql).bindparams(*(bindparam(n, expanding=True) for n in names))


def new_counts() -> Counts:
    return Counts("document_chunks")


# PostgreSQL: chunks `c` holding every word of :match (`plainto_tsquery` reads no syntax).
_PG_MATCH = "c.search @@ plainto_tsquery('simple'::regconfig, :match)"


def fts5(owner: str, words: Sequence[str]) -> str:
    """An FTS5 expression: chunks of `owner` (by the words of its name: a superset, which the
    statement narrows to the owner's rows) holding every one of `words`, each a quoted string (a
    word of letters and digits has no quote to escape)."""
    text = "text : (" + " ".join(f'"{w}"' for w in words) + ")"
    name = " ".join(_WORD.findall(owner))
    return f'owner : "{name}" AND {text}' if name else text


def _window(conn: Connection, scope: Scope, words: Sequence[str], limit: int) -> list[tuple[int, str]]:
    """The owner's newest `limit` chunks (in scope) holding every one of `words`: (id, text)."""
    if conn.dialect.name == "sqlite":
        # FTS5 walks the owner's matches newest first; each is looked up by id (CROSS JOIN: the
        # planner must not walk the owner's chunks instead) and the walk stops at the limit.
        sql = f"""SELECT c.id, c.text FROM document_chunks_fts
            CROSS JOIN document_chunks c ON c.id = document_chunks_fts.rowid
            WHERE document_chunks_fts MATCH :match AND {scope.sql()}
            ORDER BY document_chunks_fts.rowid DESC LIMIT :limit"""
        match = fts5(scope.owner, words)
    else:
        # As in the conversation search (navi/storage/search.py): the window is materialised, and
        # the owner compared as an expression, so the plan is the GIN index (rare words) or walking
        # ids backwards (common ones), never every chunk of the owner tested one by one (2.3 s
        # for two rare words at 100,000 chunks; 1 ms so). Common words: 200 ms -> 40-60 ms.
        conditions = scope.sql().replace("c.owner = :owner", "(c.owner || '') = :owner", 1)
        sql = f"""WITH m AS MATERIALIZED (SELECT c.id FROM document_chunks c
                WHERE {_PG_MATCH} AND {conditions} ORDER BY c.id DESC LIMIT :limit)
            SELECT c.id, c.text FROM m JOIN document_chunks c ON c.id = m.id ORDER BY c.id DESC"""
        match = " ".join(words)
    rows = conn.execute(scope.statement(sql), {**scope.params(), "match": match, "limit": limit})
    return [(int(r[0]), str(r[1])) for r in rows]


def _count(conn: Connection, owner: str, word: str) -> int:
    """The owner's chunks holding `word`, up to COUNT_CAP."""
    if conn.dialect.name == "sqlite":
        # FTS5 walks the word's list; the (owner, id) index says whose each chunk is, unread.
        sql = """SELECT count(*) FROM (SELECT 1 FROM document_chunks_fts
            CROSS JOIN document_chunks c INDEXED BY ix_document_chunks_owner_id
            ON c.owner = :owner AND c.id = document_chunks_fts.rowid
            WHERE document_chunks_fts MATCH :match LIMIT :cap)"""
        match = fts5(owner, [word])
    else:
        sql = f"""SELECT count(*) FROM (SELECT 1 FROM document_chunks c
            WHERE c.owner = :owner AND {_PG_MATCH} LIMIT :cap) x"""
        match = word
    return int(conn.execute(text(sql), {"owner": owner, "match": match, "cap": COUNT_CAP}).scalar() or 0)


# ASCII letters and digits lower-cased, every other byte a space: an ASCII text's words, split so,
# are `words_of`'s (a regular expression's), five times faster.
_ASCII_WORDS = bytes(b if b < 128 and chr(b).isalnum() else 32 for b in range(256)).lower()


def _ascii_words(body: str) -> list[Any]:
    """The words of an ASCII `body` as `words_of` finds them, as bytes."""
    return body.encode("ascii").translate(_ASCII_WORDS).split()


def keyword(conn: Connection, scope: Scope, query: Words, k: int, counts: Counts) -> list[tuple[int, float]]:
    """The best `k` chunks for the query's words: (id, BM25), best first (see the module)."""
    if not query.folded or scope.empty:
        return []
    # Each index folds a word as it folded the text (FTS5's unicode61 lower-cases and drops
    # diacritics but keeps "ß"; PostgreSQL's 'simple' lower-cases only): the words go as typed.
    find = query.plain
    # The owner's chunks: kept by `counts` between searches, topped up from the (owner, id) index
    # (summing the documents' `chunks` read every document's row: 24 ms at 100,000 documents).
    total = counts.total(conn, scope.owner)
    held = {
        w: counts.holding(scope.owner, w, total, partial(_count, conn, scope.owner, f))
        for w, f in zip(query.folded, find, strict=True)
    }
    candidates: dict[int, str] = {}
    if len(find) > 1:
        candidates.update(_window(conn, scope, find, WINDOW))
    # The rarest words' own matches; a word in COUNT_CAP or more chunks weighs so little that its
    # window (the costliest: it walks the most matches) is read only when nothing else matched.
    for n, i in sorted((n, i) for i, n in enumerate(held.values()) if n > 0)[:RARE_TERMS]:
        if n >= COUNT_CAP and len(candidates) >= k:
            break
        candidates.update(_window(conn, scope, [find[i]], WINDOW))
    if not candidates:
        return []
    total = max(total, len(candidates))
    weights = {w: bm25_idf(total, max(1, n)) for w, n in held.items()}
    ascii_weights = {w.encode(): weight for w, weight in weights.items() if w.isascii()}
    split = {i: _ascii_words(body) if body.isascii() else words_of(body) for i, body in candidates.items()}
    average = sum(len(ws) for ws in split.values()) / len(split) or 1.0
    scored = []
    for i, ws in split.items():
        norm = bm25_norm(len(ws), average)
        # Each query word counted by `list.count` (a loop in C), not every word of the chunk in Python.
        mine: dict[Any, float] = ascii_weights if ws and isinstance(ws[0], bytes) else weights
        score = sum(weight * bm25_tf(n, norm) for w, weight in mine.items() if (n := ws.count(w)))
        if score > 0:
            scored.append((score, i))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [(i, s) for s, i in scored[:k]]


def unit_rows(vectors: Sequence[Sequence[float]]) -> NDArray[np.float32]:
    """Vectors as a float32 matrix of unit rows; ValueError when they differ in length or are empty."""
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except ValueError as exc:
        raise ValueError("vectors of one length") from exc
    if matrix.ndim != 2 or not matrix.shape[1]:
        raise ValueError("vectors of one length")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def store_vectors(
    conn: Connection,
    document_id: str,
    owner: str,
    embedder: str,
    ordinals: Sequence[int],
    matrix: NDArray[np.float32],
) -> None:
    """The document's vectors (row i: the chunk of `ordinals[i]`), its chunks just written."""
    ids = dict(
        conn.execute(
            select(document_chunks.c.ordinal, document_chunks.c.id).where(
                document_chunks.c.document_id == document_id
            )
        ).all()
    )
    chunk_ids = np.array([ids[o] for o in ordinals], dtype=np.int64)
    conn.execute(
        insert(document_vectors).values(
            document_id=document_id,
            owner=owner,
            embedder=embedder,
            dim=matrix.shape[1],
            count=matrix.shape[0],
            chunk_ids=chunk_ids.tobytes(),
            vectors=matrix.tobytes(),
        )
    )


def nearest(
    conn: Connection,
    scope: Scope,
    embedder: str,
    vector: Sequence[float],
    k: int,
    cache: DocumentVectors,
) -> list[tuple[int, float]]:
    """The `k` chunks (in scope) whose vectors of `embedder` are closest to `vector`: (id, cosine),
    closest first, from the owner's vectors kept in `cache` (see the module)."""
    query = unit_rows([vector])[0] if len(vector) else np.zeros(0, dtype=np.float32)
    if scope.empty or not query.size or not float(np.abs(query).sum()):
        return []
    documents = None
    if scope.collections is not None or scope.documents is not None:
        sql = "SELECT d.id FROM documents d WHERE d.owner = :owner"
        if scope.collections is not None:
            sql += " AND d.collection_id IN :collections"
        if scope.documents is not None:
            sql += " AND d.id IN :documents"
        documents = [str(r[0]) for r in conn.execute(scope.statement(sql), scope.params())]
        if not documents:
            return []
    return cache.nearest(conn, scope.owner, embedder, query, k, documents)


def fuse(
    by_words: Sequence[tuple[int, float]], by_meaning: Sequence[tuple[int, float]], k: int
) -> list[tuple[int, float]]:
    """The two rankings (each best first, scores higher-is-better) fused by their relative scores
    (see the module): (id, fused score in 0..1), best first; ties in the order first named."""
    scores: dict[int, float] = {}
    for ranking, weight in ((by_words, WORDS_WEIGHT), (by_meaning, 1.0 - WORDS_WEIGHT)):
        best = ranking[0][1] if ranking else 0.0
        if best <= 0:
            continue
        for i, score in ranking:
            scores[i] = scores.get(i, 0.0) + weight * max(0.0, score) / best
    ordered = sorted(scores.items(), key=lambda item: -item[1])  # stable: first named first
    return ordered[:k]


_DETAILS = """SELECT c.id, c.document_id, d.name, d.collection_id, c.ordinal, c.text, c.page,
    c.slide, c.sheet, c.cells, c.headings FROM document_chunks c JOIN documents d ON d.id = c.document_id"""


def place(row: Any) -> Place:
    headings = tuple(str(h) for h in json.loads(row.headings or "[]"))
    return Place(page=row.page, slide=row.slide, sheet=row.sheet, cells=row.cells, headings=headings)


def to_hit(row: Any, score: float) -> Hit:
    return Hit(
        chunk_id=int(row.id),
        document_id=row.document_id,
        document_name=row.name,
        collection_id=row.collection_id,
        ordinal=int(row.ordinal),
        text=row.text,
        place=place(row),
        score=score,
    )


def hits(conn: Connection, owner: str, ranked: Sequence[tuple[int, float]]) -> list[Hit]:
    """The ranked chunks as hits, in order (only the owner's)."""
    if not ranked:
        return []
    statement = text(f"{_DETAILS} WHERE c.id IN :ids AND c.owner = :owner").bindparams(
        bindparam("ids", expanding=True)
    )
    rows = {r.id: r for r in conn.execute(statement, {"ids": [i for i, _ in ranked], "owner": owner})}
    return [to_hit(rows[i], s) for i, s in ranked if i in rows]


def chunk_rows(conn: Connection, owner: str, chunk_id: int, around: int) -> list[Any]:
    """The chunk and its `around` neighbours each side in its document, in order (the owner's)."""
    statement = text(
        f"""{_DETAILS} JOIN document_chunks m ON m.document_id = c.document_id
        WHERE m.id = :id AND m.owner = :owner
            AND c.ordinal BETWEEN m.ordinal - :around AND m.ordinal + :around
        ORDER BY c.ordinal"""
    )
    return list(conn.execute(statement, {"id": chunk_id, "owner": owner, "around": max(0, around)}))
