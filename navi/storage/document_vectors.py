"""An owner's document vectors kept in this process between searches, and the scan over them.

Reading every `document_vectors` row of an owner on every search cost 1.6 s at 100,000 documents
(300,000 chunks): the bytes, not the arithmetic. So each process keeps a copy per owner, made on
the owner's first search, and a search only checks that it is still right: migration 0029's
triggers raise the owner's number in `document_vector_versions` with every change to their rows,
by any process, and a search reads that one row in its own transaction. When it moved, the rows
are listed without their vectors (document id and chunk ids, which sit before the vectors in the
row, so SQLite does not read the vectors' overflow pages) and only the documents that are new or
were indexed again are read; those gone are dropped. Several workers so stay correct.

The copy is compact: each vector as int8 with a scale of its own (a quarter of float32: 300,000
chunks of 384 dimensions are 115 MB, not 460; cosines move by about 0.002) and its sign bits.
Up to EXACT_MAX vectors are scored one by one; past it the RESCORE vectors whose signs differ
least from the query's are found first (Hamming distance, as memory's scan does) and only they are
scored. At most CACHE_BYTES are kept in all; the owner searched least recently goes first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, bindparam, text

from navi.storage.vectors import closest_signs, signs, single_threaded_blas

EXACT_MAX = 20_000  # up to this many vectors in scope, every one is scored
RESCORE = 3_000  # beyond, this many closest by their signs are (8,000 before: docs/benchmarks.md)
CACHE_BYTES = 768 * 1024 * 1024  # all owners' copies in one process
READ_BATCH = 2_000  # documents' vectors read at a time

_LISTING = text(
    """SELECT document_id, chunk_ids FROM document_vectors
    WHERE owner = :owner AND embedder = :embedder AND dim = :dim"""
)
_READ = text(
    """SELECT document_id, chunk_ids, vectors FROM document_vectors
    WHERE owner = :owner AND document_id IN :ids"""
).bindparams(bindparam("ids", expanding=True))
_VERSION = text("SELECT version FROM document_vector_versions WHERE owner = :owner")


def quantised(matrix: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """Rows as int8 and a scale each: row ≈ int8 row × scale."""
    peak = np.abs(matrix).max(axis=1) if len(matrix) else np.zeros(0, dtype=np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.round(matrix / scale[:, None]).astype(np.int8), scale


@dataclass
class Piece:
    """One document's vectors."""

    chunk_ids: bytes
    rows: NDArray[np.int8]
    scales: NDArray[np.float32]
    signs: NDArray[np.uint64]


