"""Issue 41, item 1: what a `navi` command commits, a running Navi on SQLite reads on its next request.

In WAL mode a statement not read to its end keeps its read transaction — and its snapshot — open
after COMMIT (`in_transaction` is then false), and so does a connection given back to the pool
inside a transaction: every later read on that pooled connection sees the old snapshot. Each
pooled connection goes back to the pool holding none (navi/storage/database.py `_release`).
These tests check every pooled connection after transactions that leave statements open, after
the store operations that run raw driver statements (memory and conversation search), and across
a real `navi serve` and real `navi users` commands.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import exc, text

from navi.llm.messages import Message
from navi.sessions.search import SearchQuery, terms
from navi.storage import migrate
from navi.storage.database import SQLITE_THREADS, Database, sqlite_url
from navi.storage.memory import SqlMemoryStore
from navi.storage.sessions import SqlSessionStore
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from tests.helpers.cli import run_navi
from tests.security.served import served_navi


def another_writer_adds(path: Path, value: int) -> None:
    """A row committed through a connection of its own (as `navi` in another process writes)."""
    other = sqlite3.connect(path, timeout=10)
    try:
        other.execute("INSERT INTO probe (x) VALUES (?)", (value,))
        other.commit()
    finally:
        other.close()


def pooled_connections_read(db: Database) -> list[tuple[bool, list[int]]]:
    """Every connection the pool keeps (all checked out at once, so none is left out): whether it
    came back inside a transaction, and the probe rows it reads."""
    held = [db.sync_engine.raw_connection() for _ in range(SQLITE_THREADS)]
    try:
        seen = []
        for proxy in held:
            raw = proxy.driver_connection
            assert isinstance(raw, sqlite3.Connection)
            was_in_transaction = raw.in_transaction
            cursor = raw.execute("SELECT x FROM probe ORDER BY x")
            seen.append((was_in_transaction, [x for (x,) in cursor.fetchall()]))
            cursor.close()
        return seen
    finally:
        for proxy in held:
            proxy.close()


def every_pooled_connection_sees(db: Database, path: Path, value: int) -> None:
    another_writer_adds(path, value)
    seen = pooled_connections_read(db)
    want = sorted(set(range(1, value + 1)))
    assert seen == [(False, want)] * SQLITE_THREADS, seen


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(sqlite_url(tmp_path / "navi.db"))
    await migrate.upgrade(database)
    await database.write(lambda conn: conn.execute(text("CREATE TABLE probe (x INTEGER)")))
    await database.write(lambda conn: conn.execute(text("INSERT INTO probe (x) VALUES (1), (2), (3)")))
    yield database
    await database.dispose()


def _probe_count(conn: Any) -> int:
    return int(conn.execute(text("SELECT count(*) FROM probe")).scalar())


async def test_a_result_left_unread_holds_no_snapshot_after_its_transaction(
    db: Database, tmp_path: Path
) -> None:
    """A transaction's result given back unread (its statement stepped once, never reset)."""
    unread = await db.read(lambda conn: conn.execute(text("SELECT x FROM probe")))
    another_writer_adds(tmp_path / "navi.db", 4)
    assert await db.read(_probe_count) == 4  # the same pooled connection, read afresh
    with pytest.raises(exc.ProgrammingError):  # rows of a finished transaction are not read
        unread.fetchall()
    every_pooled_connection_sees(db, tmp_path / "navi.db", 5)


async def test_a_raw_statement_partly_read_holds_no_snapshot_after_its_transaction(
    db: Database, tmp_path: Path
) -> None:
    """The driver's own cursor, one row of three read and the cursor kept (as a search's might)."""
    kept: list[sqlite3.Cursor] = []

    def first_only(conn: Any) -> int:
        cursor = conn.connection.driver_connection.execute("SELECT x FROM probe ORDER BY x")
        kept.append(cursor)
        return int(cursor.fetchone()[0])

    assert await db.read(first_only) == 1
    another_writer_adds(tmp_path / "navi.db", 4)
    assert await db.read(_probe_count) == 4
    every_pooled_connection_sees(db, tmp_path / "navi.db", 5)


