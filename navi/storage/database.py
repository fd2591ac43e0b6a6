"""The database: SQLite (`DB_PATH`, the embedded default) or PostgreSQL (`DATABASE_URL`).

Stores describe each transaction as one synchronous function of a SQLAlchemy `Connection`, written
once in SQLAlchemy Core, and `Database` runs it:

- PostgreSQL: on the async asyncpg engine through `run_sync`, with a connection pool.
- SQLite: the whole function on a worker thread with the stdlib driver — one thread hop per
  transaction. (aiosqlite hops threads for every cursor call; a turn cost ~18 hops and 3.5 ms,
  against 0.5 ms this way. See docs/benchmarks.md.)

SQLite is tuned for an embedded, durable store: WAL (readers never block the writer), a busy
timeout, `synchronous=FULL` (a commit that returned survives power loss), and write transactions
opened with `BEGIN IMMEDIATE`, so writers queue on the lock instead of failing halfway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from navi.config import Settings

T = TypeVar("T")
WRITE = "navi_write"
SQLITE_THREADS = 4


def postgres_url(url: str) -> str:
    """`postgresql://…` (as users write it) → the asyncpg dialect SQLAlchemy needs."""
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser()}"


def _sqlite_connect(dbapi_conn: Any, _record: object) -> None:
    # Let SQLAlchemy's "begin" event, not the driver, decide when and how transactions start.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    # Straight to the driver: this runs on every transaction, and the SQLAlchemy execution path
    # for a bare BEGIN costs more than the statement itself.
    conn.connection.driver_connection.execute(
        "BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN"
    )


class Database:
    """Runs transactions against one database. Create with `Database.connect(url)`."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        self._sync: Engine | None = None
        self._async: AsyncEngine | None = None
        self._executor: ThreadPoolExecutor | None = None
        if self.is_sqlite:
            path = url.removeprefix("sqlite:///")
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._sync = create_engine(
                url,
                connect_args={"check_same_thread": False, "timeout": 10},
                pool_size=SQLITE_THREADS,
                # Every use ends in an explicit commit or rollback, so no reset is needed on check-in.
                pool_reset_on_return=None,
            )
            event.listen(self._sync, "connect", _sqlite_connect)
            event.listen(self._sync, "begin", _sqlite_begin)
            self._executor = ThreadPoolExecutor(max_workers=SQLITE_THREADS, thread_name_prefix="navi-sqlite")
        else:
            self._async = create_async_engine(
                url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
            )

    @property
    def sync_engine(self) -> Engine:
        """The underlying synchronous engine (for event hooks in tests)."""
        if self._sync is not None:
            return self._sync
        assert self._async is not None
        return self._async.sync_engine

    @property
    def dialect(self) -> str:
        return "sqlite" if self.is_sqlite else "postgresql"

    def _run_sqlite(self, fn: Callable[[Connection], T], write: bool) -> T:
        assert self._sync is not None
        with self._sync.connect() as conn:
            if write:
                conn = conn.execution_options(**{WRITE: True})
            with conn.begin():
                return fn(conn)

    async def _run(self, fn: Callable[[Connection], T], write: bool) -> T:
        if self._executor is not None:
            return await asyncio.get_running_loop().run_in_executor(
                self._executor, self._run_sqlite, fn, write
            )
        assert self._async is not None
        async with self._async.connect() as aconn, aconn.begin():
            return await aconn.run_sync(fn)

    async def write(self, fn: Callable[[Connection], T]) -> T:
        """Run `fn` in a write transaction (`BEGIN IMMEDIATE` on SQLite); commit when it returns."""
        return await self._run(fn, write=True)

    async def read(self, fn: Callable[[Connection], T]) -> T:
        return await self._run(fn, write=False)

    async def dispose(self) -> None:
        """Close connections and worker threads. Safe to call more than once (stores share it)."""
        if self._sync is not None:
            self._sync.dispose()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        if self._async is not None:
            await self._async.dispose()


def database_url(settings: Settings) -> str:
    return postgres_url(settings.database_url) if settings.database_url else sqlite_url(settings.db_path)


def describe(settings: Settings) -> str:
    if settings.database_url:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    return f"SQLite at {Path(settings.db_path).expanduser().resolve()}"


def open_database(settings: Settings) -> Database:
    return Database(database_url(settings))


async def check_database(settings: Settings) -> tuple[bool, str]:
    """Open the database and run a trivial query; return (ok, what happened)."""
    try:
        db = open_database(settings)
    except OSError as exc:
        return False, f"cannot open {describe(settings)}: {exc}"
    try:
        await db.read(lambda conn: conn.execute(text("SELECT 1")).scalar())
    except Exception as exc:  # every driver has its own exception tree; doctor reports them all
        return False, f"cannot open {describe(settings)}: {exc}"
    finally:
        await db.dispose()
    return True, f"{describe(settings)} opens"
