"""The session store on SQLAlchemy Core: SQLite by default, PostgreSQL when `DATABASE_URL` is set.

Every write is one transaction that touches only new rows plus the session's own row (counters and
`last_active`). The session row is locked first (`FOR UPDATE` on PostgreSQL, `BEGIN IMMEDIATE` on
SQLite), so concurrent appends to one session get distinct, gap-free positions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from navi.llm.messages import Message, utcnow
from navi.sessions.models import DEFAULT_OWNER, Session, SessionInfo, as_utc, is_session_id, new_session_id
from navi.sessions.store import SessionNotFound, SessionStore
from navi.storage import migrate
from navi.storage.database import write_transaction
from navi.storage.schema import session_context, session_messages, session_planning_logs, sessions


def _rows(session_id: str, start: int, messages: Sequence[Message]) -> list[dict[str, Any]]:
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
    )


class SqlSessionStore(SessionStore):
    def __init__(
        self, engine: AsyncEngine, files_dir: str | None = None, *, run_migrations: bool = True
    ) -> None:
        super().__init__(files_dir)
        self.engine = engine
        self._run_migrations = run_migrations

    async def open(self) -> None:
        if self._run_migrations:
            await migrate.upgrade(self.engine)

    async def aclose(self) -> None:
        await self.engine.dispose()

    # --- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _owned(query: Any, owner: str | None) -> Any:
        return query if owner is None else query.where(sessions.c.owner == owner)

    @staticmethod
    async def _lock_row(conn: AsyncConnection, session_id: str) -> Any:
        row = (
            await conn.execute(
                select(sessions.c.display_count, sessions.c.context_count, sessions.c.planning_count)
                .where(sessions.c.id == session_id)
                .with_for_update()
            )
        ).first()
        if row is None:
            raise SessionNotFound(session_id)
        return row

    async def _update_flag(self, session_id: str, owner: str | None, **values: Any) -> bool:
        if not is_session_id(session_id):
            return False
        async with write_transaction(self.engine) as conn:
            result = await conn.execute(
                self._owned(update(sessions).where(sessions.c.id == session_id), owner).values(**values)
            )
        return bool(result.rowcount)

    # --- sessions --------------------------------------------------------------------------------
    async def create(
        self, profile_id: str, *, owner: str = DEFAULT_OWNER, name: str | None = None
    ) -> Session:
        now = utcnow()
        session = Session(
            id=new_session_id(),
            owner=owner,
            profile_id=profile_id,
            name=name,
            created_at=now,
            last_active=now,
        )
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                insert(sessions).values(
                    id=session.id,
                    owner=owner,
                    profile_id=profile_id,
                    name=name,
                    pinned=False,
                    context_token_count=0,
                    display_count=0,
                    context_count=0,
                    planning_count=0,
                    created_at=now,
                    last_active=now,
                )
            )
        return session

    async def get(self, session_id: str, *, owner: str | None = None, display: bool = True) -> Session | None:
        if not is_session_id(session_id):
            return None
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(self._owned(select(sessions).where(sessions.c.id == session_id), owner))
            ).first()
            if row is None:
                return None
            context = await conn.execute(
                select(session_context.c.data)
                .where(session_context.c.session_id == session_id)
                .order_by(session_context.c.position)
            )
            messages: list[Message] = []
            if display:
                shown = await conn.execute(
                    select(session_messages.c.data)
                    .where(session_messages.c.session_id == session_id)
                    .order_by(session_messages.c.position)
                )
                messages = [Message.model_validate_json(r.data) for r in shown]
            logs = await conn.execute(
                select(session_planning_logs.c.data)
                .where(session_planning_logs.c.session_id == session_id)
                .order_by(session_planning_logs.c.position)
            )
            return Session(
                **_info(row).model_dump(),
                messages=messages,
                context=[Message.model_validate_json(r.data) for r in context],
                planning_logs=[json.loads(r.data) for r in logs],
            )

    async def list(self, *, owner: str | None = None) -> list[SessionInfo]:
        query = self._owned(select(sessions), owner).order_by(
            sessions.c.pinned.desc(), sessions.c.last_active.desc()
        )
        async with self.engine.connect() as conn:
            return [_info(row) for row in await conn.execute(query)]

    async def _delete(self, session_id: str, owner: str | None) -> bool:
        async with write_transaction(self.engine) as conn:
            result = await conn.execute(
                self._owned(delete(sessions).where(sessions.c.id == session_id), owner)
            )
        return bool(result.rowcount)

    async def set_pinned(self, session_id: str, pinned: bool, *, owner: str | None = None) -> bool:
        return await self._update_flag(session_id, owner, pinned=pinned)

    async def set_name(self, session_id: str, name: str | None, *, owner: str | None = None) -> bool:
        return await self._update_flag(session_id, owner, name=name)

    async def set_profile(self, session_id: str, profile_id: str) -> bool:
        return await self._update_flag(session_id, None, profile_id=profile_id)

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
        async with write_transaction(self.engine) as conn:
            row = await self._lock_row(conn, session_id)
            if display:
                await conn.execute(insert(session_messages), _rows(session_id, row.display_count, display))
            if context:
                await conn.execute(insert(session_context), _rows(session_id, row.context_count, context))
            values: dict[str, Any] = {
                "display_count": row.display_count + len(display),
                "context_count": row.context_count + len(context),
                "last_active": utcnow(),
            }
            if context_token_count is not None:
                values["context_token_count"] = context_token_count
            await conn.execute(update(sessions).where(sessions.c.id == session_id).values(**values))

    async def replace_context(
        self, session_id: str, context: Sequence[Message], *, context_token_count: int
    ) -> None:
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        async with write_transaction(self.engine) as conn:
            await self._lock_row(conn, session_id)
            await conn.execute(delete(session_context).where(session_context.c.session_id == session_id))
            if context:
                await conn.execute(insert(session_context), _rows(session_id, 0, context))
            await conn.execute(
                update(sessions)
                .where(sessions.c.id == session_id)
                .values(context_count=len(context), context_token_count=context_token_count)
            )

    async def set_context_tokens(self, session_id: str, count: int) -> None:
        if not await self._update_flag(session_id, None, context_token_count=count):
            raise SessionNotFound(session_id)

    async def add_planning_log(self, session_id: str, entry: dict[str, Any]) -> None:
        if not is_session_id(session_id):
            raise SessionNotFound(session_id)
        async with write_transaction(self.engine) as conn:
            row = await self._lock_row(conn, session_id)
            await conn.execute(
                insert(session_planning_logs).values(
                    session_id=session_id,
                    position=row.planning_count,
                    created_at=utcnow(),
                    data=json.dumps(entry, default=str),
                )
            )
            await conn.execute(
                update(sessions)
                .where(sessions.c.id == session_id)
                .values(planning_count=row.planning_count + 1)
            )

    async def insert(self, session: Session) -> None:
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                insert(sessions).values(
                    id=session.id,
                    owner=session.owner,
                    profile_id=session.profile_id,
                    name=session.name,
                    pinned=session.pinned,
                    context_token_count=session.context_token_count,
                    display_count=len(session.messages),
                    context_count=len(session.context),
                    planning_count=len(session.planning_logs),
                    created_at=session.created_at,
                    last_active=session.last_active,
                )
            )
            if session.messages:
                await conn.execute(insert(session_messages), _rows(session.id, 0, session.messages))
            if session.context:
                await conn.execute(insert(session_context), _rows(session.id, 0, session.context))
            if session.planning_logs:
                await conn.execute(
                    insert(session_planning_logs),
                    [
                        {
                            "session_id": session.id,
                            "position": i,
                            "created_at": utcnow(),
                            "data": json.dumps(e, default=str),
                        }
                        for i, e in enumerate(session.planning_logs)
                    ],
                )
