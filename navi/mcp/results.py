"""An MCP `tools/call` result mapped onto Navi's `ToolResult`, block by block, never passed through.

Text blocks are the output; the first image goes into the model's context like `image_view`'s
(verified and downsized with Pillow; later ones are named in the text); an embedded resource's text
is included under its URI, a binary one is a note; audio and resource links are notes; `isError` is
a failed call with the server's text as the error.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from typing import Any

import mcp_types

from navi.tools.base import ToolResult
from navi.tools.builtin.image import NotAnImage, prepare_image

MAX_IMAGE_SIDE = 1568


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
