"""The session store in SQLAlchemy Core, on SQLite or PostgreSQL through `Database`.

Each operation is one transaction, written as a synchronous function of a connection. A turn
inserts only its new rows and updates the session's own row (counters, `last_active`). The session
row is locked first (`FOR UPDATE` on PostgreSQL; SQLite's `BEGIN IMMEDIATE` already serialises
writers), so concurrent appends get distinct, gap-free positions.

Recent sessions' contexts are cached, tagged with the row's `context_rev`, which every change to
the context buffer bumps. A read checks the revision in the row it loads anyway and reuses the
cached messages when it matches: a turn in a 5,000-message session re-parses none of them, and a
write by another process is still seen. Cached messages are shared: never mutate them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, case, delete, func, insert, or_, select, true, update
from sqlalchemy.exc import IntegrityError

from navi.llm.messages import Message, utcnow
from navi.sessions import tree
from navi.sessions.models import DEFAULT_OWNER, Session, SessionInfo, as_utc, is_session_id, new_session_id
from navi.sessions.search import SearchHit, SearchQuery
from navi.sessions.store import SessionExists, SessionNotFound, SessionStore
from navi.sessions.usage import UsageReport
from navi.storage import migrate, search
from navi.storage import tree_rows as rows
from navi.storage import usage as usage_rows
from navi.storage.context_cache import ContextCache
from navi.storage.database import Database
from navi.storage.feedback import set_feedback
from navi.storage.schema import (
    message_search,
    session_archive_parts,
    session_context,
    session_messages,
    session_planning_logs,
    sessions,
)

CUSTOM_PART = "custom"  # the row holding an imported archive's unknown session fields


def _info(row: Any) -> SessionInfo:
    return SessionInfo(
        id=row.id,
        owner=row.owner,
        profile_id=row.profile_id,
        name=row.name,
        pinned=bool(row.pinned),
        context_token_count=row.context_token_count,
        message_count=row.display_count,
        created_at=as_utc(row.created_at),
        last_active=as_utc(row.last_active),
        folder=row.folder,
        archived=bool(row.archived),
        temporary=bool(row.temporary),
    )


def _lock(conn: Connection, session_id: str) -> Any:
    row = conn.execute(
        select(sessions.c.display_count, sessions.c.context_count, sessions.c.planning_count)
        .where(sessions.c.id == session_id)
        .with_for_update()
    ).first()
    if row is None:
        raise SessionNotFound(session_id)
    return row


def _load(
    conn: Connection, session_id: str, owner: str | None, display: bool, cache: ContextCache, at: str | None
) -> Session | None:
    row = conn.execute(rows.owned(select(sessions).where(sessions.c.id == session_id), owner)).first()
    if row is None:
        return None
    messages, parents, others = (
        rows.display(conn, session_id, row.active_leaf, at) if display else ([], {}, [])
    )

    def buffer(table: Any) -> list[Message]:
        query = select(table.c.data).where(table.c.session_id == session_id).order_by(table.c.position)
        return [Message.model_validate_json(r.data) for r in conn.execute(query)]

    logs: Any = (
        conn.execute(
            select(session_planning_logs.c.data)
            .where(session_planning_logs.c.session_id == session_id)
            .order_by(session_planning_logs.c.position)
        )
        if display
        else []
    )
    parts: dict[str, Any] = {}
    if display:
        query = select(session_archive_parts.c.name, session_archive_parts.c.data).where(
            session_archive_parts.c.session_id == session_id
        )
        parts = {r.name: json.loads(r.data) for r in conn.execute(query)}
    context = cache.get(session_id, row.context_rev)
    if context is None:
        context = buffer(session_context)
        cache.put(session_id, row.context_rev, context)
    return Session(
        **_info(row).model_dump(),
        messages=messages,
        parents=parents,
        others=others,
        active_leaf=row.active_leaf,
        context=context,
        planning_logs=[json.loads(r.data) for r in logs],
        custom=parts.pop(CUSTOM_PART, {}),
        analysis=parts,
        system_prompt=row.system_prompt,
        model=row.model,
    )


def _find_message(conn: Connection, message_id: str, owner: str, prefer: str | None) -> Message | None:
    """One indexed lookup (`message_id`), joined to the session row for its owner."""
    query = (
        select(session_messages.c.data)
        .join(sessions, sessions.c.id == session_messages.c.session_id)
        .where(session_messages.c.message_id == message_id, sessions.c.owner == owner)
        .order_by(
            case((session_messages.c.session_id == (prefer or ""), 0), else_=1),
            sessions.c.last_active.desc(),
        )
        .limit(1)
    )
    row = conn.execute(query).first()
    return None if row is None else Message.model_validate_json(row.data)


# How a summary's row reads (`Message.model_dump_json` writes no spaces; JSON written otherwise may
# have one): a cheap filter, checked again on the parsed message. Text in a message's content has
# its quotes escaped, so never matches.
_SUMMARY_LIKE = ('%"is_summary":true%', '%"is_summary": true%')


def _summaries(conn: Connection, owner: str, limit: int) -> list[tuple[SessionInfo, Message]]:
    """The newest summary of each of `owner`'s sessions that has one, most recently active first."""
    query = (
        select(sessions, session_context.c.data)
        .join(session_context, session_context.c.session_id == sessions.c.id)
        .where(
            sessions.c.owner == owner,
            session_context.c.role == "user",
            or_(*(session_context.c.data.like(pattern) for pattern in _SUMMARY_LIKE)),
        )
        .order_by(sessions.c.last_active.desc(), sessions.c.id, session_context.c.position.desc())
    )
    found: dict[str, tuple[SessionInfo, Message]] = {}
    for row in conn.execute(query):
        if row.id in found:
            continue  # an older summary of the same session
        message = Message.model_validate_json(row.data)
        if not message.is_summary:
            continue
        found[row.id] = (_info(row), message)
        if len(found) == limit:
            break
    return list(found.values())


