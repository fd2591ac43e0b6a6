"""Rows written the way an older schema held them, for migration tests: the store's own code always
writes the newest schema's columns, so a database at an old revision is filled with plain SQL."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import Connection, text

from navi.llm.messages import Message
from navi.sessions.models import new_session_id
from navi.storage.database import Database

WHEN = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _write(
    conn: Connection, session_id: str, owner: str, name: str | None, messages: Sequence[Message]
) -> None:
    conn.execute(
        text(
            "INSERT INTO sessions (id, owner, profile_id, name, pinned, context_token_count, display_count,"
            " context_count, planning_count, context_rev, created_at, last_active)"
            " VALUES (:id, :owner, 'secretary', :name, false, 0, :n, 0, 0, 0, :at, :at)"
        ),
        {"id": session_id, "owner": owner, "name": name, "n": len(messages), "at": WHEN},
    )
    for position, m in enumerate(messages):
        conn.execute(
            text(
                "INSERT INTO session_messages (session_id, position, message_id, role, created_at, data)"
                " VALUES (:sid, :pos, :mid, :role, :at, :data)"
            ),
            {
                "sid": session_id,
                "pos": position,
                "mid": m.id,
                "role": m.role,
                "at": m.created_at,
                "data": m.model_dump_json(),
            },
        )


async def old_session(
    db: Database, messages: Sequence[Message], *, owner: str = "local", name: str | None = None
) -> str:
    """A session with a flat display buffer, as revisions before 0016 stored it; returns its id."""
    session_id = new_session_id()
    await db.write(lambda conn: _write(conn, session_id, owner, name, messages))
    return session_id
