"""`todo`: a per-session checklist for multi-step work, kept with the session (navi/sessions/state.py):
its next turn sees it on whichever worker it runs."""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.sessions.state import TODO, SessionState
from navi.tools.base import Tool, ToolResult

STATUSES = ("pending", "in_progress", "done", "failed", "skipped")
MARKS = {"pending": "[ ]", "in_progress": "[~]", "done": "[x]", "failed": "[!]", "skipped": "[-]"}
MAX_TASKS = 50


def render(tasks: list[dict[str, str]]) -> str:
    if not tasks:
        return "The task list is empty."
    lines = [f"{i}. {MARKS[t['status']]} {t['title']}" for i, t in enumerate(tasks, 1)]
    done = sum(t["status"] == "done" for t in tasks)
    return "\n".join([*lines, f"({done}/{len(tasks)} done)"])


class TodoTool(Tool):
    name = "todo"
    description = (
        "Checklist for work of several steps: `set` replaces it with `tasks`, `update` sets the "
        "`status` of task `index` (from 1), `read` shows it."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["set", "update", "read"]},
            "tasks": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": MAX_TASKS},
            "index": {"type": "integer", "minimum": 1},
            "status": {"type": "string", "enum": list(STATUSES)},
        },
        "required": ["action"],
        "additionalProperties": False,
    }
    timeout = 5.0

    def __init__(self, state: SessionState) -> None:
        self.state = state

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        store = self.state.of(ctx.persistent)
        if params["action"] == "read":
            return self._shown(await store.get(ctx.session_id, TODO) or [])
        return await store.change(ctx.session_id, TODO, lambda tasks: self._edit(params, tasks or []))

    def _edit(self, params: dict[str, Any], tasks: list[dict[str, str]]) -> tuple[Any, ToolResult]:
        """The list after `set` or `update`, and the result (a failure changes nothing)."""
        if params["action"] == "set":
            if "tasks" not in params:
                return tasks, ToolResult.fail("`set` needs `tasks`, the list of task titles")
            tasks = [{"title": t.strip(), "status": "pending"} for t in params["tasks"]]
        else:
            index, status = params.get("index"), params.get("status")
            if index is None or status is None:
                return tasks, ToolResult.fail("`update` needs `index` and `status`")
            if index > len(tasks):
                return tasks, ToolResult.fail(
                    f"there is no task {index}; the list has {len(tasks)}", render(tasks)
                )
            tasks[index - 1]["status"] = status
        return tasks, self._shown(tasks)

    @staticmethod
    def _shown(tasks: list[dict[str, str]]) -> ToolResult:
        return ToolResult.ok(render(tasks), tasks=[dict(t) for t in tasks])