# Built once: a turn runs these on every append, so skip rebuilding and re-keying them each time.
# The counter update both reserves the positions and locks the row (RETURNING gives the new counts).
_RESERVE = (
    update(sessions)
    .where(sessions.c.id == bindparam("sid"))
    .values(
        display_count=sessions.c.display_count + bindparam("n_display"),
        context_count=sessions.c.context_count + bindparam("n_context"),
        context_rev=sessions.c.context_rev + bindparam("rev_step"),
        last_active=bindparam("now"),
    )
    .returning(sessions.c.display_count, sessions.c.context_count, sessions.c.context_rev)
)
_RESERVE_WITH_TOKENS = _RESERVE.values(context_token_count=bindparam("tokens"))
# (with tokens, with display rows): display rows also move the active leaf to the newest of them.
_RESERVES = {
    (False, False): _RESERVE,
    (True, False): _RESERVE_WITH_TOKENS,
    (False, True): _RESERVE.values(active_leaf=bindparam("leaf")),
    (True, True): _RESERVE_WITH_TOKENS.values(active_leaf=bindparam("leaf")),
}
_INSERT_DISPLAY = insert(session_messages)
_INSERT_CONTEXT = insert(session_context)


def _append(
    conn: Connection,
    session_id: str,
    display: Sequence[Message],
    context: Sequence[Message],
    context_token_count: int | None,
) -> int:
    """Returns the new context revision."""
    params: dict[str, Any] = {
        "sid": session_id,
        "n_display": len(display),
        "n_context": len(context),
        "rev_step": 1 if context else 0,
        "now": utcnow(),
    }
    parent = rows.leaf(conn, session_id) if display else None
    reserve = _RESERVES[context_token_count is not None, bool(display)]
    if display:
        params["leaf"] = display[-1].id
    if context_token_count is not None:
        params["tokens"] = context_token_count
    row = conn.execute(reserve, params).first()
    if row is None:
        raise SessionNotFound(session_id)
    if display:
        parents = tree.chain([m.id for m in display], parent)
        conn.execute(
            _INSERT_DISPLAY, rows.display_rows(session_id, row.display_count - len(display), display, parents)
        )
    if context:
        conn.execute(_INSERT_CONTEXT, rows.rows(session_id, row.context_count - len(context), context))
    return int(row.context_rev)


def _replace_context(conn: Connection, session_id: str, context: Sequence[Message], tokens: int) -> int:
    _lock(conn, session_id)
    conn.execute(delete(session_context).where(session_context.c.session_id == session_id))
    if context:
        conn.execute(insert(session_context), rows.rows(session_id, 0, context))
    row = conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(
            context_count=len(context), context_token_count=tokens, context_rev=sessions.c.context_rev + 1
        )
        .returning(sessions.c.context_rev)
    ).first()
    assert row is not None
    return int(row.context_rev)


def _add_planning_log(conn: Connection, session_id: str, entry: dict[str, Any]) -> None:
    row = _lock(conn, session_id)
    conn.execute(
        insert(session_planning_logs).values(
            session_id=session_id,
            position=row.planning_count,
            created_at=utcnow(),
            data=json.dumps(entry, default=str),
        )
    )
    conn.execute(
        update(sessions).where(sessions.c.id == session_id).values(planning_count=row.planning_count + 1)
    )


