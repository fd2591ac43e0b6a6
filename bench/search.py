"""Search across conversations: latency of the session store's search as messages pile up, on
SQLite (FTS5) and PostgreSQL (tsvector + GIN).

For each size the store is filled with synthetic sessions of 100 display messages (user and
assistant turns of 5 to 60 words from a 20,000-word vocabulary with log-uniform ranks, so common
and rare words both occur), half of them the searching user's and half four other users', written
through `session_messages` so the triggers index them as a turn would. Then searches of one to
three words are timed through `SessionStore.search` — the call `GET /search`, `navi sessions
search` and the `search_conversations` tool make — for the first user, 20 results each.

    .venv/bin/python bench/search.py [--sizes 10000,100000] [--queries 300] [--no-postgres]
        [--windows 100,500] [--typing] [--sqlite-file PATH] [--counted]

`--sqlite-file` keeps the SQLite database in PATH: a later run with the same sizes finds it filled
and only searches (filling 1,000,000 messages takes minutes). `--windows` compares how many matches
a search ranks (navi/storage/search.py's WINDOW) in one run, each query once per window in turn;
`--typing` cuts each query's last word to 2 or 3 letters, as the page searches while one types.
`--counted` also times each query (in turn with the other, in the same run) with the words' weights
counted per search as before migration 0034 (SQLite: each word's matches among the user's messages
walked up to 2,000, the counts kept by the store between searches while the user's number moves
less than 1%) — the rows named "counted" — against the counts the triggers keep.
Each search's CPU time (the process's, every thread) is given beside the wall clock: on a loaded
machine the wall clock counts the others' work too.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import NamedTuple

from sqlalchemy import Connection, func, insert, select, text

from navi.llm.messages import Message
from navi.sessions.search import SearchQuery, terms
from navi.storage import search
from navi.storage.counts import Counts
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


# What a search weighed its words by before migration 0034 (SQLite): each word's matches among the
# user's messages counted up to COUNT_CAP, the counts kept between searches by `Counts`.
COUNT_CAP = 2000
_COUNT = text(
    """SELECT count(*) FROM (SELECT 1 FROM message_search_fts
        CROSS JOIN message_search d INDEXED BY ix_message_search_owner_id
        ON d.owner = :owner AND d.id = message_search_fts.rowid
        WHERE message_search_fts MATCH :match LIMIT :cap)"""
)


def _count(conn: Connection, params: dict[str, object]) -> int:
    return int(conn.execute(_COUNT, params).scalar() or 0)


Weights = Callable[[Connection, SearchQuery, str, int], dict[str, float]]


def counted_weights(kept: Counts) -> Weights:
    """`search.weights` as it was: counted per search (and kept by `kept` while the user's number
    of messages moves less than 1%)."""

    def weights(conn: Connection, query: SearchQuery, owner: str, matched: int) -> dict[str, float]:
        total = max(kept.total(conn, owner), matched)
        found = {}
        for n, term in enumerate(query.terms):
            prefix = n == len(query.terms) - 1 and len(term) <= 3
            match = f'"{term}"*' if prefix else f'"{term}"'
            params = {"match": match, "owner": owner, "cap": COUNT_CAP}
            count = kept.holding(owner, match, total, partial(_count, conn, params))
            found[term] = search.bm25_idf(total, max(matched, count))
        return found

    return weights


class Row(NamedTuple):
    size: int
    window: int | str
    p50: float  # ms, wall clock
    p99: float
    cpu50: float  # ms of the process's CPU time (every thread's: the search runs on a worker)
    cpu99: float
    hit: float
    filled: float  # s


async def measure(
    url: str,
    sizes: list[int],
    queries: int,
    windows: list[int],
    typing: bool = False,
    per_search: bool = False,
) -> list[Row]:
    rng = random.Random(7)
    kept_weights = search.weights
    # Each variant: (its name in the table, its window, what weighs the words).
    variants: list[tuple[int | str, int, Weights]] = [(w, w, kept_weights) for w in windows]
    if per_search and url.startswith("sqlite"):
        variants += [(f"{w} counted", w, counted_weights(Counts("message_search"))) for w in windows]
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
            if typing:  # as the page's search box asks while one types: the last word's first letters
                cut = [a.terms[-1][: ask_rng.choice((2, 3))] for a in asks]
                asks = [SearchQuery((*a.terms[:-1], c), limit=20) for a, c in zip(asks, cut, strict=True)]
            for ask in asks[:20]:  # warm caches
                for _, window, weights in variants:
                    search.WINDOW, search.weights = window, weights
                    await store.search(ask, owner="local")
            # Each query once per variant, in turn, so the machine's load falls on every one alike.
            times: dict[int | str, list[float]] = {v[0]: [] for v in variants}
            cpu: dict[int | str, list[float]] = {v[0]: [] for v in variants}
            hits = 0
            for n, ask in enumerate(asks):
                for name, window, weights in variants[n % len(variants) :] + variants[: n % len(variants)]:
                    search.WINDOW, search.weights = window, weights
                    start, began_cpu = time.perf_counter(), time.process_time()
                    found = await store.search(ask, owner="local")
                    times[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - began_cpu)
                hits += bool(found)
            search.weights = kept_weights
            for window, *_ in variants:
                wall, used = sorted(times[window]), sorted(cpu[window])
                p99 = min(len(wall) - 1, int(len(wall) * 0.99))
                results.append(
                    Row(
                        size,
                        window,
                        statistics.median(wall) * 1000,
                        wall[p99] * 1000,
                        statistics.median(used) * 1000,
                        used[p99] * 1000,
                        hits / len(asks),
                        filled,
                    )
                )
                print(
                    f"  {url.split(':')[0]} {size:,} window {window}: p50 {results[-1].p50:.2f} ms, "
                    f"p99 {results[-1].p99:.2f} ms (CPU p50 {results[-1].cpu50:.2f} ms)",
                    flush=True,
                )
    finally:
        await store.aclose()
    return results


def table(name: str, rows: list[Row]) -> str:
    lines = [
        f"| {name} messages | window | p50 ms | p99 ms | CPU p50 ms | CPU p99 ms | queries with results |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.size:,} | {r.window} | {r.p50:.2f} | {r.p99:.2f} | {r.cpu50:.2f} | {r.cpu99:.2f} "
        f"| {r.hit:.0%} |"
        for r in rows
    ]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--windows",
        default=str(search.WINDOW),
        help="matches ranked per search, compared in one run (100,500)",
    )
    parser.add_argument("--typing", action="store_true", help="the last word cut to 2 or 3 letters")
    parser.add_argument("--sqlite-file", type=Path, help="keep (or reuse) the SQLite database here")
    parser.add_argument("--counted", action="store_true", help="also weigh words counted per search (SQLite)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    windows = [int(w) for w in args.windows.split(",")]
    how = (args.queries, windows, args.typing, args.counted)
    if args.sqlite_file is not None:
        sqlite_rows = await measure(sqlite_url(args.sqlite_file), sizes, *how)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_rows = await measure(sqlite_url(Path(tmp) / "search.db"), sizes, *how)
    print(table("SQLite", sqlite_rows))
    if not args.no_postgres:
        with PostgresCluster(fsync=True) as cluster:
            pg_rows = await measure(postgres_url(cluster.create_database()), sizes, *how)
        print()
        print(table("PostgreSQL", pg_rows))


if __name__ == "__main__":
    asyncio.run(main())
