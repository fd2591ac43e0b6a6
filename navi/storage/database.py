"""One SQLAlchemy async engine for SQLite (`DB_PATH`) or PostgreSQL (`DATABASE_URL`)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from navi.config import Settings


def database_url(settings: Settings) -> str:
    if settings.database_url:
        url = make_url(settings.database_url)
        return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    return f"sqlite+aiosqlite:///{Path(settings.db_path).expanduser()}"


def describe(settings: Settings) -> str:
    if settings.database_url:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    return f"SQLite at {Path(settings.db_path).expanduser().resolve()}"


def _sqlite_pragmas(dbapi_conn: object, _record: object) -> None:
    cursor = dbapi_conn.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(settings: Settings) -> AsyncEngine:
    url = database_url(settings)
    if url.startswith("sqlite"):
        Path(settings.db_path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": 5})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_size=10, max_overflow=10, pool_pre_ping=True)


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