def _put_parts(conn: Connection, session_id: str, parts: Mapping[str, Any]) -> None:
    """Replace the named archive parts of a session (delete and insert: the same on both databases)."""
    if not parts:
        return
    c = session_archive_parts.c
    conn.execute(delete(session_archive_parts).where(c.session_id == session_id, c.name.in_(list(parts))))
    now = utcnow()
    conn.execute(
        insert(session_archive_parts),
        [
            {"session_id": session_id, "name": name, "updated_at": now, "data": json.dumps(data)}
            for name, data in parts.items()
        ],
    )


def _set_analysis(
    conn: Connection, session_id: str, owner: str | None, parts: Mapping[str, dict[str, Any]]
) -> bool:
    query = rows.owned(select(sessions.c.id).where(sessions.c.id == session_id), owner).with_for_update()
    if conn.execute(query).first() is None:
        return False
    _put_parts(conn, session_id, parts)
    return True


def _insert(conn: Connection, session: Session) -> None:
    conn.execute(
        insert(sessions).values(
            id=session.id,
            owner=session.owner,
            profile_id=session.profile_id,
            name=session.name,
            pinned=session.pinned,
            context_token_count=session.context_token_count,
            display_count=len(session.messages) + len(session.others),
            context_count=len(session.context),
            planning_count=len(session.planning_logs),
            active_leaf=session.active_leaf or (session.messages[-1].id if session.messages else None),
            created_at=session.created_at,
            last_active=session.last_active,
            system_prompt=session.system_prompt,
            model=session.model,
            folder=session.folder,
            archived=session.archived,
            temporary=session.temporary,
        )
    )
    if session.messages or session.others:
        conn.execute(insert(session_messages), rows.whole_tree(session))
    if session.context:
        conn.execute(insert(session_context), rows.rows(session.id, 0, session.context))
    if session.planning_logs:
        now = utcnow()
        conn.execute(
            insert(session_planning_logs),
            [
                {
                    "session_id": session.id,
                    "position": i,
                    "created_at": now,
                    "data": json.dumps(e, default=str),
                }
                for i, e in enumerate(session.planning_logs)
            ],
        )
    parts = {**session.analysis, **({CUSTOM_PART: session.custom} if session.custom else {})}
    _put_parts(conn, session.id, parts)


