"""Sessions: the two-buffer model, the store interface and its three implementations, archives, windows."""

from __future__ import annotations

from navi.sessions.models import DEFAULT_OWNER, Session, SessionInfo
from navi.sessions.store import SessionNotFound, SessionStore

__all__ = [
    "DEFAULT_OWNER",
    "Session",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
]
