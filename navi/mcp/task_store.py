"""Where the tasks of Navi's own MCP server are kept (navi/mcp/tasks.py, `TasksServer`).

A task is a row: who started it, which tool, its status and, once it ended, its result or error.
Kept in the database (`navi/storage/mcp_tasks.py`, table `mcp_tasks`), any worker answers a
client's `tasks/get` and takes its `tasks/cancel`, whichever worker runs the call: the running
worker beats the row every `BEAT_SECONDS` and reads, in the same statement, whether a cancel was
asked for. A working task whose beats stopped (its worker died) is reported failed.
`MemoryTaskStore` keeps the rows in this process (no database: tests, read-only commands).

Rows are plain dicts (the columns below), so the SQL store needs nothing of this package.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

BEAT_SECONDS = 1.0  # how often the running worker beats a working task and looks for a cancel
STALE_SECONDS = 30.0  # a working task not beaten for this long: its worker is gone


@dataclass
class TaskRecord:
    """One task, as stored. Times: `created`/`updated` ISO 8601 for the wire; `started`/`beat`
    seconds since the epoch on the server's clock."""

    task_id: str
    owner: str
    tool: str
    status: str = "working"
    message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    created: str = ""
    updated: str = ""
    started: float = 0.0
    beat: float = 0.0
    cancel: bool = False

    def row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, row: dict[str, Any]) -> TaskRecord:
        return cls(**row)


class TaskStore(Protocol):
    async def create(self, row: dict[str, Any]) -> None: ...

    async def get(self, task_id: str) -> dict[str, Any] | None: ...

    async def working(self, owner: str) -> int:
        """How many of `owner`'s tasks are working."""
        ...

    async def finish(self, task_id: str, fields: dict[str, Any]) -> None:
        """The task ended: its status, message, result or error, and `updated`."""
        ...

    async def beat(self, task_id: str, now: float) -> bool:
        """The running worker's beat; whether a cancel was asked for."""
        ...

    async def ask_cancel(self, task_id: str) -> None: ...

    async def forget(self, ended_before: float) -> None:
        """Delete the ended tasks started before `ended_before`."""
        ...


class MemoryTaskStore:
    """Tasks kept in this process."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    async def create(self, row: dict[str, Any]) -> None:
        self.rows[row["task_id"]] = dict(row)

    async def get(self, task_id: str) -> dict[str, Any] | None:
        row = self.rows.get(task_id)
        return dict(row) if row is not None else None

    async def working(self, owner: str) -> int:
        return sum(1 for r in self.rows.values() if r["owner"] == owner and r["status"] == "working")

    async def finish(self, task_id: str, fields: dict[str, Any]) -> None:
        if task_id in self.rows:
            self.rows[task_id].update(fields)

    async def beat(self, task_id: str, now: float) -> bool:
        row = self.rows.get(task_id)
        if row is None:
            return False
        row["beat"] = now
        return bool(row["cancel"])

    async def ask_cancel(self, task_id: str) -> None:
        if task_id in self.rows:
            self.rows[task_id]["cancel"] = True

    async def forget(self, ended_before: float) -> None:
        for task_id, row in list(self.rows.items()):
            if row["status"] != "working" and row["started"] < ended_before:
                del self.rows[task_id]
