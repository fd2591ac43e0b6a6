"""`scratchpad`: named sections of working notes, per session, kept with the session
(navi/sessions/state.py): its next turn reads them on whichever worker it runs."""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.sessions.state import SCRATCHPAD, SessionState
from navi.tools.base import Tool, ToolResult

MAX_SECTION_CHARS = 50_000


class ScratchpadTool(Tool):
    name = "scratchpad"
    description = (
        "Notes in named sections, kept for this session: `write` (replace) or `append` `content` "
        "to a `section`; `read` or `clear` one `section`, or all without it."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["write", "append", "read", "clear"]},
            "section": {"type": "string", "minLength": 1, "maxLength": 64},
            "content": {"type": "string"},
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
        action, section = params["action"], params.get("section")
        if action in ("write", "append", "clear"):
            return await store.change(ctx.session_id, SCRATCHPAD, lambda pad: _edit(params, dict(pad or {})))
        pad: dict[str, str] = await store.get(ctx.session_id, SCRATCHPAD) or {}
        if section:
            if section not in pad:
                known = ", ".join(pad) or "none yet"
                return ToolResult.fail(f"no section '{section}' (sections: {known})")
            return ToolResult.ok(pad[section])
        if not pad:
            return ToolResult.ok("The scratchpad is empty.")
        return ToolResult.ok("\n\n".join(f"## {name}\n{text}" for name, text in pad.items()))


def _edit(params: dict[str, Any], pad: dict[str, str]) -> tuple[dict[str, str] | None, ToolResult]:
    """The scratchpad after `write`, `append` or `clear` (None: empty), and the result."""
    action, section = params["action"], params.get("section")
    if action == "clear":
        if section:
            pad.pop(section, None)
            return pad or None, ToolResult.ok(f"Cleared section '{section}'.")
        return None, ToolResult.ok("Cleared all sections.")
    if not section or "content" not in params:
        return pad or None, ToolResult.fail(f"`{action}` needs `section` and `content`")
    text = params["content"] if action == "write" else pad.get(section, "") + params["content"]
    if len(text) > MAX_SECTION_CHARS:
        return pad or None, ToolResult.fail(
            f"section '{section}' would exceed {MAX_SECTION_CHARS} characters"
        )
    pad[section] = text
    return pad, ToolResult.ok(f"Section '{section}' now has {len(text)} characters.")
