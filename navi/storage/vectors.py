"""Fact vectors: how they are stored, and the exact nearest-neighbour scan over them.

A vector is stored in `memory_facts.embedding` as `"<model>|<base64 of float32>"`, so rows embedded
by another model (or by the JSON format of earlier versions) are recognised as stale and re-embedded
by the backfill, never compared with unlike vectors.

The scan is exact: every vector of the owner, unit length, in one float32 matrix kept in this
process, multiplied by the query. The matrix is read from the database once per owner and kept up
to date by the store's own writes; rows another process added are read on the next search (by id);
a vector that is gone or stale in the database is harmless, because every candidate is re-read
from the database before it is returned. 100,000 facts of 128 dimensions are 51 MB, and a scan of
a few milliseconds (more on a busy machine: docs/benchmarks.md). Where the store rescores, each
fact's attribute vector (the stored vector's second half) is kept beside it, so that a search reads
no stored vector from the database.

Past EXACT_MAX vectors the scan first compares signs: each vector's signs are kept as bits, the
RESCORE vectors whose signs differ least from the query's (Hamming distance) are found, and only
those are scored exactly. At 100,000 vectors of 128 dimensions that took 2.2 ms against 4.3 for
the exact scan, and it finds 99% of the 45 nearest (docs/benchmarks.md); below EXACT_MAX, where a
personal memory lives, the exact scan costs about a millisecond and is kept. With the sentence
encoder's 384 dimensions, scoring 8,000 rows was most of the scan; 4,000 find 90.6% of the exact
45 nearest at 100,000 facts against 91.2% for 8,000, in 3.7 ms of CPU instead of 6.1.

The store runs the scan on a thread of its own, beside the database thread's full-text query
(`SqlMemoryStore._scan`). Each scan is one BLAS call on one thread: numpy's OpenBLAS would start a
thread per core for it, and on a machine whose cores are busy (a model server beside Navi) those
threads wait for each other — a scan of 10,000 vectors took 2 ms instead of 0.27 ms, and 38 ms
inside a database thread.
"""

from __future__ import annotations

import base64
import threading

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

_single_threaded = False
EXACT_MAX = 20_000  # up to this many vectors an owner's scan is exact
RESCORE = 4_000  # beyond, this many vectors closest by their signs are scored exactly


def single_threaded_blas() -> None:
    """BLAS on one thread, for the whole process, from the first scan on (once)."""
    global _single_threaded
    if not _single_threaded:
        threadpool_limits(limits=1, user_api="blas")
        _single_threaded = True


def encode(model: str, vector: list[float]) -> str:
    array = np.asarray(vector, dtype=np.float32)
    return f"{model}|{base64.b64encode(array.tobytes()).decode('ascii')}"


def decode(model: str, raw: str | None) -> NDArray[np.float32] | None:
    """The vector if `raw` was made by `model` (and is well formed), else None."""
    if not raw or not raw.startswith(model + "|"):
        return None
    try:
        array = np.frombuffer(base64.b64decode(raw[len(model) + 1 :], validate=True), dtype=np.float32)
    except ValueError:
        return None
    return array if array.size else None


def signs(rows: NDArray[np.float32]) -> NDArray[np.uint64]:
    """The sign bits of each row, as 64-bit words: shape (words, rows), one contiguous array per
    word so that a scan reads each in one pass."""
    bits = np.packbits(rows > 0, axis=1)
    pad = -bits.shape[1] % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits.view(np.uint64).T)


def closest_signs(words: NDArray[np.uint64], query: NDArray[np.float32], count: int) -> NDArray[np.intp]:
    """The rows (at least `count`, ties included) whose signs differ least from the query's."""
    mine = signs(query[None, :])[:, 0]
    distance = np.bitwise_count(words[0] ^ mine[0]).astype(np.uint16)
    for word, bits in zip(words[1:], mine[1:], strict=True):
        distance += np.bitwise_count(word ^ bits)
    cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), count))
    return np.flatnonzero(distance <= cut)