async def test_a_connection_given_back_inside_a_transaction_is_rolled_back(
    db: Database, tmp_path: Path
) -> None:
    proxy = db.sync_engine.raw_connection()
    raw = proxy.driver_connection
    assert isinstance(raw, sqlite3.Connection)
    raw.execute("BEGIN")
    assert raw.execute("SELECT count(*) FROM probe").fetchone() == (3,)  # a snapshot is taken
    proxy.close()  # back to the pool, the transaction still open
    another_writer_adds(tmp_path / "navi.db", 4)
    assert await db.read(_probe_count) == 4
    every_pooled_connection_sees(db, tmp_path / "navi.db", 5)


async def test_searches_leave_no_pooled_connection_in_a_transaction_or_on_an_old_snapshot(
    db: Database, tmp_path: Path
) -> None:
    """Memory search (memory_sql.py, counts.py) and conversation search (search.py) run raw driver
    statements; each runs on every pooled connection at once, and then every one of them reads a
    row another writer committed after."""
    path = tmp_path / "navi.db"
    memory, sessions = SqlMemoryStore(db), SqlSessionStore(db)
    for n, value in enumerate(["Porto", "Lisbon port wine", "Braga", "port of Porto"]):
        await memory.upsert_fact("personal", f"place_{n}", value, owner="alice")
    session = await sessions.create("secretary", owner="alice", name="Trips")
    await sessions.append(
        session.id,
        display=[Message.user("What is the weather in Porto?"), Message.assistant("Sunny in Porto.")],
    )

    async def everywhere(operation: Any) -> list[Any]:
        return list(await asyncio.gather(*(operation() for _ in range(2 * SQLITE_THREADS))))

    found = await everywhere(lambda: memory.search_facts("porto port", owner="alice"))
    assert all({f.value for f in facts} >= {"Porto", "port of Porto"} for facts in found)
    every_pooled_connection_sees(db, path, 4)

    hits = await everywhere(lambda: sessions.search(SearchQuery(terms("porto")), owner="alice"))
    assert all(len(h) == 2 for h in hits)
    every_pooled_connection_sees(db, path, 5)

    shown = await everywhere(lambda: memory.get_all_facts(owner="alice"))
    assert all(len(facts) == 4 for facts in shown)
    every_pooled_connection_sees(db, path, 6)


def _navi(folder: Path, env: dict[str, str], *args: str) -> str:
    done = run_navi(folder, *args, env=env)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout.strip()


@pytest.mark.slow
def test_a_user_removed_and_added_again_by_navi_is_let_in_at_once(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """A real `navi serve`: a turn and both searches, then `navi users remove alice` and
    `navi users add alice` in processes of their own; the new token works on the next request."""
    fake_server.script.responder = lambda _request: Reply(text="Sunny in Porto.")
    env = {
        "DB_PATH": str(tmp_path / "navi.db"),
        "TOOLS_DIR": str(tmp_path / "tools"),
        "SESSION_FILES_DIR": str(tmp_path / "session_files"),
        "OLLAMA_HOST": fake_server.url,
        "PLANNING_ENABLED": "false",
        "LOG_LEVEL": "WARNING",
    }
    alice = _navi(tmp_path, env, "users", "add", "alice")
    with served_navi(tmp_path, **env) as served:

        def as_user(token: str) -> httpx.Client:
            return httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)

        with as_user(alice) as http:
            sid = http.post("/sessions").json()["session_id"]
            turn = http.post(f"/sessions/{sid}/messages", json={"content": "Weather in Porto?"})
            assert turn.status_code == 200 and turn.json()["content"] == "Sunny in Porto.", turn.text
            fact = {"category": "personal", "key": "home_city", "value": "Porto"}
            assert http.post("/memory/facts", json=fact).status_code == 200
            hits = http.get("/search", params={"q": "porto"}).json()
            assert sorted(h["role"] for h in hits) == ["assistant", "user"], hits
            facts = http.get("/memory/facts", params={"q": "porto"}).json()
            assert [f["value"] for f in facts] == ["Porto"]
        _navi(tmp_path, env, "users", "remove", "alice")
        with as_user(alice) as http:
            assert http.get("/sessions").status_code == 401
        again = _navi(tmp_path, env, "users", "add", "alice")
        with as_user(again) as http:
            answers = [http.get("/sessions").status_code for _ in range(2 * SQLITE_THREADS)]
        assert answers == [200] * (2 * SQLITE_THREADS), served.output()
