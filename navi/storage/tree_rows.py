"""The tree of a session's display rows in SQL: each row's `parent_id`, the session's `active_leaf`
(migration 0016), and the display path read from them (navi/sessions/tree.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, select, update

from navi.llm.messages import Message
from navi.sessions import tree
from navi.sessions.models import Session
from navi.sessions.store import SessionNotFound
from navi.storage.schema import session_messages, sessions


def owned(query: Any, owner: str | None) -> Any:
    return query if owner is None else query.where(sessions.c.owner == owner)


def rows(session_id: str, start: int, messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [
        {
            "session_id": session_id,
            "position": start + i,
            "message_id": m.id,
            "role": m.role,
            "created_at": m.created_at,
            "data": m.model_dump_json(),
        }
        for i, m in enumerate(messages)
    ]


def display_rows(
    session_id: str, start: int, messages: Sequence[Message], parents: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    out = rows(session_id, start, messages)
    for row in out:
        row["parent_id"] = parents.get(row["message_id"])
    return out


def display(
    conn: Connection, session_id: str, active_leaf: str | None, branch: str | None
) -> tuple[list[Message], dict[str, str | None], list[Message]]:
    """The display path (to `branch`'s newest leaf, or the active leaf), every message's parent,
    and the messages off the path (other branches)."""
    c = session_messages.c
    query = select(c.message_id, c.parent_id, c.data).where(c.session_id == session_id).order_by(c.position)
    data: dict[str, str] = {}
    parents: dict[str, str | None] = {}
    for r in conn.execute(query):
        parents[r.message_id] = r.parent_id
        data[r.message_id] = r.data
    path = tree.path_ids(parents, active_leaf, branch)
    on_path = set(path)
    others = [Message.model_validate_json(d) for i, d in data.items() if i not in on_path]
    return [Message.model_validate_json(data[i]) for i in path], parents, others


def leaf(conn: Connection, session_id: str) -> str | None:
    """The active leaf, with the session row locked: new display messages go below it."""
    row = conn.execute(
        select(sessions.c.active_leaf, sessions.c.display_count)
        .where(sessions.c.id == session_id)
        .with_for_update()
    ).first()
    if row is None:
        raise SessionNotFound(session_id)
    if row.active_leaf == tree.ROOT:
        return None
    if row.active_leaf is None and row.display_count:  # written without a leaf: the newest message
        c = session_messages.c
        last = select(c.message_id).where(c.session_id == session_id, c.position == row.display_count - 1)
        return conn.execute(last).scalar()
    return row.active_leaf


def set_leaf(conn: Connection, session_id: str, owner: str | None, leaf: str) -> bool:
    c = session_messages.c
    found = select(c.message_id).where(c.session_id == session_id, c.message_id == leaf)
    if leaf != tree.ROOT and conn.execute(found).first() is None:
        return False
    query = owned(update(sessions).where(sessions.c.id == session_id), owner).values(active_leaf=leaf)
    return bool(conn.execute(query).rowcount)


def whole_tree(session: Session) -> list[dict[str, Any]]:
    """The display rows of a whole session (an import): every branch, in the order written."""
    parents = {**tree.chain([m.id for m in session.messages]), **session.parents}
    every = tree.written_order([*session.messages, *session.others], session.parents)
    return display_rows(session.id, 0, every, parents)
