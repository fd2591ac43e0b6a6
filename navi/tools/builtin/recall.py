"""`recall`: read the full text of a result that was shortened in the model's context.

Long tool results stay whole in the display history; the context keeps a head and a tail with a
key. With the key the model reads any part of the original, as much as it needs.
"""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.sessions.store import SessionStore
from navi.tools.base import Tool, ToolResult

DEFAULT_LENGTH = 8_000
MAX_LENGTH = 40_000


class RecallTool(Tool):
    name = "recall"
    description = (
        "Full text of a result shortened in your context: `key` is in its '[… characters omitted "
        "…]' note; `offset` and `length` (characters) select a part."
    )
    parameters = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "offset": {"type": "integer", "minimum": 0},
            "length": {"type": "integer", "minimum": 1, "maximum": MAX_LENGTH},
        },
        "required": ["key"],
        "additionalProperties": False,
    }
    timeout = 15.0

    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions

    async def _lookup(self, ctx: runctx.RunContext, key: str) -> str | None:
        if key in ctx.full_texts:
            return ctx.full_texts[key]
        if not ctx.persistent:
            return None
        session = await self.sessions.get(ctx.session_id)
        if session is None:
            return None
        return next((m.content or "" for m in session.messages if m.id == key), None)

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        ctx = runctx.require()
        text = await self._lookup(ctx, params["key"])
        if text is None:
            return ToolResult.fail(f"nothing is stored under the key '{params['key']}'")
        ctx.full_texts[params["key"]] = text
        offset = params.get("offset", 0)
        length = params.get("length", DEFAULT_LENGTH)
        if offset >= len(text):
            return ToolResult.fail(f"offset {offset} is past the end (the text has {len(text)} characters)")
        part = text[offset : offset + length]
        end = offset + len(part)
        more = (
            f" {len(text) - end} characters follow; call recall with offset {end} for more."
            if end < len(text)
            else ""
        )
        return ToolResult.ok(f"[characters {offset}–{end} of {len(text)}.{more}]\n{part}")
