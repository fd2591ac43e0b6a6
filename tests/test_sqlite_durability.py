"""SQLite as configured by Navi: pragmas, migrations, concurrent writers, and surviving SIGKILL."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text

from navi.llm.messages import Message
from navi.storage import migrate
from navi.storage.database import sqlite_url
from navi.storage.sessions import SqlSessionStore

ROOT = Path(__file__).parents[1]


async def open_store(path: Path) -> SqlSessionStore:
    store = SqlSessionStore.at(sqlite_url(path))
    await store.open()
    return store


async def test_pragmas_and_migrations(tmp_path: Path) -> None:
    store = await open_store(tmp_path / "n.db")
    try:
        pragmas = await store.db.read(
            lambda conn: [
                conn.execute(text(f"PRAGMA {name}")).scalar()
                for name in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")
            ]
        )
        assert pragmas == ["wal", 2, 10000, 1]  # synchronous=2 is FULL
        assert await migrate.current_revision(store.db) == migrate.head()
        await store.open()  # applying migrations again is a no-op
        assert await migrate.current_revision(store.db) == migrate.head()
        tables = await store.db.read(
            lambda conn: dict(
                conn.execute(text("SELECT name, sql FROM sqlite_master WHERE type='table'")).all()
            )
        )
        assert "WITHOUT ROWID" in tables["session_messages"]
        assert "WITHOUT ROWID" in tables["session_archive_parts"]
    finally:
        await store.aclose()


async def test_two_writers_on_one_file_queue_instead_of_failing(tmp_path: Path) -> None:
    first = await open_store(tmp_path / "n.db")
    second = await open_store(tmp_path / "n.db")
    try:
        session = await first.create("secretary")

        async def writer(store: SqlSessionStore, tag: str) -> None:
            for i in range(40):
                await store.append(
                    session.id, display=[Message.user(f"{tag}{i}")], context=[Message.user(f"{tag}{i}")]
                )

        await asyncio.gather(writer(first, "a"), writer(second, "b"), writer(first, "c"), writer(second, "d"))
        got = await first.get(session.id)
        assert got is not None and len(got.messages) == 160 and len(got.context) == 160
        assert len({m.content for m in got.messages}) == 160
    finally:
        await first.aclose()
        await second.aclose()


def _check(db: Path, session_id: str, acknowledged: int) -> int:
    """Open the database as a fresh process would and check every promise; return the turn count."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for table in ("session_messages", "session_context"):
            rows = conn.execute(
                f"SELECT position, data FROM {table} WHERE session_id = ? ORDER BY position", (session_id,)
            ).fetchall()
            assert [r[0] for r in rows] == list(range(len(rows))), f"{table}: positions have gaps"
            contents = [Message.model_validate_json(r[1]).content or "" for r in rows]
            assert len(rows) % 2 == 0, f"{table}: a turn was half-written"
            turns = len(rows) // 2
            for n in range(turns):
                assert contents[2 * n].startswith(f"turn {n} question"), (table, n, contents[2 * n])
                assert contents[2 * n + 1].startswith(f"turn {n} answer"), (table, n)
            assert turns >= acknowledged + 1, f"{table}: acknowledged turn {acknowledged} is missing"
        counts = conn.execute(
            "SELECT display_count, context_count, context_token_count FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        assert counts[0] == counts[1] == 2 * turns
        assert counts[2] == turns - 1
        return turns
    finally:
        conn.close()


async def _new_session(db: Path) -> str:
    store = await open_store(db)
    try:
        return (await store.create("secretary")).id
    finally:
        await store.aclose()


def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "durable.db"
    session_id = asyncio.run(_new_session(db))
    rng = random.Random(20261121)
    acknowledged = -1
    kills = 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(22):
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.append_writer", str(db), session_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        deadline = time.monotonic() + rng.uniform(0.02, 0.25)
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith("ok "):
                acknowledged = int(line.split()[1])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        # Lines already printed before the kill are acknowledgements too.
        rest = proc.stdout.read()
        for line in rest.splitlines():
            if line.startswith("ok "):
                acknowledged = int(line.split()[1])
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
        turns = _check(db, session_id, acknowledged)
        assert turns in (acknowledged + 1, acknowledged + 2)  # at most the one in flight extra
    assert kills >= 20
    assert acknowledged > 40, "the writer barely wrote; the test did not exercise anything"
