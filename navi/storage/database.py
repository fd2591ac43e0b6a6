"""One SQLAlchemy async engine for SQLite (`DB_PATH`) or PostgreSQL (`DATABASE_URL`).

SQLite is tuned for an embedded, durable store: WAL (readers never block the writer), a busy
timeout, `synchronous=FULL` (a commit that returned survives power loss), and write transactions
opened with `BEGIN IMMEDIATE` so two writers queue on the lock instead of failing halfway with
"database is locked". Read transactions stay deferred.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from navi.config import Settings

WRITE = "navi_write"


def postgres_url(url: str) -> str:
    """`postgresql://…` (as users write it) → the asyncpg dialect SQLAlchemy needs."""
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def sqlite_url(path: str | Path) -> str:
    return f"sqlite+aiosqlite:///{Path(path).expanduser()}"


def database_url(settings: Settings) -> str:
    return postgres_url(settings.database_url) if settings.database_url else sqlite_url(settings.db_path)


def describe(settings: Settings) -> str:
    if settings.database_url:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    return f"SQLite at {Path(settings.db_path).expanduser().resolve()}"


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
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")


def engine_for_url(url: str, *, pool_size: int = 10) -> AsyncEngine:
    if url.startswith("sqlite"):
        engine = create_async_engine(url, connect_args={"timeout": 10})
        event.listen(engine.sync_engine, "connect", _sqlite_connect)
        event.listen(engine.sync_engine, "begin", _sqlite_begin)
        return engine
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


def create_engine(settings: Settings) -> AsyncEngine:
    if not settings.database_url:
        Path(settings.db_path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    return engine_for_url(database_url(settings))


@asynccontextmanager
async def write_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A transaction that will write: `BEGIN IMMEDIATE` on SQLite, a plain transaction elsewhere."""
    async with engine.connect() as conn:
        conn = await conn.execution_options(**{WRITE: True})
        async with conn.begin():
            yield conn


async def check_database(settings: Settings) -> tuple[bool, str]:
    """Open the database and run a trivial query; return (ok, what happened)."""
    try:
        engine = create_engine(settings)
    except OSError as exc:
        return False, f"cannot open {describe(settings)}: {exc}"
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:  # every driver has its own exception tree; doctor reports them all
        return False, f"cannot open {describe(settings)}: {exc}"
    finally:
        await engine.dispose()
    return True, f"{describe(settings)} opens"
