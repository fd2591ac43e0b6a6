"""What SQLite's memory search weighs a word by (navi/storage/memory_sql.py `_Matching`): the
searching user's facts holding it, counted up to COUNT_CAP and estimated beyond from how many of
the user's facts its newest COUNT_CAP reach back over — whichever way the store counts them (the
word's list alone when every fact is the user's, a subtraction when the user's ids run without a
gap, either side of the user's index otherwise), the numbers are the user's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Connection, delete

from navi.storage import fact_rank, memory_sql
from navi.storage.database import sqlite_url
from navi.storage.memory import SqlMemoryStore
from navi.storage.schema import memory_facts


def expected(conn: Connection, owner: str, word: str) -> int:
    """The same number, counted the slow way: every one of the owner's facts read."""
    rows = conn.exec_driver_sql(
        "SELECT id, category, key, value FROM memory_facts WHERE owner = ? ORDER BY id DESC", (owner,)
    ).all()
    holding = [
        r.id
        for r in rows
        if fact_rank.stem(word) in fact_rank.stems(f"{r[1]} {r[2]} {r[3]}".replace("_", " ").split())
    ]
    cap = fact_rank.COUNT_CAP
    if len(holding) < cap:
        return len(holding)
    oldest = holding[cap - 1]
    return fact_rank.matches(cap, sum(1 for r in rows if r.id >= oldest), len(rows))


def counted(conn: Connection, owner: str, word: str) -> int:
    counts = memory_sql.new_counts()  # nothing kept: counted now
    return memory_sql._Matching(conn, counts, owner, counts.total(conn, owner))(word)


async def test_a_words_count_is_the_users_own_however_it_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fact_rank, "COUNT_CAP", 3)
    store = SqlMemoryStore.at(sqlite_url(tmp_path / "m.db"))
    await store.open()
    # apple in her newer facts (its newest 3 reach back a little), plum mostly in older ones (its
    # newest 3 reach back over most of hers), fig in two (under the cap).
    values = ["plum", "plum tart", "plum jam", "plum pie", "plum cake", "fig", "apple", "apple pie"]
    values += ["apple jam", "apple tart", "fig jam", "apple plum"]

    async def check(owner: str = "alice") -> None:
        for word in ("apple", "plum", "fig"):
            got, want = await store.db.read(lambda c, w=word: (counted(c, owner, w), expected(c, owner, w)))
            assert got == want, word

    try:
        for n, value in enumerate(values):
            await store.upsert_fact("food", f"item_{n}", value, owner="alice")
        await check()  # every fact hers, her ids without a gap
        await store.db.write(lambda c: c.execute(delete(memory_facts).where(memory_facts.c.key == "item_8")))
        await check()  # every fact hers, a gap
        for n, value in enumerate(values[:6]):  # bob's after hers: her ids still without a gap
            await store.upsert_fact("food", f"item_{n}", value, owner="bob")
        await store.upsert_fact("food", "item_8", "apple jam", owner="alice")  # after bob's
        await check()
        await check("bob")
        for n, value in enumerate(values):  # and between hers
            await store.upsert_fact("food", f"more_{n}", value, owner="alice")
            await store.upsert_fact("notes", f"note_{n}", "apple plum fig", owner="bob")
        await check()
        await check("bob")
    finally:
        await store.aclose()
