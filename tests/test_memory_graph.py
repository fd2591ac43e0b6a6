"""Past EXACT_MAX vectors an owner's are searched through a graph (HNSW, usearch:
navi/storage/graph.py), built on a thread of its own while the scan answers, kept up to date by the
writes after, and scored exactly. And the graph's library loads beside the sentence encoder's
runtime in either order (usearch 2.26 crashed the process when onnxruntime came after it)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import event

from navi.memory.minilm import MiniLMEmbedder
from navi.storage import graph as graph_module
from navi.storage import vectors as vectors_module
from navi.storage.database import sqlite_url
from navi.storage.memory import SqlMemoryStore

MODEL = MiniLMEmbedder()  # the default built-in encoder: it rescores, so attribute vectors are kept


@pytest.mark.parametrize("first", ["usearch.index", "onnxruntime"])
def test_the_graph_library_and_the_encoder_runtime_load_in_either_order(first: str) -> None:
    second = "onnxruntime" if first == "usearch.index" else "usearch.index"
    code = f"import {first}, {second}; print('loaded')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "loaded", (done.returncode, done.stderr[-2000:])


def test_past_exact_max_a_graph_is_built_aside_and_kept_up_to_date(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past EXACT_MAX vectors the first search starts a graph's build on a thread of its own and is
    answered by the scan meanwhile; a vector added or changed during the build is in the graph
    when it is done, and so is one added or changed after. The graph's candidates are scored
    exactly: the similarity reported is the float32 one, not the graph's int8 estimate."""
    rng = np.random.default_rng(5)
    monkeypatch.setattr(vectors_module, "EXACT_MAX", 100)
    owner = vectors_module.OwnerVectors(64)
    matrix = rng.standard_normal((2_000, 64)).astype(np.float32)
    for i, row in enumerate(matrix, start=1):
        owner.put(i, row)

    building, release = threading.Event(), threading.Event()
    searched: list[int] = []

    class HeldGraph(graph_module.Graph):
        def add(self, ids: Any, rows: Any) -> None:
            if len(ids) == 2_000:  # the build's first, unlocked pass: held until the writes below
                building.set()
                assert release.wait(10)
            super().add(ids, rows)

        def search(self, query: Any, k: int) -> Any:
            searched.append(k)
            return super().search(query, k)

    monkeypatch.setattr(vectors_module, "Graph", HeldGraph)

    def close_to(target: Any) -> Any:
        return target + 0.05 * rng.standard_normal(64).astype(np.float32)

    assert owner.nearest(close_to(matrix[6]), 5)[0][0] == 7  # by the scan; the build starts
    assert building.wait(10) and owner.graph is None
    moved, added = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    owner.put(42, moved)  # changed during the build
    owner.put(2_001, added)  # added during the build
    assert owner.nearest(close_to(moved), 1)[0][0] == 42 and not searched  # the scan still serves
    release.set()
    assert owner.graph_ready.wait(30) and owner.graph is not None and len(owner.graph) == 2_001

    for target, vector in ((7, matrix[6]), (1_500, matrix[1_499]), (42, moved), (2_001, added)):
        noisy = close_to(vector)
        (best, similarity), *_ = owner.nearest(noisy, 5)
        exact = float(vectors_module.unit(vector) @ vectors_module.unit(noisy))
        assert best == target and similarity == pytest.approx(exact, abs=1e-5)
    assert searched == [5, 5, 5, 5]  # answered by the graph
    later, again = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    owner.put(2_002, later)  # added after
    owner.put(1_500, again)  # changed after: found where it now is, not where it was
    assert owner.nearest(close_to(later), 1)[0][0] == 2_002
    assert owner.nearest(close_to(again), 1)[0][0] == 1_500
    assert 1_500 not in [i for i, _ in owner.nearest(close_to(matrix[1_499]), 3)]


@pytest.fixture
async def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SqlMemoryStore]:
    monkeypatch.setattr(vectors_module, "EXACT_MAX", 30)
    made = SqlMemoryStore.at(sqlite_url(tmp_path / "m.db"), embed=MODEL)
    await made.open()
    try:
        yield made
    finally:
        await made.aclose()


async def test_a_store_past_exact_max_searches_its_graph_once_built(store: SqlMemoryStore) -> None:
    """The store's search is the same through the graph as through the scan, the attribute vectors
    the rescoring step needs come from memory (no read of the stored vectors), and a fact stored
    after the build is found through the graph."""
    for n in range(40):
        await store.upsert_fact("things", f"item_{n}", f"thing number {n}")
    await store.upsert_fact("pets", "dog_name", "Rex")
    await store.upsert_fact("location", "home_city", "Porto")
    scanned = [f.value for f in await store.search_facts("what is my puppy called")]
    vectors = store.vectors.get("local")
    assert vectors is not None and len(vectors.about) == 42  # every fact's attribute vector, in memory
    assert vectors.settled(60) and vectors.graph is not None and len(vectors.graph) == 42
    searched: list[int] = []
    real = vectors.graph.search

    def counted(query: Any, k: int) -> Any:
        searched.append(k)
        return real(query, k)

    vectors.graph.search = counted  # type: ignore[method-assign]
    reads: list[str] = []
    event.listen(store.db.sync_engine, "before_cursor_execute", lambda *a: reads.append(str(a[2])))
    graphed = [f.value for f in await store.search_facts("what is my puppy called")]
    assert scanned[0] == graphed[0] == "Rex" and graphed == scanned and searched
    # No stored vector is read by id (only the check for rows another process added, by id range).
    assert not [r for r in reads if "embedding" in r.split("FROM")[0] and "memory_facts.id >" not in r]
    await store.upsert_fact("pets", "cat_name", "Mia")  # after the build: into the graph at once
    assert "Mia" in [f.value for f in await store.search_facts("what is my kitten called")]
    assert vectors.graph is not None and len(vectors.graph) == 43
