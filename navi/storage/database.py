"""The database: SQLite (`DB_PATH`, the embedded default) or PostgreSQL (`DATABASE_URL`).

Stores describe each transaction as one synchronous function of a SQLAlchemy `Connection`, written
once in SQLAlchemy Core, and `Database` runs it:

- PostgreSQL: on the async asyncpg engine through `run_sync`, with a connection pool.
- SQLite: the whole function on a worker thread with the stdlib driver — one thread hop per
  transaction. (aiosqlite hops threads for every cursor call; a turn cost ~18 hops and 3.5 ms,
  against 0.5 ms this way. See docs/benchmarks.md.)

The SQLite file is made readable by its owner only (0600, whatever the umask) before SQLite opens
it; SQLite gives the `-wal` and `-shm` files it creates the database's own mode, so they follow.

SQLite is tuned for an embedded, durable store: WAL (readers never block the writer), a busy
timeout, `synchronous=FULL` (a commit that returned survives power loss), and write transactions
opened with `BEGIN IMMEDIATE`, so writers queue on the lock instead of failing halfway.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

T = TypeVar("T")
WRITE = "navi_write"
SQLITE_THREADS = 4


def postgres_url(url: str) -> str:
    """`postgresql://…` (as users write it) → the asyncpg dialect SQLAlchemy needs."""
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser()}"


def owner_only(path: Path) -> None:
    """Create the SQLite file 0600 if it is missing, and take group and other access away from it
    and its journals if they have any (a database made by an older Navi, or under a loose umask)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o600)
    except OSError:
        return  # SQLite's own open fails the same way, with the error the caller maps to a fix
    try:
        if os.fstat(fd).st_mode & 0o077:
            with contextlib.suppress(OSError):  # not ours to change: SQLite will say what is wrong
                os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            journal = Path(f"{path}{suffix}")
            if journal.stat().st_mode & 0o077:
                journal.chmod(0o600)


def _sqlite_path(url: str) -> Path | None:
    """The file behind a SQLite URL; None for an in-memory database."""
    name = make_url(url).database
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    return Path(name)


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

    def __init__(self, url: str, *, pool_size: int = 10, connect_timeout: float = 10.0) -> None:
        """Nothing is opened or created here; the first transaction connects (and creates a SQLite
        file). `connect_timeout` bounds reaching a PostgreSQL server, so a host that never answers
        fails in seconds instead of asyncpg's minute."""
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        self._sync: Engine | None = None
        self._async: AsyncEngine | None = None
        self._executor: ThreadPoolExecutor | None = None
        self.closed = False
        if self.is_sqlite:
            self._sync = create_engine(
                url,
                connect_args={"check_same_thread": False, "timeout": 10},
                pool_size=SQLITE_THREADS,
                # Every use ends in an explicit commit or rollback, so no reset is needed on check-in.
                pool_reset_on_return=None,
            )
            path = _sqlite_path(url)
            if path is not None:
                # Before every new connection: the file may have been deleted and made again since.
                event.listen(self._sync, "do_connect", lambda *_: owner_only(path))
            event.listen(self._sync, "connect", _sqlite_connect)
            event.listen(self._sync, "begin", _sqlite_begin)
            self._executor = ThreadPoolExecutor(max_workers=SQLITE_THREADS, thread_name_prefix="navi-sqlite")
        else:
            self._async = create_async_engine(
                url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                connect_args={"timeout": connect_timeout},
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
        if self.closed:
            raise RuntimeError(f"the {self.dialect} database was disposed; it cannot be used any more")
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

    async def ping(self) -> None:
        """Connect and run a trivial query: raises what the driver raises when the database is unusable."""
        await self.read(lambda conn: conn.execute(text("SELECT 1")).scalar())

    async def dispose(self) -> None:
        """Close connections and worker threads. Whoever created the `Database` disposes it, once
        (the composition root for a running Navi); a second call does nothing harmful."""
        self.closed = True
        if self._sync is not None:
            self._sync.dispose()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        if self._async is not None:
            await self._async.dispose()
