"""The format of a user tool, for reference. Files starting with `_` are never loaded.

Copy this file to `tools/<name>.py` (or send its text to `write_tool`), set `name` to the file name
without `.py`, and fill in the rest. The full manual: `tool_manual("write_tool")`.
"""

from __future__ import annotations

from typing import Any

# Must equal the file name without `.py`: lowercase letters, digits and underscores, 2-64 characters.
name = "my_tool"

# What the tool does and when to use it. The model reads only this to decide whether to call it.
description = "Repeat `text` back, `times` times (default 1). Replace this with what your tool does."

# A JSON Schema object for the arguments; they are validated against it before `execute` runs.
parameters = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The text to repeat."},
        "times": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How often (default 1)."},
    },
    "required": ["text"],
    "additionalProperties": False,
}

# Optional: seconds a call may take before it is cut off (default 120).
timeout = 10

# Top-level code runs at every reload: constants, imports and helper functions only.
# No print(), no network calls, no file access here.


async def execute(params: dict[str, Any]) -> str:
    """Do the work; return text on success, raise an exception with a clear message on failure."""
    text = params["text"]
    times = params.get("times", 1)
    if not text.strip():
        raise ValueError("`text` is empty; give some text to repeat")
    return "\n".join([text] * times)
