"""An approximate nearest-neighbour graph over one owner's fact vectors (HNSW, by usearch).

Past EXACT_MAX vectors the scan (`navi.storage.vectors`) costs milliseconds per search: 3 ms of
CPU for 100,000 facts of 384 dimensions, even comparing signs first. A graph answers in a
fraction of a millisecond: it is walked from an entry point towards the query, reading a few
hundred vectors instead of every one. Its vectors are int8 (a quarter of float32's memory: 85 MB
for 100,000 of 384 dimensions); the candidates it returns are then scored exactly against the
float32 rows the owner's vectors keep, so a similarity reported is never the int8 estimate.

It is built off the search path, on a thread of its own (`OwnerVectors` starts it when an owner's
vectors first pass EXACT_MAX; searches use the scan until it is done), on one core: about 11
seconds of CPU for 100,000 facts. It is kept up to date by the owner's writes after that: a fact
added is added to it, a fact whose vector changed is removed and added again.

It lives in this process only: each worker, and each start, builds its own from the vectors it
reads from the database — the database stays the one place the facts live.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from usearch.index import Index

CONNECTIVITY = 16  # each vector's neighbours in the graph
EXPANSION_ADD = 64  # candidates weighed when a vector is linked in
EXPANSION_SEARCH = 128  # candidates weighed by a search: recall against time (docs/benchmarks.md)


class Graph:
    """Fact ids and their unit vectors, searched approximately. Not thread-safe: the caller locks."""

    def __init__(self, dim: int) -> None:
        from usearch.index import Index  # loaded with the first graph, not with Navi

        self.index: Index = Index(
            ndim=dim,
            metric="cos",
            dtype="i8",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def __len__(self) -> int:
        return len(self.index)

    def add(self, ids: NDArray[np.int64], rows: NDArray[np.float32]) -> None:
        if len(ids):
            self.index.add(ids, rows, threads=1)

    def replace(self, fact_id: int, row: NDArray[np.float32]) -> None:
        if self.index.contains(fact_id):
            self.index.remove(fact_id)
        self.index.add(fact_id, row, threads=1)

    def search(self, query: NDArray[np.float32], k: int) -> NDArray[np.int64]:
        """About the `k` ids closest to `query`, closest first."""
        found = self.index.search(query, k, threads=1)
        return np.asarray(found.keys, dtype=np.int64)
