"""An answer's rating by the person (👍/👎), kept in its display row's metadata (`feedback`)."""

from __future__ import annotations

from sqlalchemy import Connection, select, update

from navi.llm.messages import Message
from navi.storage.schema import session_messages, sessions

Rating = str | None  # "up", "down", or None (no rating)


def set_feedback(
    conn: Connection, session_id: str, message_id: str, rating: Rating, owner: str | None
) -> bool:
    """Rate the assistant message `message_id` of the session (of `owner`, when given); False when
    there is no such answer. Only the display row changes: the model never reads a rating."""
    query = (
        select(session_messages.c.position, session_messages.c.data)
        .join(sessions, sessions.c.id == session_messages.c.session_id)
        .where(
            session_messages.c.session_id == session_id,
            session_messages.c.message_id == message_id,
            session_messages.c.role == "assistant",
        )
    )
    if owner is not None:
        query = query.where(sessions.c.owner == owner)
    found = conn.execute(query).first()
    if found is None:
        return False
    message = Message.model_validate_json(found.data)
    message.metadata["feedback"] = rating
    conn.execute(
        update(session_messages)
        .where(session_messages.c.session_id == session_id, session_messages.c.position == found.position)
        .values(data=message.model_dump_json())
    )
    return True
