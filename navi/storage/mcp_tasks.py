"""The tasks of Navi's own MCP server in the database (`mcp_tasks`; navi/mcp/task_store.py says
what a row holds): any worker answers `tasks/get` and takes `tasks/cancel`, whichever runs the call.

Rows come and go as plain dicts of the table's columns (`result` and `error` decoded from JSON).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, select, update

from navi.storage.database import Database
from navi.storage.schema import mcp_tasks

_JSON = ("result", "error")


def _stored(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: (json.dumps(v) if k in _JSON and v is not None else v) for k, v in fields.items()}


class SqlTaskStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, row: dict[str, Any]) -> None:
        await self.db.write(lambda conn: conn.execute(insert(mcp_tasks).values(**_stored(row))))

    async def get(self, task_id: str) -> dict[str, Any] | None:
        query = select(mcp_tasks).where(mcp_tasks.c.task_id == task_id)

        def read(conn: Connection) -> dict[str, Any] | None:
            found = conn.execute(query).mappings().first()
            if found is None:
                return None
            row = dict(found)
            for key in _JSON:
                row[key] = json.loads(row[key]) if row[key] is not None else None
            row["cancel"] = bool(row["cancel"])
            return row

        return await self.db.read(read)

    async def working(self, owner: str) -> int:
        t = mcp_tasks.c
        query = select(func.count()).where(and_(t.owner == owner, t.status == "working"))
        return int(await self.db.read(lambda conn: conn.execute(query).scalar() or 0))

    async def finish(self, task_id: str, fields: dict[str, Any]) -> None:
        statement = update(mcp_tasks).where(mcp_tasks.c.task_id == task_id).values(**_stored(fields))
        await self.db.write(lambda conn: conn.execute(statement))

    async def beat(self, task_id: str, now: float) -> bool:
        t = mcp_tasks.c
        statement = update(mcp_tasks).where(t.task_id == task_id).values(beat=now).returning(t.cancel)
        return bool(await self.db.write(lambda conn: conn.execute(statement).scalar()))

    async def ask_cancel(self, task_id: str) -> None:
        statement = update(mcp_tasks).where(mcp_tasks.c.task_id == task_id).values(cancel=True)
        await self.db.write(lambda conn: conn.execute(statement))

    async def forget(self, ended_before: float) -> None:
        t = mcp_tasks.c
        statement = delete(mcp_tasks).where(and_(t.status != "working", t.started < ended_before))
        await self.db.write(lambda conn: conn.execute(statement))
