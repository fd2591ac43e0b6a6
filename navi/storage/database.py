"""The database: SQLite (`DB_PATH`, the embedded default) or PostgreSQL (`DATABASE_URL`).

Stores describe each transaction as one synchronous function of a SQLAlchemy `Connection`, written
once in SQLAlchemy Core, and `Database` runs it:

- PostgreSQL: on the async asyncpg engine through `run_sync`, with a connection pool.
- SQLite: the whole function on a worker thread with the stdlib driver — one thread hop per
  transaction. (aiosqlite hops threads for every cursor call; a turn cost ~18 hops and 3.5 ms,
  against 0.5 ms this way. See docs/benchmarks.md.)

The SQLite file is made readable by its owner only (0600, whatever the umask): SQLite creates it,
and its mode is set by path (`chmod`) at once, before the first statement and the `-wal` and `-shm`,
which SQLite gives the database's own mode. Nothing outside SQLite ever opens a file
SQLite may have open: POSIX drops every lock a process holds on a file when *any* of its descriptors
on that file is closed, and a server that lost its locks looks absent to the next `navi` command,
which then checkpoints and deletes the `-wal` and `-shm` under it (the two go on writing separate
copies). An older file with group or other access is tightened by path (`chmod`, no descriptor).

SQLite is tuned for an embedded, durable store: WAL (readers never block the writer), a busy
timeout, `synchronous=FULL` (a commit that returned survives power loss), and write transactions
opened with `BEGIN IMMEDIATE`, so writers queue on the lock instead of failing halfway.

A pooled SQLite connection goes back to the pool holding no snapshot, so its next transaction
reads what any process committed since. In WAL mode a statement that was not read to its end (or
reset) keeps its read transaction — and the snapshot it began with — open after COMMIT, though
`in_transaction` is then false, and every later read on that connection sees that old snapshot:
a user the `navi` command just added would be refused. So each connection knows its open cursors
(`_Tracked`), and going back to the pool it closes those left open — raw driver statements and
SQLAlchemy results alike — and rolls back a transaction left open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import threading
import weakref
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
JOURNALS = ("-wal", "-shm", "-journal")
# New SQLite connections are made one at a time in a process, each file's mode fixed by path after.
_CONNECTING = threading.Lock()


def postgres_url(url: str) -> str:
    """`postgresql://…` (as users write it) → the asyncpg dialect SQLAlchemy needs."""
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser()}"


def tighten(path: Path) -> None:
    """Take group and other access away from the SQLite file and its journals, if they have any (a
    database made by an older Navi, or under a loose umask). By path: `stat` and `chmod` open no
    descriptor, so no lock of any connection, here or in another process, is touched."""
    for name in (str(path), *(f"{path}{suffix}" for suffix in JOURNALS)):
        with contextlib.suppress(OSError):  # missing, or not ours to change: SQLite will say what is wrong
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)


def _sqlite_path(url: str) -> Path | None:
    """The file behind a SQLite URL; None for an in-memory database."""
    name = make_url(url).database
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    return Path(name)


class _Tracked(sqlite3.Connection):
    """A sqlite3 connection that knows its cursors still open, so that `_release` can reset the
    statements a transaction left partly read. (`Connection.execute` makes its cursor in C, not
    through `cursor()`: both are overridden.)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.open_cursors: weakref.WeakSet[sqlite3.Cursor] = weakref.WeakSet()

    def cursor(self, factory: Any = sqlite3.Cursor) -> Any:
        made = super().cursor(factory)
        self.open_cursors.add(made)
        return made

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        return self.cursor().executemany(sql, parameters)


def _release(dbapi_conn: Any, _record: object) -> None:
    """A connection going back to the pool: close every cursor left open on it (a statement not
    read to its end holds its snapshot past COMMIT), and roll back a transaction left open. A
    transaction normally ended before (`Database` commits or rolls back), so what it wrote is
    settled; a result its caller still holds raises if read (rows of a finished transaction),
    never shows an old snapshot."""
    if dbapi_conn is None:
        return
    for cursor in list(getattr(dbapi_conn, "open_cursors", ())):
        cursor.close()
    if dbapi_conn.in_transaction:
        dbapi_conn.rollback()


def indexed_words(body: str | None) -> list[str]:
    """The distinct words of a searched message as FTS5's tokenizer splits them (folded,
    diacritics removed), led by the empty word, which counts the message itself: what the triggers
    of migration 0034 count per user for search's word weights."""
    from navi.sessions.search import words_of

    return ["", *sorted(set(words_of(body or "")))]


def _navi_words(body: str | None) -> str:
    return json.dumps(indexed_words(body), ensure_ascii=False)


def _sqlite_connect(dbapi_conn: Any, _record: object) -> None:
    # Let SQLAlchemy's "begin" event, not the driver, decide when and how transactions start.
    dbapi_conn.isolation_level = None
    # The words the search triggers count (migration 0034); SQL alone cannot split a text into them.
    dbapi_conn.create_function("navi_words", 1, _navi_words, deterministic=True)
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
                connect_args={"check_same_thread": False, "timeout": 10, "factory": _Tracked},
                pool_size=SQLITE_THREADS,
                # Every use ends in a commit or rollback; `_release`, on check-in, resets what a
                # use left open (SQLAlchemy's own reset would cost more than it checks).
                pool_reset_on_return=None,
            )
            self._path = _sqlite_path(url)
            self._tightened = False
            if self._path is not None:
                event.listen(self._sync, "do_connect", self._connect_sqlite)
            event.listen(self._sync, "connect", _sqlite_connect)
            event.listen(self._sync, "begin", _sqlite_begin)
            event.listen(self._sync, "checkin", _release)
            self._executor = ThreadPoolExecutor(max_workers=SQLITE_THREADS, thread_name_prefix="navi-sqlite")
        else:
            self._async = create_async_engine(
                url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                connect_args={"timeout": connect_timeout},
            )

    def _connect_sqlite(
        self, dialect: Any, _record: object, cargs: list[Any], cparams: dict[str, Any]
    ) -> Any:
        """Make a new pooled SQLite connection, the file created 0600 first if it is missing (before
        every new connection: it may have been deleted and made again since), and, before the first,
        an older file's loose modes tightened."""
        assert self._path is not None
        with _CONNECTING:
            made = not self._path.exists()
            connection = dialect.connect(*cargs, **cparams)  # SQLite creates a missing file itself
            if made or not self._tightened:
                tighten(self._path)  # by path: no descriptor of the live file is ever opened here
                self._tightened = True
            return connection

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
