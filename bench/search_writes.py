"""What the word-count triggers of migration 0034 add to writing messages (SQLite).

Messages of bench/search.py's kind (5 to 60 words of a 20,000-word vocabulary) are appended
through `SqlSessionStore.append`, a session of 20 at a time as a turn's writes go, in rounds: one
round with the triggers of migration 0034 in place, the next with them dropped (as before it), in
turn, so the machine's load falls on both alike. Each round's CPU time (the process's, every
thread) per message is reported.

    .venv/bin/python bench/search_writes.py [--rounds 6] [--messages 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text

from bench.search import vocabulary, zipf_word
from navi.llm.messages import Message
from navi.storage.database import sqlite_url
from navi.storage.sessions import SqlSessionStore


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--messages", type=int, default=2000, help="per round")
    args = parser.parse_args()
    rng = random.Random(3)
    vocab = vocabulary(rng)
    triggers = importlib.import_module("navi.storage.migrations.versions.0034_search_word_counts").SQLITE[1:]
    names = ["message_search_words_ai", "message_search_words_ad"]
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlSessionStore.at(sqlite_url(Path(tmp) / "writes.db"))
        await store.open()
        per: dict[str, list[float]] = {"with the triggers": [], "without": []}
        try:
            for n in range(args.rounds):
                counted = n % 2 == 0

                def switch(conn, counted: bool = counted) -> None:  # type: ignore[no-untyped-def]
                    for name in names:
                        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
                    for statement in triggers if counted else []:
                        conn.execute(text(statement))

                await store.db.write(switch)
                began = time.process_time()
                for _ in range(args.messages // 20):
                    session = await store.create("secretary", owner="local")
                    turns = [
                        Message.user(" ".join(zipf_word(rng, vocab) for _ in range(rng.randint(5, 60))))
                        for _ in range(20)
                    ]
                    await store.append(session.id, display=turns)
                used = (time.process_time() - began) / args.messages * 1000
                per["with the triggers" if counted else "without"].append(used)
                kind = "with" if counted else "without"
                print(f"  round {n + 1}, {kind} the triggers: {used:.3f} ms CPU a message", flush=True)
        finally:
            await store.aclose()
    for name, values in per.items():
        each = ", ".join(f"{v:.3f}" for v in values)
        print(f"{name}: median {statistics.median(values):.3f} ms CPU a message ({each})")


if __name__ == "__main__":
    asyncio.run(main())
