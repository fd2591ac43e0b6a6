"""An MCP server's tools as Navi tools: names, schemas, and the proxy each listed tool becomes.

Names are `<server>__<tool>` with every character outside `[A-Za-z0-9_-]` replaced and at most 64
characters, the rule Ollama, OpenAI and Anthropic all accept; a name already taken gets `_2`,
`_3`… A server is untrusted: a listing whose schema is not a JSON Schema object is left out (with a
warning), long descriptions are cut, and results are mapped block by block, never passed through.

A proxy calls through its server's `ServerConnection`, which maps the results (`navi.mcp.results`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import jsonschema
import mcp_types

from navi.mcp.config import sanitize
from navi.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from navi.mcp.connection import ServerConnection

MAX_NAME = 64
MAX_DESCRIPTION = 4_000
TIMEOUT_MARGIN = 5.0  # the engine's own timeout is a backstop behind the server's `timeout`


def tool_name(prefix: str, tool: str, taken: Collection[str]) -> str:
    """`<prefix>__<tool>`, sanitized, at most 64 characters, not in `taken`."""
    base = f"{prefix}__{sanitize(tool) or 'tool'}"[:MAX_NAME]
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[: MAX_NAME - len(suffix)] + suffix
    return name


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot be a tool's parameters (None when it can)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "its input schema is not an object schema"
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return f"its input schema is invalid: {exc.message}"
    return None


class McpTool(Tool):
    """A proxy for one tool of one MCP server; `mcp_tool` builds a subclass per listed tool."""

    name = "mcp_tool"
    description = ""
    server: str = ""  # the server's name in MCP_SERVERS_FILE
    remote_name: str = ""  # the tool's own name on that server

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        return await self.connection.call(self.remote_name, params, shown_as=self.name)


def mcp_tool(connection: ServerConnection, listed: mcp_types.Tool, name: str) -> Tool:
    """The Navi tool for `listed` (already checked with `schema_problem`)."""
    description = (listed.description or listed.title or listed.name).strip()
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    schema = dict(listed.input_schema)
    schema.setdefault("type", "object")
    attrs = {
        "name": name,
        "description": description,
        "parameters": schema,
        "timeout": connection.config.timeout + TIMEOUT_MARGIN,
        "server": connection.config.name,
        "remote_name": listed.name,
    }
    return type(f"Mcp_{name}", (McpTool,), attrs)(connection)