class SqlSessionStore(SessionStore):
    """Sessions in `db`. A database handed in stays its creator's (migrated and disposed by whoever
    opened it: the composition root shares one with the memory store); one made with `at(url)`
    is its own, migrated by `open()` and disposed by `aclose()`."""

    def __init__(self, db: Database, files_dir: str | None = None) -> None:
        super().__init__(files_dir)
        self.db = db
        self._owns_db = False
        self._cache = ContextCache()

    @classmethod
    def at(cls, url: str, files_dir: str | None = None) -> SqlSessionStore:
        store = cls(Database(url), files_dir)
        store._owns_db = True
        return store

    async def open(self) -> None:
        if self._owns_db:
            await migrate.upgrade(self.db)

    async def aclose(self) -> None:
        if self._owns_db:
            await self.db.dispose()

    async def _update(self, session_id: str, owner: str | None, *, where: Any = None, **values: Any) -> bool:
        if not is_session_id(session_id):
            return False
        where = true() if where is None else where
        query = rows.owned(update(sessions).where(sessions.c.id == session_id, where), owner).values(**values)
        return bool(await self.db.write(lambda conn: conn.execute(query).rowcount))

    # --- sessions --------------------------------------------------------------------------------
    async def _create(
        self,
        profile_id: str,
        *,
        owner: str = DEFAULT_OWNER,
        name: str | None = None,
        session_id: str | None = None,
        temporary: bool = False,
    ) -> Session:
        now = utcnow()
        session = Session(
            id=session_id or new_session_id(),
            owner=owner,
            profile_id=profile_id,
            name=name,
            temporary=temporary,
        )
        session.created_at = session.last_active = now
        try:
            await self.db.write(lambda conn: _insert(conn, session))
        except IntegrityError:  # only a named id can be taken (the primary key)
            if session_id is None:
                raise
            raise SessionExists(session_id) from None
        return session

    async def get(
        self, session_id: str, *, owner: str | None = None, display: bool = True, branch: str | None = None
    ) -> Session | None:
        if not is_session_id(session_id):
            return None
        return await self.db.read(lambda conn: _load(conn, session_id, owner, display, self._cache, branch))

    async def _set_leaf(self, session_id: str, leaf: str, owner: str | None) -> bool:
        return bool(await self.db.write(lambda conn: rows.set_leaf(conn, session_id, owner, leaf)))

    async def find_message(self, message_id: str, *, owner: str, prefer: str | None = None) -> Message | None:
        return await self.db.read(lambda conn: _find_message(conn, message_id, owner, prefer))

    async def _search(self, query: SearchQuery, owner: str) -> list[SearchHit]:
        return await self.db.read(lambda conn: search.search(conn, query, owner))

    async def summaries(self, *, owner: str, limit: int) -> Sequence[tuple[SessionInfo, Message]]:
        return await self.db.read(lambda conn: _summaries(conn, owner, limit))

    async def usage(
        self, *, owner: str, since: datetime | None = None, until: datetime | None = None
    ) -> UsageReport:
        return await self.db.read(lambda conn: usage_rows.usage(conn, owner, since, until))

    async def list(self, *, owner: str | None = None) -> list[SessionInfo]:
        query = rows.owned(select(sessions), owner).order_by(
            sessions.c.pinned.desc(), sessions.c.last_active.desc()
        )
        # What search indexes is what a person reads: the messages with text, per session.
        texts = select(message_search.c.session_id, func.count()).group_by(message_search.c.session_id)
        if owner is not None:
            texts = texts.where(message_search.c.owner == owner)

        def read(conn: Connection) -> list[SessionInfo]:
            counted: dict[str, int] = {row[0]: row[1] for row in conn.execute(texts)}
            infos = [_info(row) for row in conn.execute(query)]
            for info in infos:
                info.text_message_count = counted.get(info.id, 0)
            return infos

        return await self.db.read(read)

    async def _delete(self, session_id: str, owner: str | None) -> bool:
        query = rows.owned(delete(sessions).where(sessions.c.id == session_id), owner)
        self._cache.drop(session_id)
        return bool(await self.db.write(lambda conn: conn.execute(query).rowcount))

    async def _set_pinned(self, session_id: str, pinned: bool, owner: str | None) -> bool:
        return await self._update(session_id, owner, pinned=pinned)

    async def _set_place(self, session_id: str, fields: dict[str, Any], owner: str | None) -> bool:
        return await self._update(session_id, owner, **fields)

    async def _set_name(self, session_id: str, name: str | None, owner: str | None, **how: bool) -> bool:
        unnamed = sessions.c.name.is_(None) if how.get("only_unnamed") else None
        return await self._update(session_id, owner, where=unnamed, name=name)

    async def _set_profile(self, session_id: str, profile_id: str) -> bool:
        return await self._update(session_id, None, profile_id=profile_id)

    async def _set_options(self, session_id: str, owner: str | None, values: dict[str, str | None]) -> bool:
        return await self._update(session_id, owner, **values)

    async def _set_feedback(self, sid: str, mid: str, rating: str | None, owner: str | None) -> bool:
        return is_session_id(sid) and await self.db.write(lambda c: set_feedback(c, sid, mid, rating, owner))

    # --- incremental writes ----------------------------------------------------------------------
    async def append(
        self,
        session_id: str,
        *,
        display: Sequence[Message] = (),
        context: Sequence[Message] = (),
        context_token_count: int | None = None,
    ) -> None:
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        rev = await self.db.write(
            lambda conn: _append(conn, session_id, display, context, context_token_count)
        )
        if context:
            self._cache.extend(session_id, rev - 1, rev, context)

    async def replace_context(
        self, session_id: str, context: Sequence[Message], *, context_token_count: int
    ) -> None:
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        rev = await self.db.write(
            lambda conn: _replace_context(conn, session_id, context, context_token_count)
        )
        self._cache.put(session_id, rev, list(context))

    async def set_context_tokens(self, session_id: str, count: int) -> None:
        if not await self._update(session_id, None, context_token_count=count):
            raise SessionNotFound(session_id)

    async def add_planning_log(self, session_id: str, entry: dict[str, Any]) -> None:
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        await self.db.write(lambda conn: _add_planning_log(conn, session_id, entry))

    async def _set_analysis(
        self, session_id: str, parts: Mapping[str, dict[str, Any]], owner: str | None
    ) -> bool:
        return bool(await self.db.write(lambda conn: _set_analysis(conn, session_id, owner, parts)))

    async def _insert(self, session: Session) -> None:
        await self.db.write(lambda conn: _insert(conn, session))