@dataclass
class OwnerCopy:
    """One owner's vectors of one model and dimension, at `version`."""

    embedder: str
    dim: int
    version: int = -1
    pieces: dict[str, Piece] = field(default_factory=dict)
    # The pieces joined, for the scan: row i is chunk ids[i] of document docs[doc_of[i]].
    ids: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    doc_of: NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    docs: list[str] = field(default_factory=list)
    rows: NDArray[np.int8] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int8))
    scales: NDArray[np.float32] = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    words: NDArray[np.uint64] = field(default_factory=lambda: np.zeros((0, 0), dtype=np.uint64))

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.words.nbytes + self.ids.nbytes + self.scales.nbytes)

    def join(self) -> None:
        names = list(self.pieces)
        pieces = [self.pieces[n] for n in names]
        counts = [len(p.scales) for p in pieces]
        self.docs = names
        self.doc_of = np.repeat(np.arange(len(names), dtype=np.int32), counts)
        self.ids = np.concatenate(
            [np.frombuffer(p.chunk_ids, dtype=np.int64) for p in pieces] or [self.ids[:0]]
        )
        self.rows = np.vstack([p.rows for p in pieces]) if pieces else np.zeros((0, self.dim), np.int8)
        self.scales = np.concatenate([p.scales for p in pieces]) if pieces else np.zeros(0, np.float32)
        self.words = (
            np.hstack([p.signs for p in pieces]) if pieces else signs(np.zeros((0, self.dim), np.float32))
        )
        # Each piece becomes a view of the joined arrays, so the vectors are held once, not twice.
        start = 0
        for piece, count in zip(pieces, counts, strict=True):
            end = start + count
            piece.rows, piece.scales = self.rows[start:end], self.scales[start:end]
            piece.signs = self.words[:, start:end]
            start = end

    def refresh(self, conn: Connection, owner: str, version: int) -> None:
        """Bring the copy to the database's state: new and re-indexed documents read, gone ones dropped."""
        listed = {
            str(r[0]): bytes(r[1])
            for r in conn.execute(_LISTING, {"owner": owner, "embedder": self.embedder, "dim": self.dim})
        }
        for gone in [d for d, p in self.pieces.items() if listed.get(d) != p.chunk_ids]:
            del self.pieces[gone]
        wanted = [d for d in listed if d not in self.pieces]
        for start in range(0, len(wanted), READ_BATCH):
            batch = wanted[start : start + READ_BATCH]
            for document_id, chunk_ids, vectors in conn.execute(_READ, {"owner": owner, "ids": batch}):
                ids = bytes(chunk_ids)
                matrix = np.frombuffer(vectors, dtype=np.float32).reshape(len(ids) // 8, -1)
                if matrix.shape[1] != self.dim:
                    continue
                rows, scales = quantised(matrix)
                self.pieces[str(document_id)] = Piece(ids, rows, scales, signs(matrix))
        self.join()
        self.version = version

    def nearest(
        self, query: NDArray[np.float32], k: int, documents: set[str] | None = None
    ) -> list[tuple[int, float]]:
        """The `k` closest chunks (of `documents`, if given): (id, cosine), closest first."""
        if not len(self.ids):
            return []
        single_threaded_blas()
        if documents is not None:
            wanted = np.array([n in documents for n in self.docs], dtype=bool)
            rows = np.flatnonzero(wanted[self.doc_of]) if len(self.docs) else np.zeros(0, np.intp)
        else:
            rows = None
        count = len(self.ids) if rows is None else len(rows)
        if not count:
            return []
        if count > EXACT_MAX and k < RESCORE:
            words = self.words if rows is None else self.words[:, rows]
            near = closest_signs(words, query, RESCORE)
            rows = near if rows is None else rows[near]
        if rows is None:
            scores = (self.rows.astype(np.float32) @ query) * self.scales
            ids = self.ids
        else:
            scores = (self.rows[rows].astype(np.float32) @ query) * self.scales[rows]
            ids = self.ids[rows]
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((ids[top], -scores[top]))]
        return [(int(ids[i]), float(scores[i])) for i in top]


class DocumentVectors:
    """Every owner's copy in this process (see the module)."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        self.budget = budget
        self._copies: OrderedDict[tuple[str, str, int], OwnerCopy] = OrderedDict()
        self._lock = threading.Lock()

    def nearest(
        self,
        conn: Connection,
        owner: str,
        embedder: str,
        query: NDArray[np.float32],
        k: int,
        documents: Sequence[str] | None = None,
    ) -> list[tuple[int, float]]:
        """The owner's `k` chunks closest to the unit vector `query`, made by `embedder`; read in
        `conn`'s transaction, so the version and the rows agree."""
        version = int(conn.execute(_VERSION, {"owner": owner}).scalar() or 0)
        key = (owner, embedder, int(query.size))
        with self._lock:  # one refresh at a time; scans of a refreshed copy need no lock
            copy = self._copies.get(key) or OwnerCopy(embedder, int(query.size))
            if copy.version != version:
                copy.refresh(conn, owner, version)
            self._copies[key] = copy
            self._copies.move_to_end(key)
            self._evict()
            # The arrays are replaced whole by a refresh: a scan holds the ones it started with.
            view = OwnerCopy(embedder, copy.dim, copy.version)
            view.ids, view.doc_of, view.docs = copy.ids, copy.doc_of, copy.docs
            view.rows, view.scales, view.words = copy.rows, copy.scales, copy.words
        return view.nearest(query, k, None if documents is None else set(documents))

    def _evict(self) -> None:
        total = sum(c.nbytes for c in self._copies.values())
        while total > self.budget and len(self._copies) > 1:
            _, dropped = self._copies.popitem(last=False)
            total -= dropped.nbytes

    def forget(self) -> None:
        with self._lock:
            self._copies.clear()


def scoped_documents(conn: Connection, sql: str, params: dict[str, Any]) -> list[str]:
    """The owner's document ids a scope names (`sql` selects them)."""
    return [str(r[0]) for r in conn.execute(text(sql), params)]
