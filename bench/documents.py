"""Documents (issue 43): does Navi find the right page, how fast does it index and search — and
how does a peer's default pipeline do on the same corpus?

The corpus (bench/documents_corpus.py, seeded): 240 documents of seven kinds (PDF, PPTX, XLSX,
DOCX, HTML, Markdown, text), 1,000 facts each on a known page, slide, sheet or section, a question
per fact (30% in the fact's words, 70% paraphrased) and 100 questions answered nowhere.

Navi's pipeline, as the indexer runs it: `extract` (in this process; the server runs the same
code in a child process) → `chunk` → the builtin embedder (WordLlama) → `SqlDocumentStore.finish`,
on SQLite and on PostgreSQL (a throwaway cluster); questions through `SqlDocumentStore.search`
(keywords and vectors fused). The peer: LangChain's `RecursiveCharacterTextSplitter` (chunk_size
1000, chunk_overlap 200, its RAG tutorial's values) on the same extracted text, split page by page
(generous: the peer gets Navi's extraction and its page boundaries), ranked by `rank_bm25`'s
BM25Okapi with LangChain's BM25Retriever's default tokenizer (`str.split`); and the same with
lower-cased word tokens.

Reported: recall@5 of the right page (the document and its page, slide, sheet or section; a text
file has no pages, its document counts), MRR@10, citation page correct (of the top 5 hits that
hold a fact's answer, those whose place is the fact's), abstention (the best cosine score of the
nowhere-questions against a threshold), indexing pages per CPU-second, and search p50/p99 with the
corpus padded to 1,000 and to 100,000 documents by synthesized documents written straight into
the store (each chunk one of 2,000 filler paragraphs of the same generator, naming projects of
their own, with that paragraph's real vector: embedding 300,000 chunks would take longer than the
rest of the run).

    .venv/bin/python bench/documents.py [--big 100000] [--chunks-per-doc 3] [--no-postgres]
    (pip install -c constraints.txt -e ".[bench]" for the peer; without it the peer is skipped)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import platform
import random
import re
import resource
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import func, insert, select

sys.path.insert(0, str(Path(__file__).parent))
import documents_corpus as corpus_module
from documents_corpus import Corpus, Question

from navi.documents import chunking, isolate
from navi.documents.base import Hit, Place
from navi.documents.chunking import chunk
from navi.documents.extract import extract
from navi.documents.isolate import extract_isolated
from navi.llm.messages import utcnow
from navi.memory.embedders import BuiltinEmbedder, Embedder
from navi.memory.minilm import MiniLMEmbedder
from navi.storage import document_search
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.documents import SqlDocumentStore
from navi.storage.schema_documents import document_chunks, document_vectors, documents
from navi.testing.postgres import PostgresCluster

OWNER = "local"


def matches(place: Place, target: tuple[str, object] | None) -> bool:
    if target is None:
        return True
    what, value = target
    if what == "page":
        return place.page == value
    if what == "slide":
        return place.slide == value
    if what == "sheet":
        return place.sheet == value
    return value in place.headings


@dataclass
class Scores:
    """One pipeline's answers to the questions."""

    ranks: list[int | None] = field(default_factory=list)  # of the first right hit (1-based), per answerable
    exact: list[bool] = field(default_factory=list)  # whether that question used the fact's words
    # Whether the question is in the held-out half (by a hash of its text): settings are chosen on
    # the other half, and both are reported.
    held: list[bool] = field(default_factory=list)
    cited: int = 0  # hits holding a fact's answer whose place is right
    holding: int = 0  # hits holding a fact's answer
    top_answerable: list[float] = field(default_factory=list)
    top_nowhere: list[float] = field(default_factory=list)

    def add(self, corpus: Corpus, question: Question, found: list[tuple[str, Place, str, float]]) -> None:
        fact = question.fact
        if fact is None:
            return
        doc = corpus.docs[fact.doc]
        target = doc.target(fact.unit)
        rank = next(
            (
                n
                for n, (name, place, _, _) in enumerate(found[:10], 1)
                if name == doc.name and matches(place, target)
            ),
            None,
        )
        self.ranks.append(rank)
        self.exact.append(question.exact)
        self.held.append(zlib.crc32(question.text.encode()) % 2 == 1)
        sentence = " ".join(fact.text.split())
        for name, place, text, _ in found[:5]:
            if sentence in " ".join(text.split()):
                self.holding += 1
                self.cited += name == doc.name and matches(place, target)

    def recall(self, k: int = 5, exact: bool | None = None, held: bool | None = None) -> float:
        ranks = [
            r
            for r, e, h in zip(self.ranks, self.exact, self.held, strict=True)
            if (exact is None or e == exact) and (held is None or h == held)
        ]
        return sum(1 for r in ranks if r is not None and r <= k) / max(1, len(ranks))

    def mrr(self) -> float:
        return sum(1 / r for r in self.ranks if r is not None) / len(self.ranks)

    def citation(self) -> float:
        return self.cited / self.holding if self.holding else 0.0


def quantiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


# --- Navi --------------------------------------------------------------------------------------------


@dataclass
class Indexing:
    pages: int = 0
    pdf_pages: int = 0
    words: int = 0
    chunks: int = 0
    cpu: dict[str, float] = field(default_factory=lambda: {"extract+chunk": 0.0, "embed": 0.0, "store": 0.0})
    wall: float = 0.0
    extracted: dict[str, Any] = field(default_factory=dict)  # name → Extracted, for the peer
    # The server's way: extraction in a child process (isolate.py), on a sample of documents.
    isolated_docs: int = 0
    isolated_pages: int = 0
    isolated_cpu: float = 0.0  # the children's CPU and this process's
    isolated_wall: float = 0.0
    isolated_start: float = 0.0  # the reader process's start, once per process (not in isolated_cpu)


def reader_cpu() -> float:
    """CPU seconds of the document reader process (isolate.py) and of the children it forked and
    reaped (one per document): /proc's utime, stime, cutime and cstime of its process."""
    pid = isolate.reader_pid()
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime (fields 14-17)
    return ticks / os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """This process's CPU, its reaped children's and the reader's tree."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime + reader_cpu()


async def index(store: SqlDocumentStore, corpus: Corpus, embedder: Embedder, isolated: int = 0) -> Indexing:
    collection = await store.create_collection(OWNER, "Bench")
    out = Indexing()
    start = time.perf_counter()
    for doc in corpus.docs:
        t0 = time.process_time()
        extracted = extract(doc.data, doc.name)
        chunks = chunk(extracted, max_tokens=ARGS.chunk_tokens, overlap_tokens=ARGS.overlap_tokens)
        t1 = time.process_time()
        vectors = await embedder([c.text for c in chunks])
        t2 = time.process_time()
        added = await store.add_document(OWNER, collection.id, doc.name, data=doc.data)
        claimed = await store.claim("bench", 600)
        assert claimed is not None and claimed.id == added.id
        done = await store.finish(
            added.id,
            "bench",
            kind=extracted.kind,
            pages=extracted.pages,
            chunks=chunks,
            vectors=vectors,
            embedder=embedder.name,
        )
        assert done
        t3 = time.process_time()
        out.cpu["extract+chunk"] += t1 - t0
        out.cpu["embed"] += t2 - t1
        out.cpu["store"] += t3 - t2
        out.pages += len(doc.units)
        out.pdf_pages += len(doc.units) if doc.kind == "pdf" else 0
        out.words += len(extracted.text.split())
        out.chunks += len(chunks)
        out.extracted[doc.name] = extracted
    out.wall = time.perf_counter() - start
    sample = corpus.docs[:isolated]
    if sample:  # the reader process starts (and imports the readers) once, with the first document
        started = time.process_time()
        await extract_isolated(sample[0].data, sample[0].name)
        out.isolated_start = time.process_time() - started + reader_cpu()
    before, wall = tree_cpu(), time.perf_counter()
    for doc in sample:
        await extract_isolated(doc.data, doc.name)
    out.isolated_cpu = tree_cpu() - before
    out.isolated_wall = time.perf_counter() - wall
    out.isolated_docs = len(sample)
    out.isolated_pages = sum(len(d.units) for d in sample)
    return out


async def ask_navi(
    store: SqlDocumentStore,
    corpus: Corpus,
    embedder: Embedder,
    questions: list[Question],
    *,
    vectors: bool = True,
    abstain: bool = False,
    cpu: list[float] | None = None,
) -> tuple[Scores, list[float], float]:
    """Scores, the search latencies (store only) and the mean embedding time of a question; `cpu`
    gets each search's CPU time (the process's, every thread)."""
    scores, times, embed_times = Scores(), [], []
    for question in questions:
        t0 = time.perf_counter()
        qv = (await embedder([question.text]))[0]
        embed_times.append(time.perf_counter() - t0)
        t1, c1 = time.perf_counter(), time.process_time()
        hits: list[Hit] = await store.search(
            OWNER,
            question.text,
            limit=10,
            query_vector=qv if vectors else None,
            embedder=embedder.name if vectors else None,
        )
        times.append(time.perf_counter() - t1)
        if cpu is not None:
            cpu.append(time.process_time() - c1)
        scores.add(corpus, question, [(h.document_name, h.place, h.text, h.score) for h in hits])
        if not abstain:
            continue
        # Abstention: the best cosine of any chunk (the vector ranking alone).
        best = await store.search(OWNER, "", limit=1, query_vector=qv, embedder=embedder.name)
        top = best[0].score if best else 0.0
        (scores.top_answerable if question.fact is not None else scores.top_nowhere).append(top)
    return scores, times, statistics.mean(embed_times)


async def pad(
    store: SqlDocumentStore,
    corpus: Corpus,
    upto: int,
    per_doc: int,
    embedder: Embedder,
    rng: random.Random,
) -> float:
    """Synthesized documents written straight into the store until the owner has `upto`; seconds."""
    collection = (await store.list_collections(OWNER))[0]
    have = len(await store.list_documents(OWNER))
    start = time.perf_counter()
    now = utcnow()
    known = {f.entity for f in corpus.facts}
    entities = [corpus_module._name(rng, set(known)) for _ in range(500)]  # names of their own
    # A pool of filler chunks with their real vectors, drawn from for every synthesized chunk.
    pool = [" ".join(corpus_module._filler(rng, entities) for _ in range(3)) for _ in range(2000)]
    pool_vectors = np.asarray(await embedder(pool), dtype=np.float32)
    dim = pool_vectors.shape[1]
    next_id = (
        int(
            await store.db.read(lambda conn: conn.execute(select(func.max(document_chunks.c.id))).scalar())
            or 0
        )
        + 1
    )
    batch = 2000
    while have < upto:
        count = min(batch, upto - have)
        doc_rows, chunk_rows, vector_rows = [], [], []
        for n in range(have, have + count):
            doc_id = hashlib.sha1(f"pad{n}".encode()).hexdigest()[:32]
            doc_rows.append(
                {
                    "id": doc_id,
                    "owner": OWNER,
                    "collection_id": collection.id,
                    "name": f"pad-{n:06d}.txt",
                    "kind": "text",
                    "size": 1,
                    "sha256": "",
                    "source": "upload",
                    "path": None,
                    "state": "ready",
                    "progress": 1.0,
                    "error": None,
                    "pages": 1,
                    "chunks": per_doc,
                    "lease_worker": None,
                    "lease_until": None,
                    "lease_seconds": None,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            ids = list(range(next_id, next_id + per_doc))
            next_id += per_doc
            picks = [rng.randrange(len(pool)) for _ in ids]
            for ordinal, chunk_id in enumerate(ids):
                text = pool[picks[ordinal]]
                chunk_rows.append(
                    {
                        "id": chunk_id,
                        "document_id": doc_id,
                        "owner": OWNER,
                        "ordinal": ordinal,
                        "page": None,
                        "slide": None,
                        "sheet": None,
                        "cells": None,
                        "headings": "[]",
                        "text": text,
                    }
                )
            matrix = np.ascontiguousarray(pool_vectors[picks])
            vector_rows.append(
                {
                    "document_id": doc_id,
                    "owner": OWNER,
                    "embedder": embedder.name,
                    "dim": dim,
                    "count": per_doc,
                    "chunk_ids": np.array(ids, dtype=np.int64).tobytes(),
                    "vectors": matrix.tobytes(),
                }
            )

        def write(
            conn: Any, d: list[Any] = doc_rows, c: list[Any] = chunk_rows, v: list[Any] = vector_rows
        ) -> None:
            conn.execute(insert(documents), d)
            conn.execute(insert(document_chunks), c)
            conn.execute(insert(document_vectors), v)

        await store.db.write(write)
        have += count
    if store.db.dialect == "postgresql":
        await store.db.write(lambda conn: conn.exec_driver_sql("ANALYZE"))
    return time.perf_counter() - start


# --- the peer: LangChain's splitter + BM25 -------------------------------------------------------------

_WORDS = re.compile(r"\w+")


class Peer:
    def __init__(self, tokenize: Callable[[str], list[str]]) -> None:
        self.tokenize = tokenize
        self.chunks: list[tuple[str, Place, str]] = []
        self.bm25: Any = None
        self.cpu = 0.0

    def index(self, corpus: Corpus, extracted: dict[str, Any]) -> None:
        from langchain_text_splitters import RecursiveCharacterTextSplitter
        from rank_bm25 import BM25Okapi

        t0 = time.process_time()
        splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
        for doc in corpus.docs:
            pages: dict[Place, list[str]] = {}
            for section in extracted[doc.name].sections:  # page by page, as PyPDFLoader gives them
                place = Place(
                    section.place.page, section.place.slide, section.place.sheet, None, section.place.headings
                )
                pages.setdefault(place, []).append(section.text)
            for place, texts in pages.items():
                for piece in splitter.split_text("\n\n".join(texts)):
                    self.chunks.append((doc.name, place, piece))
        self.bm25 = BM25Okapi([self.tokenize(text) for _, _, text in self.chunks])
        self.cpu = time.process_time() - t0

    def ask(self, corpus: Corpus, questions: list[Question]) -> tuple[Scores, list[float]]:
        scores, times = Scores(), []
        for question in questions:
            t0 = time.perf_counter()
            ranked = self.bm25.get_scores(self.tokenize(question.text))
            best = np.argsort(-ranked)[:10]
            times.append(time.perf_counter() - t0)
            scores.add(corpus, question, [(*self.chunks[i], float(ranked[i])) for i in best])
        return scores, times


def peer_available() -> bool:
    try:
        import langchain_text_splitters  # noqa: F401
        import rank_bm25  # noqa: F401
    except ImportError:
        return False
    return True


# --- one database ------------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    indexing: Indexing
    hybrid: Scores
    keywords: Scores | None  # on the first database only
    latency: dict[int, dict[str, tuple[float, float]]]  # documents → {"hybrid"/"keywords": (p50, p99)}
    recall_big: dict[int, float]
    pad_seconds: dict[int, float]
    embed_ms: float


async def measure(name: str, url: str, corpus: Corpus, args: argparse.Namespace) -> Run:
    embedder = make_embedder(args.embedder)
    await embedder([""])  # loaded before anything is timed
    store = SqlDocumentStore.at(url)
    await store.open()
    try:
        indexing = await index(store, corpus, embedder, args.isolated if name == "SQLite" else 0)
        answerable = [q for q in corpus.questions if q.fact is not None]
        # The quality passes on the first database only: the ranking is the same code on both (a
        # small run showed the same figures to the third decimal); the second is timed.
        first = name == "SQLite"
        asked = corpus.questions if first else answerable[: args.sample]
        hybrid, _, embed_mean = await ask_navi(store, corpus, embedder, asked, abstain=first)
        keywords = (await ask_navi(store, corpus, embedder, answerable, vectors=False))[0] if first else None
        latency: dict[int, dict[str, tuple[float, float]]] = {}
        recall_big: dict[int, float] = {}
        pad_seconds: dict[int, float] = {}
        rng = random.Random(7)
        for size in () if args.no_latency else (1000, args.big):
            pad_seconds[size] = await pad(store, corpus, size, args.chunks_per_doc, embedder, rng)
            count = args.sample if size <= 1000 else args.big_sample
            sample = random.Random(11).sample(answerable, min(count, len(answerable)))
            hybrid_cpu: list[float] = []
            keyword_cpu: list[float] = []
            scored, hybrid_times, _ = await ask_navi(store, corpus, embedder, sample, cpu=hybrid_cpu)
            _, keyword_times, _ = await ask_navi(
                store, corpus, embedder, sample, vectors=False, cpu=keyword_cpu
            )
            latency[size] = {
                "hybrid": quantiles(hybrid_times),
                "keywords": quantiles(keyword_times),
                "hybrid CPU": quantiles(hybrid_cpu),
                "keywords CPU": quantiles(keyword_cpu),
            }
            recall_big[size] = scored.recall()
        return Run(name, indexing, hybrid, keywords, latency, recall_big, pad_seconds, embed_mean * 1000)
    finally:
        await store.aclose()


def make_embedder(name: str) -> Embedder:
    return MiniLMEmbedder() if name == "minilm" else BuiltinEmbedder()


def abstention(scores: Scores) -> tuple[float, float, float]:
    """The threshold that keeps 95% of answerable questions (their best cosine at or above it), the
    share of nowhere-questions below it (abstained), and that share at the embedder's own 0.2."""
    threshold = float(np.quantile(scores.top_answerable, 0.05))
    below = sum(1 for s in scores.top_nowhere if s < threshold) / len(scores.top_nowhere)
    floor = make_embedder(ARGS.embedder).min_similarity
    fixed = sum(1 for s in scores.top_nowhere if s < floor) / len(scores.top_nowhere)
    return threshold, below, fixed