def unit(vector: NDArray[np.float32]) -> NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class OwnerVectors:
    """One owner's vectors: ids and a matrix of unit rows (appended, replaced, scanned), and each
    fact's attribute vector where the store rescores."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.signs = signs(self.matrix)
        self.rows: dict[int, int] = {}
        # The attribute vectors, row by row as `matrix` (made with the first one; `known`: which
        # rows have one): one array, not an object per fact.
        self.abouts: NDArray[np.float32] | None = None
        self.known = np.zeros(0, dtype=bool)
        self.max_id = 0
        self._pending: list[tuple[int, NDArray[np.float32], NDArray[np.float32] | None]] = []
        # Writes come from the event loop's thread, scans from a database or scanning thread.
        self._lock = threading.Lock()

    def put(
        self, fact_id: int, vector: NDArray[np.float32], about: NDArray[np.float32] | None = None
    ) -> None:
        if vector.shape != (self.dim,):
            return
        if about is not None and about.shape != (self.dim,):
            about = None
        with self._lock:
            row = self.rows.get(fact_id)
            if row is not None:
                self.matrix[row] = unit(vector)
                self.signs[:, row] = signs(self.matrix[row : row + 1])[:, 0]
                if about is not None:
                    if self.abouts is None:
                        self.abouts = np.zeros_like(self.matrix)
                    self.abouts[row], self.known[row] = about, True
            else:
                self._pending.append((fact_id, unit(vector), about))
            self.max_id = max(self.max_id, fact_id)

    def _flush(self) -> None:
        if not self._pending:
            return
        start = len(self.ids)
        ids = np.array([i for i, _, _ in self._pending], dtype=np.int64)
        self.ids = np.concatenate([self.ids, ids])
        added = np.stack([v for _, v, _ in self._pending])
        self.matrix = np.vstack([self.matrix, added]) if start else added  # (an owner's first load: no copy)
        self.signs = np.hstack([self.signs, signs(added)])
        known = np.array([a is not None for _, _, a in self._pending], dtype=bool)
        if self.abouts is not None or known.any():
            none = np.zeros(self.dim, dtype=np.float32)
            about = np.stack([none if a is None else a for _, _, a in self._pending])
            if start:  # after the rows before, which may have had none
                before = self.abouts if self.abouts is not None else np.zeros((start, self.dim), np.float32)
                about = np.vstack([before, about])
            self.abouts = about
        self.known = np.concatenate([self.known, known])
        for offset, fact_id in enumerate(ids.tolist()):
            self.rows[fact_id] = start + offset
        self._pending = []

    def nearest(self, query: NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The `k` closest ids by cosine similarity, closest first."""
        with self._lock:
            self._flush()
            # Replaced whole by a flush, so safe to scan unlocked (a row replaced in place may be
            # seen half-written: harmless, every candidate is re-read from the database).
            ids, matrix, words = self.ids, self.matrix, self.signs
        if not len(ids) or query.shape != (self.dim,):
            return []
        single_threaded_blas()
        query = unit(query)
        if len(ids) > EXACT_MAX and k < RESCORE:
            rows = closest_signs(words, query, RESCORE)
            ids, scores = ids[rows], matrix[rows] @ query
        else:
            scores = matrix @ query
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def similarities(self, fact_ids: list[int], query: NDArray[np.float32]) -> dict[int, float]:
        """The cosine with `query` of each of `fact_ids` that has a vector here (others left out)."""
        with self._lock:
            self._flush()
            rows, matrix = self.rows, self.matrix
            found = [(i, rows[i]) for i in fact_ids if i in rows]
        if not found or query.shape != (self.dim,):
            return {}
        scores = matrix[[r for _, r in found]] @ unit(query)
        return {i: float(s) for (i, _), s in zip(found, scores.tolist(), strict=True)}

    def attributes(self, fact_ids: list[int]) -> dict[int, NDArray[np.float32]]:
        """The attribute vector of each of `fact_ids` that has one here (others left out)."""
        with self._lock:
            self._flush()
            abouts, rows, known = self.abouts, self.rows, self.known
            if abouts is None:
                return {}
            return {i: abouts[r] for i in fact_ids if (r := rows.get(i)) is not None and known[r]}


Row = tuple[int, NDArray[np.float32], NDArray[np.float32] | None]  # id, vector, attribute vector


class VectorIndex:
    """Every owner's vectors in this process, loaded on an owner's first search."""

    def __init__(self) -> None:
        self.owners: dict[str, OwnerVectors] = {}
        self.lock = threading.Lock()

    def get(self, owner: str) -> OwnerVectors | None:
        return self.owners.get(owner)

    def put(
        self, owner: str, fact_id: int, vector: NDArray[np.float32], about: NDArray[np.float32] | None = None
    ) -> None:
        with self.lock:
            vectors = self.owners.get(owner)
            if vectors is not None:
                vectors.put(fact_id, vector, about)

    def load(self, owner: str, rows: list[Row], dim: int) -> OwnerVectors:
        with self.lock:
            vectors = self.owners.get(owner) or OwnerVectors(dim)
            for fact_id, vector, about in rows:
                vectors.put(fact_id, vector, about)
            self.owners[owner] = vectors
            return vectors
