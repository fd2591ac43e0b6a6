"""`memory_search` and `memory_forget`: the agent's hands on long-term memory."""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.memory.base import MemoryStore
from navi.tools.base import Tool, ToolResult


def _owner() -> str:
    ctx = runctx.current()
    return ctx.owner if ctx else "local"


class MemorySearchTool(Tool):
    name = "memory_search"
    description = "Search the facts remembered about the user from earlier conversations."
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, memory: MemoryStore) -> None:
        self.memory = memory

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        facts = await self.memory.search_facts(params["query"], owner=_owner(), limit=params.get("limit", 15))
        if not facts:
            return ToolResult.ok(f"Nothing remembered about “{params['query']}”.")
        lines = [f"- {f.line()}  (updated {f.updated_at:%Y-%m-%d})" for f in facts]
        return ToolResult.ok(f"{len(facts)} remembered fact(s):\n" + "\n".join(lines))


class MemoryForgetTool(Tool):
    name = "memory_forget"
    description = "Forget the remembered facts with this `key` (only in `category`, if given)."
    parameters = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "category": {"type": "string", "minLength": 1},
        },
        "required": ["key"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, memory: MemoryStore) -> None:
        self.memory = memory

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        count = await self.memory.delete_fact(params["key"], params.get("category"), owner=_owner())
        where = f" in {params['category']}" if params.get("category") else ""
        if not count:
            return ToolResult.fail(f"no remembered fact with the key '{params['key']}'{where}")
        return ToolResult.ok(f"Forgot {count} fact(s) with the key '{params['key']}'{where}.")
