"""Search across conversations on SQLite: variants of the search statement compared in one run, on a
database `bench/search.py --sqlite-file PATH` filled, counting each statement's CPU time (the
thread's, so other processes on a loaded machine do not count) as well as the wall clock.

Each query runs every variant once, in a rotating order, so the machine's load falls on all alike;
the table gives each variant's p50 and p99 and its p50 as a share of the first one's. The first
variants use the database's own `message_search_fts` (before migration 0019: no prefix index).

    .venv/bin/python bench/search_variants.py PATH [--size 1000000] [--queries 300]

It adds scratch FTS5 tables to PATH the first time: `bench_fts_prefix` (prefix='2 3') and
`bench_fts_rowids` (prefix='2 3', detail=none: no positions, so bm25 sees each word once a row).
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bench.search import vocabulary, zipf_word
from navi.sessions.search import SearchQuery, fold, terms

COLUMNS = "d.session_id, s.name, s.profile_id, d.message_id, d.role, d.created_at, d.body"


def statement(fts: str, window: int, rank: str = "bm25") -> str:
    """The store's SQLite statement (navi/storage/search.py) over FTS table `fts`."""
    score = f"bm25({fts})" if rank == "bm25" else "0"
    return f"""SELECT {COLUMNS}, m.rank AS rank
        FROM (SELECT {fts}.rowid AS id, {score} AS rank
              FROM {fts} JOIN message_search di ON di.id = {fts}.rowid
              WHERE {fts} MATCH :match AND di.owner = :owner
              ORDER BY {fts}.rowid DESC LIMIT {window}) m
        JOIN message_search d ON d.id = m.id
        JOIN sessions s ON s.id = d.session_id
        ORDER BY m.rank, d.created_at DESC LIMIT 20"""


def window_rows(fts: str, window: int) -> str:
    """The newest `window` matches of the owner with their text, unranked (ranked in Python)."""
    return f"""SELECT di.id, di.body FROM {fts} JOIN message_search di ON di.id = {fts}.rowid
        WHERE {fts} MATCH :match AND di.owner = :owner ORDER BY {fts}.rowid DESC LIMIT {window}"""


WORD = re.compile(r"[^\W_]+")


def py_rank(ask: SearchQuery, rows: list[tuple[int, str]], k1: float = 1.2, b: float = 0.75) -> list[int]:
    """BM25 with every query word weighing alike, over the window's rows: the 20 best ids."""
    *whole, last = ask.terms
    scored = []
    lengths = []
    counts = []
    for _, body in rows:
        words = WORD.findall(fold(body))
        lengths.append(len(words))
        tf = [0] * len(ask.terms)
        for w in words:
            if w.startswith(last):
                tf[-1] += 1
            elif w in whole:
                tf[whole.index(w)] += 1
        counts.append(tf)
    avg = sum(lengths) / len(lengths) if lengths else 1.0
    for (rid, _), n, tf in zip(rows, lengths, counts, strict=True):
        norm = k1 * (1 - b + b * n / avg)
        scored.append((-sum(f * (k1 + 1) / (f + norm) for f in tf), -rid))
    scored.sort()
    return [-r for _, r in scored[:20]]


def exact(ask: SearchQuery) -> str:
    return " ".join(f'"{t}"' for t in ask.terms)