def row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(head: list[str]) -> None:
    print(row(*head))
    print("|---|" + "---:|" * (len(head) - 1))


def report(
    runs: list[Run], peers: list[tuple[str, Peer, Scores, list[float]]], corpus: Corpus, seconds: float
) -> None:
    first = runs[0]
    ix = first.indexing
    kinds = ", ".join(f"{k} {sum(d.kind == k for d in corpus.docs)}" for k in corpus_module.KINDS)
    exact = sum(q.exact for q in corpus.questions if q.fact is not None)
    nowhere = sum(q.fact is None for q in corpus.questions)
    print(
        f"Corpus: {len(corpus.docs)} documents ({kinds}), {ix.pages:,} pages/slides/sheets/sections, "
        f"{ix.words:,} words; {len(corpus.facts):,} questions ({exact} in the fact's words), "
        f"{nowhere} answered nowhere"
    )
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; run took {seconds:.0f} s\n"
    )
    table(
        [
            "pipeline",
            "recall@5 (right page)",
            "tuning half",
            "held-out half",
            "fact's words",
            "paraphrased",
            "MRR@10",
            "citation page",
            "chunks",
        ]
    )

    def quality(label: str, s: Scores, chunks: int) -> None:
        print(
            row(
                label,
                f"{s.recall():.3f}",
                f"{s.recall(held=False):.3f}",
                f"{s.recall(held=True):.3f}",
                f"{s.recall(exact=True):.3f}",
                f"{s.recall(exact=False):.3f}",
                f"{s.mrr():.3f}",
                f"{s.citation():.3f}",
                f"{chunks:,}",
            )
        )

    for run in runs:
        sampled = "" if run.keywords is not None else f" ({len(run.hybrid.ranks)} questions)"
        quality(f"Navi hybrid, {run.name}{sampled}", run.hybrid, run.indexing.chunks)
        if run.keywords is not None:
            quality(f"Navi keywords only, {run.name}", run.keywords, run.indexing.chunks)
    for label, peer, s, _ in peers:
        quality(label, s, len(peer.chunks))
    for label, _, s, _ in peers:
        print(
            f"\nNavi hybrid ({first.name}) / {label}: recall@5 {first.hybrid.recall() / s.recall():.2f}x, "
            f"MRR {first.hybrid.mrr() / s.mrr():.2f}x"
        )
    threshold, below, fixed = abstention(first.hybrid)
    print(
        f"\nAbstention (best cosine, {first.name}): answerable median "
        f"{statistics.median(first.hybrid.top_answerable):.3f}, nowhere median "
        f"{statistics.median(first.hybrid.top_nowhere):.3f}; at {threshold:.3f} (keeps 95% of answerable) "
        f"{below:.0%} of nowhere-questions abstain; at the embedder's own floor, {fixed:.0%}\n"
    )
    table(["indexing", "pages", "CPU s: extract+chunk", "embed", "store", "pages per CPU-second", "wall s"])
    for run in runs:
        i = run.indexing
        cpu = sum(i.cpu.values())
        print(
            row(
                f"Navi, {run.name}",
                f"{i.pages:,}",
                f"{i.cpu['extract+chunk']:.1f}",
                f"{i.cpu['embed']:.1f}",
                f"{i.cpu['store']:.1f}",
                f"{i.pages / cpu:.1f}",
                f"{i.wall:.1f}",
            )
        )
    if ix.isolated_pages:
        rest = (ix.cpu["embed"] + ix.cpu["store"]) / ix.pages * ix.isolated_pages
        cpu = ix.isolated_cpu + rest
        print(
            row(
                f"Navi, {first.name}, extraction in a child process ({ix.isolated_docs} documents)",
                f"{ix.isolated_pages:,}",
                f"{ix.isolated_cpu:.1f}",
                "",
                "",
                f"{ix.isolated_pages / cpu:.1f}",
                f"{ix.isolated_wall:.1f}",
            )
        )
        print(f"(the reader process's start, once per Navi process: {ix.isolated_start:.2f} CPU s)")
    for label, peer, _, _ in peers:
        print(
            row(
                f"{label} (split + BM25, no extraction)",
                f"{ix.pages:,}",
                "",
                "",
                "",
                f"{ix.pages / peer.cpu:.1f}",
                "",
            )
        )
    print()
    table(
        [
            "search ms",
            "documents",
            "chunks",
            "hybrid p50",
            "p99",
            "keywords p50",
            "p99",
            "hybrid CPU p50",
            "keywords CPU p50",
            "recall@5",
            "filled in s",
        ]
    )
    for run in runs:
        for size, lat in run.latency.items():
            chunks = run.indexing.chunks + (size - len(corpus.docs)) * ARGS.chunks_per_doc
            print(
                row(
                    f"Navi, {run.name}",
                    f"{size:,}",
                    f"{chunks:,}",
                    f"{lat['hybrid'][0]:.1f}",
                    f"{lat['hybrid'][1]:.1f}",
                    f"{lat['keywords'][0]:.1f}",
                    f"{lat['keywords'][1]:.1f}",
                    f"{lat['hybrid CPU'][0]:.1f}",
                    f"{lat['keywords CPU'][0]:.1f}",
                    f"{run.recall_big[size]:.3f}",
                    f"{run.pad_seconds[size]:.0f}",
                )
            )
    for label, peer, _, times in peers:
        p50, p99 = quantiles(times)
        print(
            row(
                label,
                len(corpus.docs),
                f"{len(peer.chunks):,}",
                "",
                "",
                f"{p50:.1f}",
                f"{p99:.1f}",
                "",
                "",
                "",
                "",
            )
        )
    print(f"\nEmbedding a question ({ARGS.embedder}, not in the latencies above): {first.embed_ms:.2f} ms")


