"""Uploaded files kept in the database too, for workers on several machines (PostgreSQL).

An upload is written to the receiving worker's disk (`SESSION_FILES_DIR/{session}/`) as always;
where workers share a PostgreSQL database its bytes also go into `session_files`, capped as the
upload itself is. A message naming a file that is not on this machine's disk — it was uploaded
through another worker — brings it here first, to the same place, so the run (and its tools) read
it as a local file. Rows go with their session (a foreign key), and after `ttl_seconds` with the
upload sweep.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from sqlalchemy import and_, delete, insert, select
from sqlalchemy.exc import IntegrityError

from navi.storage.clock import db_now
from navi.storage.database import Database
from navi.storage.schema import session_files


def _write(folder: Path, name: str, data: bytes) -> None:
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    target = folder / name
    temp = folder / f".shared-{os.getpid()}-{name}.part"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(temp, target)


class SharedFiles:
    def __init__(self, db: Database, *, max_bytes: int) -> None:
        self.db = db
        self.max_bytes = max_bytes
        self._now = db_now(db.dialect)

    async def keep(self, session_id: str, path: Path) -> bool:
        """Keep the uploaded file at `path` (in the session's folder) for the other machines.
        False when it is larger than an upload may be, or a file of that name is kept already."""
        data = await asyncio.to_thread(path.read_bytes)
        if len(data) > self.max_bytes:
            return False
        row = {"session_id": session_id, "name": path.name, "data": data, "created_at": self._now}
        try:
            await self.db.write(lambda conn: conn.execute(insert(session_files).values(**row)))
        except IntegrityError:
            return False
        return True

    async def bring(self, session_id: str, folder: Path, names: list[str]) -> int:
        """Write the kept files of `session_id` named `names` that this machine lacks into
        `folder`; how many. Only names the database holds are written (they were made safe when
        uploaded), so a name a client made up writes nothing."""
        missing = [n for n in dict.fromkeys(names) if n and not (folder / n).exists()]
        if not missing:
            return 0
        table = session_files.c
        query = select(table.name, table.data).where(
            and_(table.session_id == session_id, table.name.in_(missing))
        )
        rows = await self.db.read(lambda conn: [(r.name, bytes(r.data)) for r in conn.execute(query)])
        for name, data in rows:
            await asyncio.to_thread(_write, folder, name, data)
        return len(rows)

    async def expire(self, ttl_seconds: float) -> None:
        statement = delete(session_files).where(session_files.c.created_at < self._now - ttl_seconds)
        await self.db.write(lambda conn: conn.execute(statement))

    async def expire_loop(self, ttl_hours: float, interval: float = 600.0) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.expire(ttl_hours * 3600)
            except Exception:  # the next pass tries again
                pass
