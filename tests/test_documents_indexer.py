# ruff: noqa: F811  (the `url` and `store` fixtures come from tests/helpers/document_stores.py)
"""The documents' indexer: queued work survives a restart (a new runtime indexes it; a claim whose
worker died is taken again once its lease runs out), two indexers on one database index each
document once (SQLite and PostgreSQL), progress is recorded while a document is read, a lost lease
drops the work, and an embedding model's failure leaves the document searchable by its words."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF

from navi.compose import build_runtime
from navi.compose.services import build_services
from navi.config import load_settings
from navi.documents import isolate
from navi.documents.base import Extracted
from navi.documents.extract.common import Limits
from navi.documents.indexer import Indexer, Tuning
from navi.documents.isolate import extract_isolated
from navi.storage.documents import SqlDocumentStore
from tests.helpers.document_stores import store, url  # noqa: F401 - fixtures


@functools.cache
def report(pages: int = 3) -> bytes:
    doc = FPDF()
    doc.set_font("Helvetica", size=12)
    for n in range(1, pages + 1):
        doc.add_page()
        doc.multi_cell(0, 8, f"Page {n}. The heating oil delivery comes on Tuesday number {n}.")
    return bytes(doc.output())


def counting(counter: Counter[str], delay: float = 0.0) -> Callable[..., Any]:
    """extract_isolated that counts which documents it read (by name)."""

    async def extract(data: bytes, name: str, limits: Limits, on_progress: Any = None) -> Extracted:
        counter[name] += 1
        if delay:
            await asyncio.sleep(delay)
        return await extract_isolated(data, name, limits, on_progress)

    return extract


async def test_two_indexers_on_one_database_index_each_document_once(url: str) -> None:
    first, second = SqlDocumentStore.at(url), SqlDocumentStore.at(url)  # two workers' engines
    await first.open()
    await second.open()
    read: Counter[str] = Counter()
    try:
        shelf = await first.create_collection("alice", "Shelf")
        names = [f"r{n}.txt" for n in range(8)]
        for name in names:
            await first.add_document("alice", shelf.id, name, data=f"Notes {name}: boiler service.".encode())
        workers = [
            Indexer(s, None, Limits(), f"worker-{i}", extract=counting(read, 0.05))
            for i, s in enumerate((first, second))
        ]

        async def drain(indexer: Indexer) -> int:
            done = 0
            while await indexer.index_next() is not None:
                done += 1
            return done

        counts = await asyncio.gather(*(drain(w) for w in workers))
        assert sum(counts) == len(names) and all(counts), counts  # both worked, none twice
        assert read == Counter(dict.fromkeys(names, 1))
        docs = await first.list_documents("alice")
        assert {d.state for d in docs} == {"ready"} and all(d.chunks == 1 for d in docs)
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_claim_whose_worker_died_is_indexed_again(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    doc = await store.add_document("alice", shelf.id, "oil.pdf", data=report())
    dead = await store.claim("gone-worker", 0.3)  # claimed, then its process died
    assert dead is not None and dead.id == doc.id
    indexer = Indexer(store, None, Limits(), "new-worker")
    assert await indexer.index_next() is None  # its lease has not run out yet
    await asyncio.sleep(0.5)
    outcome = await indexer.index_next()
    assert outcome is not None and outcome.state == "ready"
    (hit, *_) = await store.search("alice", "heating oil Tuesday number 2")
    assert hit.citation() == "oil.pdf, p. 2"
    assert not await store.progress(doc.id, "gone-worker", 0.5)  # the dead worker's lease is gone


async def test_progress_is_recorded_and_a_lost_lease_drops_the_work(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    doc = await store.add_document("alice", shelf.id, "long.pdf", data=report(400))
    seen: list[float] = []

    async def slow(data: bytes, name: str, limits: Limits, on_progress: Any = None) -> Extracted:
        def noted(f: float) -> None:
            assert on_progress is not None
            on_progress(f)

        extracted = await extract_isolated(data, name, limits, noted)
        for _ in range(20):  # the extraction is done; now sit on it while the watcher looks
            got = await store.get_document("alice", doc.id)
            assert got is not None
            seen.append(got.progress)
            await asyncio.sleep(0.05)
        return extracted

    indexer = Indexer(store, None, Limits(), "w", extract=slow, tuning=Tuning(progress_every=0.05))
    outcome = await indexer.index_next()
    assert outcome is not None and outcome.state == "ready"
    assert any(0.5 < p < 1 for p in seen), seen  # written while indexing, before done

    # Deleted while being read: the work is dropped, nothing is written for it.
    gone = await store.add_document("alice", shelf.id, "gone.pdf", data=report(200))

    async def deleted_meanwhile(data: bytes, name: str, limits: Limits, on_progress: Any = None) -> Extracted:
        await store.delete_document("alice", gone.id)
        await asyncio.sleep(0.5)
        raise AssertionError("the extraction should have been stopped")

    dropping = Indexer(
        store, None, Limits(), "w2", extract=deleted_meanwhile, tuning=Tuning(progress_every=0.05)
    )
    lost = await asyncio.wait_for(dropping.index_next(), 5)
    assert lost is not None and lost.state == "lost"
    assert await store.get_document("alice", gone.id) is None


class BrokenEmbedder:
    name = "broken-model"

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("the model server is away")


class TinyEmbedder:
    name = "tiny"

    def __init__(self) -> None:
        self.batches: list[int] = []

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        return [[float("oil" in t.lower()), 1.0, float(len(t) % 7)] for t in texts]


async def test_embeddings_in_batches_and_words_when_the_model_fails(store: SqlDocumentStore) -> None:
    shelf = await store.create_collection("alice", "Shelf")
    await store.add_document("alice", shelf.id, "a.pdf", data=report(40))
    tiny = TinyEmbedder()
    outcome = await Indexer(store, tiny, Limits(), "w", tuning=Tuning(batch=16)).index_next()
    assert outcome is not None and outcome.state == "ready" and outcome.chunks == 40
    assert tiny.batches == [16, 16, 8]
    by_meaning = await store.search("alice", "zzz", query_vector=[1.0, 1.0, 0.0], embedder="tiny")
    assert by_meaning and by_meaning[0].document_name == "a.pdf"

    await store.add_document("alice", shelf.id, "b.pdf", data=report(2))
    outcome = await Indexer(store, BrokenEmbedder(), Limits(), "w").index_next()
    assert outcome is not None and outcome.state == "ready"
    hits = await store.search("alice", "Tuesday", documents=[outcome.document.id])
    assert {h.citation() for h in hits} == {"b.pdf, p. 1", "b.pdf, p. 2"}  # by its words


async def test_a_queued_document_is_indexed_by_the_next_runtime(tmp_path: Path) -> None:
    settings = load_settings(
        db_path=str(tmp_path / "navi.db"),
        session_files_dir=str(tmp_path / "files"),
        tools_dir=str(tmp_path / "tools"),
        log_level="WARNING",
        documents_indexing=False,  # the first process only queues
    )
    rt = await build_runtime(settings, seed_tools=False, runs_agents=False)
    try:
        assert rt.documents is not None
        services = build_services(rt, schedules=False)
        assert services.indexer is None  # DOCUMENTS_INDEXING=false
        shelf = await rt.documents.create_collection("local", "Bills")
        doc = await rt.documents.add_document("local", shelf.id, "oil.pdf", data=report())
    finally:
        await rt.aclose()

    again = settings.model_copy(update={"documents_indexing": True})
    rt = await build_runtime(again, seed_tools=False, runs_agents=False)
    services = build_services(rt, schedules=False, owns_runtime=True)
    assert services.indexer is not None
    await services.start()
    try:
        assert rt.documents is not None
        for _ in range(300):
            got = await rt.documents.get_document("local", doc.id)
            assert got is not None
            if got.state == "ready":
                break
            await asyncio.sleep(0.05)
        assert got is not None and got.state == "ready" and got.pages == 3, got
        (hit, *_) = await rt.documents.search("local", "heating oil number 3")
        assert hit.citation() == "oil.pdf, p. 3"
    finally:
        await services.stop()


async def test_a_poke_wakes_the_loop_at_once(store: SqlDocumentStore) -> None:
    indexer = Indexer(store, None, Limits(), "w", tuning=Tuning(poll_seconds=60))
    loop = asyncio.create_task(indexer.run())
    try:
        await asyncio.sleep(0.2)  # it looked, found nothing, and waits a minute for the next look
        shelf = await store.create_collection("alice", "Shelf")
        doc = await store.add_document(
            "alice", shelf.id, "note.md", data=b"# Oil\n\nOrder heating oil in May."
        )
        indexer.poke()
        for _ in range(100):
            got = await store.get_document("alice", doc.id)
            if got is not None and got.state == "ready":
                break
            await asyncio.sleep(0.05)
        assert got is not None and got.state == "ready", got  # within 5 s, not 60
        reader = isolate.reader_pid()
        assert reader is not None  # the document reader process, kept for the next document
    finally:
        loop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await loop
    # It goes with the indexer's loop.
    assert isolate.reader_pid() is None
    with pytest.raises(ProcessLookupError):
        os.kill(reader, 0)


async def test_a_beat_that_meets_the_finished_write_is_no_lost_claim(store: SqlDocumentStore) -> None:
    """The results are written (the document is `ready` in the database) and, before the work
    resumes, a progress beat finds it no longer `indexing`: that is the work's own write, not a lost
    claim. (It was taken for one: the beat cancelled the finished work and the outcome said `lost`.)"""
    shelf = await store.create_collection("alice", "Shelf")
    await store.add_document("alice", shelf.id, "a.pdf", data=report(2))
    written = store.finish

    async def slow_to_resume(*args: Any, **kwargs: Any) -> bool:
        done = await written(*args, **kwargs)
        await asyncio.sleep(0.3)  # committed; the beats go on meanwhile
        return done

    store.finish = slow_to_resume  # type: ignore[method-assign]
    indexer = Indexer(store, None, Limits(), "w", tuning=Tuning(progress_every=0.02, lease_seconds=0.1))
    outcome = await indexer.index_next()
    assert outcome is not None and outcome.state == "ready", outcome
