"""`scratchpad`: named sections of working notes, per session."""

from __future__ import annotations

from typing import Any

from navi import runctx
from navi.tools.base import Tool, ToolResult
from navi.tools.session_state import SessionState

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
        pad: dict[str, str] = self.state.bucket(runctx.require().session_id, "scratchpad", {})
        action, section = params["action"], params.get("section")
        if action in ("write", "append"):
            if not section or "content" not in params:
                return ToolResult.fail(f"`{action}` needs `section` and `content`")
            text = params["content"] if action == "write" else pad.get(section, "") + params["content"]
            if len(text) > MAX_SECTION_CHARS:
                return ToolResult.fail(f"section '{section}' would exceed {MAX_SECTION_CHARS} characters")
            pad[section] = text
            return ToolResult.ok(f"Section '{section}' now has {len(text)} characters.")
        if action == "clear":
            if section:
                pad.pop(section, None)
                return ToolResult.ok(f"Cleared section '{section}'.")
            pad.clear()
            return ToolResult.ok("Cleared all sections.")
        if section:
            if section not in pad:
                known = ", ".join(pad) or "none yet"
                return ToolResult.fail(f"no section '{section}' (sections: {known})")
            return ToolResult.ok(pad[section])
        if not pad:
            return ToolResult.ok("The scratchpad is empty.")
        return ToolResult.ok("\n\n".join(f"## {name}\n{text}" for name, text in pad.items()))