ARGS = argparse.Namespace()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=240)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--big", type=int, default=100_000, help="documents of the large measurement")
    parser.add_argument("--chunks-per-doc", type=int, default=3, help="chunks of each synthesized document")
    parser.add_argument("--sample", type=int, default=300, help="questions timed at 1,000 documents")
    parser.add_argument("--big-sample", type=int, default=40, help="questions timed at --big documents")
    parser.add_argument(
        "--isolated", type=int, default=40, help="documents also extracted in a child process"
    )
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-latency", action="store_true", help="quality and indexing only")
    parser.add_argument("--words-weight", type=float, help="the fusion's weight of the keyword ranking")
    parser.add_argument("--embedder", choices=["minilm", "wordllama"], default="minilm")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--chunk-tokens", type=int, default=chunking.MAX_TOKENS, help="chunk size")
    parser.add_argument("--overlap-tokens", type=int, default=chunking.OVERLAP_TOKENS)
    args = parser.parse_args(namespace=ARGS)
    if args.words_weight is not None:
        document_search.WORDS_WEIGHT = args.words_weight
    start = time.perf_counter()
    corpus = corpus_module.build(args.seed, args.documents, args.questions)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        runs.append(await measure("SQLite", sqlite_url(Path(tmp) / "documents.db"), corpus, args))
    if not args.no_postgres:
        with PostgresCluster(fsync=True) as cluster:
            runs.append(await measure("PostgreSQL", postgres_url(cluster.create_database()), corpus, args))
    peers = []
    if peer_available():
        for label, tokenize in (
            ("LangChain splitter + BM25 (str.split)", str.split),
            ("LangChain splitter + BM25 (lower-cased words)", lambda t: _WORDS.findall(t.lower())),
        ):
            peer = Peer(tokenize)
            peer.index(corpus, runs[0].indexing.extracted)
            scored, times = peer.ask(corpus, [q for q in corpus.questions if q.fact is not None])
            peers.append((label, peer, scored, times))
    else:
        print("(the peer is skipped: pip install -e '.[bench]')\n")
    report(runs, peers, corpus, time.perf_counter() - start)


if __name__ == "__main__":
    asyncio.run(main())
