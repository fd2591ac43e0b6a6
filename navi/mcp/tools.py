"""An MCP server's tools as Navi tools: names, schemas, and results mapped onto `ToolResult`.

Names are `<server>__<tool>` with every character outside `[A-Za-z0-9_-]` replaced and at most 64
characters, the rule Ollama, OpenAI and Anthropic all accept; a name already taken gets `_2`,
`_3`… A server is untrusted: a listing whose schema is not a JSON Schema object is left out (with a
warning), long descriptions are cut, and results are mapped block by block, never passed through.

Results: text blocks are the output; the first image goes into the model's context like
`image_view`'s (verified and downsized with Pillow; later ones are named in the text); an
embedded resource's text is included under its URI, a binary one is a note; audio and resource
links are notes; `isError` is a failed call with the server's text as the error.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import jsonschema
import mcp_types

from navi.logging import get_logger
from navi.mcp.config import sanitize
from navi.tools.base import Tool, ToolResult
from navi.tools.builtin.image import NotAnImage, prepare_image

if TYPE_CHECKING:
    from navi.mcp.connection import ServerConnection

log = get_logger(__name__)

MAX_NAME = 64
MAX_DESCRIPTION = 4_000
MAX_IMAGE_SIDE = 1568
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


async def to_result(result: mcp_types.CallToolResult, shown_as: str) -> ToolResult:
    """Navi's result for an MCP `tools/call` result."""
    texts: list[str] = []
    image: dict[str, Any] | None = None
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            if image is None and not result.is_error:
                image, note = await _image(block)
                texts.append(note)
            else:
                texts.append(f"[another image ({block.mime_type}) was returned; only the first is shown]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            texts.append(_resource(block.resource))
        elif isinstance(block, mcp_types.AudioContent):
            texts.append(f"[audio ({block.mime_type}, {_decoded_size(block.data)} bytes): not shown]")
        elif isinstance(block, mcp_types.ResourceLink):
            texts.append(f"[resource link: {block.name} {block.uri}]")
    if not result.content and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    output = "\n".join(t for t in texts if t)
    if result.is_error:
        return ToolResult.fail(output or f"{shown_as} reported an error without a message")
    if image is not None:
        return ToolResult.ok(output, **image)
    return ToolResult.ok(output)


async def _image(block: mcp_types.ImageContent) -> tuple[dict[str, Any] | None, str]:
    """The metadata that puts the image in the model's context (as `image_view`'s does), and a note."""
    try:
        data = base64.b64decode(block.data, validate=True)
        image = await asyncio.to_thread(prepare_image, data, MAX_IMAGE_SIDE)
    except (binascii.Error, ValueError, NotAnImage) as exc:
        return None, f"[an image ({block.mime_type}) was returned but cannot be shown: {exc}]"
    note = (
        f"[image {image.original_width}×{image.original_height} ({block.mime_type}), shown to you"
        f"{f' at {image.width}×{image.height}' if image.width != image.original_width else ''}]"
    )
    return {
        "is_image": True,
        "base64": base64.b64encode(image.data).decode("ascii"),
        "media_type": image.media_type,
        "width": image.width,
        "height": image.height,
    }, note


def _resource(resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents) -> str:
    mime = f" ({resource.mime_type})" if resource.mime_type else ""
    if isinstance(resource, mcp_types.TextResourceContents):
        return f"[resource {resource.uri}{mime}]\n{resource.text}"
    return f"[resource {resource.uri}{mime}: {_decoded_size(resource.blob)} bytes of binary data, not shown]"


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")
