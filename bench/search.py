"""Search across conversations: latency of the session store's search as messages pile up, on
SQLite (FTS5) and PostgreSQL (tsvector + GIN).

For each size the store is filled with synthetic sessions of 100 display messages (user and
assistant turns of 5 to 60 words from a 20,000-word vocabulary with log-uniform ranks, so common
and rare words both occur), half of them the searching user's and half four other users', written
through `session_messages` so the triggers index them as a turn would. Then searches of one to
three words are timed through `SessionStore.search` — the call `GET /search`, `navi sessions
search` and the `search_conversations` tool make — for the first user, 20 results each.

    .venv/bin/python bench/search.py [--sizes 10000,100000] [--queries 300] [--no-postgres]
        [--sqlite-file PATH]

`--sqlite-file` keeps the SQLite database in PATH: a later run with the same sizes finds it filled
and only searches (filling 1,000,000 messages takes minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, insert, select

from navi.llm.messages import Message
from navi.sessions.search import SearchQuery, terms
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.schema import session_messages, sessions
from navi.storage.sessions import SqlSessionStore
from navi.testing.postgres import PostgresCluster

PER_SESSION = 100
OWNERS = ["local", "local", "local", "local", "u1", "u2", "u3", "u4"]
START = datetime(2025, 1, 1, tzinfo=UTC)


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def zipf_word(rng: random.Random, vocab: list[str]) -> str:
    """Log-uniform ranks: a few words are very common, most are rare, as in real text."""
    return vocab[min(len(vocab) - 1, int(len(vocab) ** rng.random()) - 1)]


async def fill(store: SqlSessionStore, first: int, count: int, rng: random.Random, vocab: list[str]) -> None:
    for start in range(first, first + count, 50 * PER_SESSION):
        session_rows, message_rows = [], []
        for s in range(start, min(first + count, start + 50 * PER_SESSION), PER_SESSION):
            sid = str(uuid.UUID(int=s + 1))
            when = START + timedelta(minutes=s)
            session_rows.append(
                {
                    "id": sid,
                    "owner": OWNERS[(s // PER_SESSION) % len(OWNERS)],
                    "profile_id": "secretary",
                    "name": f"session {s // PER_SESSION}",
                    "pinned": False,
                    "context_token_count": 0,
                    "display_count": PER_SESSION,
                    "context_count": 0,
                    "planning_count": 0,
                    "context_rev": 0,
                    "created_at": when,
                    "last_active": when,
                }
            )
            for i in range(PER_SESSION):
                text = " ".join(zipf_word(rng, vocab) for _ in range(rng.randint(5, 60)))
                msg = Message(role="user" if i % 2 == 0 else "assistant", content=text, created_at=when)
                message_rows.append(
                    {
                        "session_id": sid,
                        "position": i,
                        "message_id": msg.id,
                        "role": msg.role,
                        "created_at": when,
                        "data": msg.model_dump_json(),
                    }
                )

        def write(conn, session_rows=session_rows, message_rows=message_rows) -> None:  # type: ignore[no-untyped-def]
            conn.execute(insert(sessions), session_rows)
            conn.execute(insert(session_messages), message_rows)

        await store.db.write(write)


async def measure(url: str, sizes: list[int], queries: int) -> list[tuple[int, float, float, float, float]]:
    rng = random.Random(7)
    vocab = vocabulary(rng)
    store = SqlSessionStore.at(url)
    await store.open()
    results = []
    counted = select(func.count()).select_from(session_messages)
    total = await store.db.read(lambda c: c.execute(counted).scalar() or 0)
    try:
        for size in sizes:
            began = time.perf_counter()
            if size > total:
                await fill(store, total, size - total, rng, vocab)
                total = size
            filled = time.perf_counter() - began
            ask_rng = random.Random(size)  # the queries: the same for a size, whether filled now or before
            asks = [
                SearchQuery(
                    terms(" ".join(zipf_word(ask_rng, vocab) for _ in range(ask_rng.randint(1, 3)))), limit=20
                )
                for _ in range(queries)
            ]
            for ask in asks[:20]:  # warm caches
                await store.search(ask, owner="local")
            times = []
            hits = 0
            for ask in asks:
                start = time.perf_counter()
                found = await store.search(ask, owner="local")
                times.append(time.perf_counter() - start)
                hits += bool(found)
            times.sort()
            results.append(
                (
                    size,
                    statistics.median(times) * 1000,
                    times[min(len(times) - 1, int(len(times) * 0.99))] * 1000,
                    hits / len(asks),
                    filled,
                )
            )
            print(
                f"  {url.split(':')[0]} {size:,}: p50 {results[-1][1]:.2f} ms, p99 {results[-1][2]:.2f} ms",
                flush=True,
            )
    finally:
        await store.aclose()
    return results


def table(name: str, rows: list[tuple[int, float, float, float, float]]) -> str:
    lines = [
        f"| {name} messages | p50 ms | p99 ms | queries with results | filled in s |",
        "|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {size:,} | {p50:.2f} | {p99:.2f} | {hit:.0%} | {filled:.0f} |"
        for size, p50, p99, hit, filled in rows
    ]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--sqlite-file", type=Path, help="keep (or reuse) the SQLite database here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.sqlite_file is not None:
        sqlite_rows = await measure(sqlite_url(args.sqlite_file), sizes, args.queries)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_rows = await measure(sqlite_url(Path(tmp) / "search.db"), sizes, args.queries)
    print(table("SQLite", sqlite_rows))
    if not args.no_postgres:
        with PostgresCluster(fsync=True) as cluster:
            pg_rows = await measure(postgres_url(cluster.create_database()), sizes, args.queries)
        print()
        print(table("PostgreSQL", pg_rows))


if __name__ == "__main__":
    asyncio.run(main())
