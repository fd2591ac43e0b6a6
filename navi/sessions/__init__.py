"""Sessions: the two-buffer model, the store interface and its three implementations, archives, windows."""

from __future__ import annotations

from navi.config import Settings
from navi.sessions.models import DEFAULT_OWNER, Session, SessionInfo
from navi.sessions.store import SessionNotFound, SessionStore
from navi.storage.database import Database


def build_session_store(settings: Settings, db: Database | None = None) -> SessionStore:
    """The SQL store on SQLite (`DB_PATH`) or PostgreSQL (`DATABASE_URL`). Call `open()` before use."""
    from navi.sessions.sql_store import SqlSessionStore
    from navi.storage.database import open_database

    return SqlSessionStore(db or open_database(settings), settings.session_files_dir)


__all__ = [
    "DEFAULT_OWNER",
    "Session",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "build_session_store",
]
