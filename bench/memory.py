"""Memory search latency as facts pile up, on SQLite (FTS5) and PostgreSQL (tsvector + GIN).

For each size the store is filled with synthetic facts (categories, keys and values drawn from a
2,000-word vocabulary, so common and rare words both occur), then 300 searches of one to three
words are timed through `search_facts` — the same call the `memory_search` tool and REST use.

    .venv/bin/python bench/memory.py [--sizes 1000,10000,100000] [--queries 300] [--no-postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

from navi.llm.messages import utcnow
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.memory import SqlMemoryStore
from navi.storage.schema import memory_facts
from navi.testing.postgres import PostgresCluster

CATEGORIES = [
    "location",
    "work",
    "projects",
    "preferences",
    "devices",
    "servers",
    "home",
    "family",
    "routines",
    "pets",
    "contacts",
    "identity",
]


def vocabulary(rng: random.Random, size: int = 2000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


def zipf_word(rng: random.Random, vocab: list[str]) -> str:
    """Log-uniform ranks: a few words are very common, most are rare, as in real text."""
    return vocab[min(len(vocab) - 1, int(len(vocab) ** rng.random()) - 1)]


async def fill(store: SqlMemoryStore, first: int, count: int, rng: random.Random, vocab: list[str]) -> None:
    now = utcnow()
    rows = [
        {
            "owner": "local",
            "category": rng.choice(CATEGORIES),
            "key": f"{zipf_word(rng, vocab)}_{first + i}",
            "value": " ".join(zipf_word(rng, vocab) for _ in range(rng.randint(3, 12))),
            "session_id": None,
            "created_at": now,
            "updated_at": now,
            "confirmations": 1,
        }
        for i in range(count)
    ]
    for start in range(0, count, 5000):
        batch = rows[start : start + 5000]
        await store.db.write(lambda conn, batch=batch: conn.execute(insert(memory_facts), batch))


async def measure(url: str, sizes: list[int], queries: int) -> list[tuple[int, float, float, float]]:
    rng = random.Random(7)
    vocab = vocabulary(rng)
    store = SqlMemoryStore.at(url)
    await store.open()
    results = []
    total = 0
    try:
        for size in sizes:
            await fill(store, total, size - total, rng, vocab)
            total = size
            words = [
                " ".join(zipf_word(rng, vocab) for _ in range(rng.randint(1, 3))) for _ in range(queries)
            ]
            for q in words[:20]:  # warm caches
                await store.search_facts(q)
            times = []
            hits = 0
            for q in words:
                start = time.perf_counter()
                found = await store.search_facts(q, limit=15)
                times.append(time.perf_counter() - start)
                hits += bool(found)
            times.sort()
            results.append(
                (
                    size,
                    statistics.median(times) * 1000,
                    times[int(len(times) * 0.95) - 1] * 1000,
                    hits / len(words),
                )
            )
    finally:
        await store.aclose()
    return results


def table(name: str, rows: list[tuple[int, float, float, float]]) -> str:
    lines = [f"| {name} facts | median ms | p95 ms | queries with results |", "|---:|---:|---:|---:|"]
    lines += [f"| {size:,} | {med:.2f} | {p95:.2f} | {hit:.0%} |" for size, med, p95, hit in rows]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_rows = await measure(sqlite_url(Path(tmp) / "memory.db"), sizes, args.queries)
    print(table("SQLite", sqlite_rows))
    if not args.no_postgres:
        with PostgresCluster(fsync=True) as cluster:
            pg_rows = await measure(postgres_url(cluster.create_database()), sizes, args.queries)
        print()
        print(table("PostgreSQL", pg_rows))
    print(f"\nSQLite median at {sizes[-1]:,} facts: {sqlite_rows[-1][1]:.2f} ms (target < 5 ms)")


if __name__ == "__main__":
    asyncio.run(main())
