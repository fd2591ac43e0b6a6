"""Cost of persisting one more turn as a session's history grows, on SQLite and PostgreSQL.

For each history size a fresh session is filled with that many messages, then `TURNS` turns are
appended one at a time (a user message and an assistant reply, to both buffers, with new content
each time so no write can be skipped). Reported per store and size: median and p95 time per turn,
the ratio of the median to the 10-message median, and the bytes written per turn — the message
JSON itself, and what the database actually wrote (SQLite: bytes this process wrote to the
database and its WAL; PostgreSQL: WAL bytes generated, from pg_stat_wal).

    .venv/bin/python bench/persistence.py [--turns 300] [--sizes 10,100,1000,5000] [--no-postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from navi.llm.messages import Message
from navi.storage.database import postgres_url, sqlite_url
from navi.storage.sessions import SqlSessionStore
from navi.testing.postgres import PostgresCluster

FILLER = "The quick brown fox jumps over the lazy dog. " * 6


def _proc_wchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


async def _wal_bytes(store: SqlSessionStore) -> int:
    query = text("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')")
    return int(await store.db.read(lambda conn: conn.execute(query).scalar()) or 0)


async def _fill(store: SqlSessionStore, session_id: str, size: int) -> None:
    batch: list[Message] = []
    for i in range(size):
        role_msg = Message.user if i % 2 == 0 else Message.assistant
        batch.append(role_msg(f"history {i}: {FILLER}"))
        if len(batch) == 500:
            await store.append(session_id, display=batch, context=batch)
            batch = []
    if batch:
        await store.append(session_id, display=batch, context=batch)


async def measure(store: SqlSessionStore, size: int, turns: int, kind: str) -> dict[str, float]:
    session = await store.create("secretary")
    await _fill(store, session.id, size)
    times: list[float] = []
    payload = 0
    io_before = _proc_wchar() if kind == "sqlite" else await _wal_bytes(store)
    for n in range(turns):
        user = Message.user(f"turn {n} at {size}: what about {n * 7919 % 10007}? {FILLER}")
        reply = Message.assistant(f"answer {n} at {size}: {n * 104729 % 99991}. {FILLER}")
        payload += 2 * (len(user.model_dump_json()) + len(reply.model_dump_json()))
        start = time.perf_counter()
        await store.append(session.id, display=[user, reply], context=[user, reply], context_token_count=n)
        times.append(time.perf_counter() - start)
    io_after = _proc_wchar() if kind == "sqlite" else await _wal_bytes(store)
    times.sort()
    return {
        "median_ms": statistics.median(times) * 1000,
        "p95_ms": times[int(len(times) * 0.95) - 1] * 1000,
        "payload_bytes": payload / turns,
        "written_bytes": (io_after - io_before) / turns,
    }


async def measure_rewrite(store: SqlSessionStore, size: int, turns: int) -> float:
    """Reference only: the median cost if each turn rewrote the whole context buffer."""
    session = await store.create("secretary")
    history = [Message.user(f"history {i}: {FILLER}") for i in range(size)]
    await store.append(session.id, context=history)
    times = []
    for n in range(turns):
        history = [*history, Message.user(f"turn {n}: {FILLER}"), Message.assistant(f"answer {n}")]
        start = time.perf_counter()
        await store.replace_context(session.id, history, context_token_count=n)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def run_store(kind: str, url: str, sizes: list[int], turns: int) -> list[tuple[int, dict[str, float]]]:
    store = SqlSessionStore.at(url)
    await store.open()
    try:
        await measure(store, 10, 30, kind)  # warm-up: connections, statement caches
        return [(size, await measure(store, size, turns, kind)) for size in sizes]
    finally:
        await store.aclose()


def table(kind: str, rows: list[tuple[int, dict[str, float]]]) -> str:
    base = rows[0][1]["median_ms"]
    label = "bytes written/turn (db+WAL)" if kind == "SQLite" else "WAL bytes/turn"
    lines = [
        f"| {kind} history | median ms/turn | p95 ms/turn | ratio to 10 | JSON bytes/turn | {label} |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for size, r in rows:
        lines.append(
            f"| {size:,} | {r['median_ms']:.3f} | {r['p95_ms']:.3f} | {r['median_ms'] / base:.2f}× "
            f"| {r['payload_bytes']:,.0f} | {r['written_bytes']:,.0f} |"
        )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sizes", default="10,100,1000,5000")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_rows = await run_store("sqlite", sqlite_url(Path(tmp) / "bench.db"), sizes, args.turns)
        rewrite = SqlSessionStore.at(sqlite_url(Path(tmp) / "rewrite.db"))
        await rewrite.open()
        naive = {size: await measure_rewrite(rewrite, size, 30) for size in (sizes[0], sizes[-1])}
        await rewrite.aclose()
    print(table("SQLite", sqlite_rows))
    lo, hi = sizes[0], sizes[-1]
    print(
        f"\nReference, SQLite, rewriting the whole context each turn: {naive[lo]:.3f} ms at {lo:,} messages, "
        f"{naive[hi]:.3f} ms at {hi:,} ({naive[hi] / naive[lo]:.0f}×)"
    )
    if not args.no_postgres:
        with PostgresCluster(fsync=True) as cluster:
            pg_rows = await run_store("postgres", postgres_url(cluster.create_database()), sizes, args.turns)
        print()
        print(table("PostgreSQL", pg_rows))
    at_10 = sqlite_rows[0][1]["median_ms"]
    at_max = sqlite_rows[-1][1]["median_ms"]
    print()
    print(
        f"SQLite: {at_max / at_10:.2f}× the 10-message cost at {sizes[-1]:,} messages (target ≤ 1.5×); "
        f"median {at_max:.3f} ms (target ≤ 1 ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