def ensure_table(db: sqlite3.Connection, name: str, options: str) -> None:
    """A scratch contentless FTS5 table over `message_search` with `options`."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone():
        return
    began = time.perf_counter()
    db.execute(
        f"CREATE VIRTUAL TABLE {name} USING fts5(body, content='', "
        f"tokenize='unicode61 remove_diacritics 2', {options})"
    )
    db.execute(f"INSERT INTO {name}(rowid, body) SELECT id, body FROM message_search")
    db.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
    db.commit()
    print(f"built {name} in {time.perf_counter() - began:.0f} s", flush=True)


Variant = tuple[str, Callable[[SearchQuery], object]]


def variants(db: sqlite3.Connection) -> list[Variant]:
    def sql(
        text: str, match: Callable[[SearchQuery], str] = SearchQuery.fts5
    ) -> Callable[[SearchQuery], object]:
        return lambda ask: db.execute(text, {"match": match(ask), "owner": "local"}).fetchall()

    def ranked_in_python(fts: str, window: int) -> Callable[[SearchQuery], object]:
        def run(ask: SearchQuery) -> object:
            rows = db.execute(window_rows(fts, window), {"match": ask.fts5(), "owner": "local"}).fetchall()
            best = py_rank(ask, rows)
            marks = ",".join("?" * len(best))
            return db.execute(
                f"SELECT {COLUMNS} FROM message_search d JOIN sessions s ON s.id = d.session_id "
                f"WHERE d.id IN ({marks})",
                best,
            ).fetchall()

        return run

    return [
        ("message_search_fts as it is: bm25, window 500", sql(statement("message_search_fts", 500))),
        ("last word exact (no prefix)", sql(statement("message_search_fts", 500), exact)),
        ("window 100", sql(statement("message_search_fts", 100))),
        ("no bm25 (newest first)", sql(statement("message_search_fts", 500, rank="none"))),
        ("scratch table with prefix='2 3'", sql(statement("bench_fts_prefix", 500))),
        ("scratch prefix='2 3', window 100", sql(statement("bench_fts_prefix", 100))),
        ("ranked in Python (BM25, words alike), window 500", ranked_in_python("message_search_fts", 500)),
        ("ranked in Python, window 200", ranked_in_python("message_search_fts", 200)),
        ("scratch prefix='2 3', ranked in Python, window 200", ranked_in_python("bench_fts_prefix", 200)),
        ("prefix='2 3', detail=none (no positions)", sql(statement("bench_fts_rowids", 500))),
        ("prefix='2 3', detail=none, window 100", sql(statement("bench_fts_rowids", 100))),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--size", type=int, default=1_000_000, help="the size the queries were drawn for")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--typing", action="store_true", help="the last word cut to 2 or 3 letters")
    parser.add_argument("--only", default="", help="only the variants whose name has this (and the first)")
    args = parser.parse_args()
    db = sqlite3.connect(args.path)
    ensure_table(db, "bench_fts_prefix", "prefix='2 3'")
    ensure_table(db, "bench_fts_rowids", "prefix='2 3', detail=none")
    vocab = vocabulary(random.Random(7))
    rng = random.Random(args.size)  # the queries bench/search.py asks at this size
    asks = [
        SearchQuery(terms(" ".join(zipf_word(rng, vocab) for _ in range(rng.randint(1, 3)))), limit=20)
        for _ in range(args.queries)
    ]
    if args.typing:  # as a search box asks while one types
        asks = [SearchQuery((*a.terms[:-1], a.terms[-1][: rng.choice((2, 3))]), limit=20) for a in asks]
    tried = variants(db)
    tried = [v for n, v in enumerate(tried) if n == 0 or args.only in v[0]]
    cpu: list[list[float]] = [[] for _ in tried]
    wall: list[list[float]] = [[] for _ in tried]
    for n, ask in enumerate(asks):
        order = list(range(len(tried)))
        order = order[n % len(order) :] + order[: n % len(order)]
        for i in order:
            run = tried[i][1]
            c0, w0 = time.thread_time(), time.perf_counter()
            run(ask)
            cpu[i].append(time.thread_time() - c0)
            wall[i].append(time.perf_counter() - w0)
    base = statistics.median(cpu[0])
    print(f"{args.queries} queries at {args.size:,} messages; CPU ms (thread time), wall ms")
    print("| variant | CPU p50 | CPU p99 | wall p50 | wall p99 | CPU p50 vs now |")
    print("|---|---:|---:|---:|---:|---:|")
    for (name, _), c, w in zip(tried, cpu, wall, strict=True):
        c.sort()
        w.sort()
        p99 = min(len(c) - 1, int(len(c) * 0.99))
        print(
            f"| {name} | {statistics.median(c) * 1000:.2f} | {c[p99] * 1000:.2f} | "
            f"{statistics.median(w) * 1000:.2f} | {w[p99] * 1000:.2f} | {statistics.median(c) / base:.2f} |"
        )


if __name__ == "__main__":
    main()
