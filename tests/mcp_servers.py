"""MCP servers for the tests, written with the official `mcp` SDK.

`HttpMcpServer`: a streamable-HTTP server on 127.0.0.1 (uvicorn in a thread, a free port) whose
tools cover what Navi maps: a slow one that records that it was cancelled, one returning an image,
one an embedded resource (text and blob), one failing with isError, and `grow`, which adds a tool
at runtime and sends `notifications/tools/list_changed`.

`mcp_stdio_server.py` beside this file is the stdio one (its process can be killed).
"""

from __future__ import annotations

import base64
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from PIL import Image

from navi.testing.threaded import ThreadedServer

STDIO_SERVER = Path(__file__).with_name("mcp_stdio_server.py")


def png(width: int = 40, height: int = 30, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


class HttpMcpServer:
    def __init__(self) -> None:
        self.slow_started = threading.Event()
        self.slow_cancelled = threading.Event()
        self.slow_finished = threading.Event()
        self.calls: list[str] = []
        self.server = MCPServer("navi-test-http")
        self._add_tools()
        self.app = self.server.streamable_http_app()
        self.http = ThreadedServer(self.app, name="mcp-http", lifespan=True)

    @property
    def url(self) -> str:
        return f"{self.http.url}/mcp"

    def _add_tools(self) -> None:
        server = self.server

        @server.tool()
        async def slow(seconds: float) -> str:
            """Wait `seconds`, then say so."""
            self.calls.append("slow")
            self.slow_started.set()
            try:
                await anyio.sleep(seconds)
            except anyio.get_cancelled_exc_class():
                self.slow_cancelled.set()
                raise
            self.slow_finished.set()
            return f"waited {seconds} s"

        @server.tool()
        def picture() -> list[Any]:
            """A small red picture."""
            data = base64.b64encode(png()).decode("ascii")
            return [
                mcp_types.TextContent(text="here is the picture"),
                mcp_types.ImageContent(data=data, mime_type="image/png"),
            ]

        @server.tool()
        def document() -> list[Any]:
            """A document and an attachment, as embedded resources."""
            text = mcp_types.TextResourceContents(
                uri="memo://plan", mime_type="text/markdown", text="# Plan\nShip on Friday."
            )
            blob = mcp_types.BlobResourceContents(
                uri="memo://logo",
                mime_type="application/octet-stream",
                blob=base64.b64encode(b"\0" * 12).decode(),
            )
            return [mcp_types.EmbeddedResource(resource=text), mcp_types.EmbeddedResource(resource=blob)]

        @server.tool()
        def broken(reason: str) -> str:
            """Always fails."""
            raise ToolError(f"cannot do that: {reason}")

        @server.tool()
        async def grow(ctx: Context) -> str:
            """Add the tool `extra` and tell the client the list changed."""

            def extra(word: str) -> str:
                """Echo a word."""
                return f"extra says {word}"

            server.add_tool(extra, name="extra")
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await ctx.notify_tools_changed()  # to `subscriptions/listen` streams
            else:
                await ctx.session.send_tool_list_changed()
            return "added extra"

    def start(self) -> None:
        self.http.start()

    def stop(self) -> None:
        self.http.stop()


@contextmanager
def http_mcp_server() -> Iterator[HttpMcpServer]:
    server = HttpMcpServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def stdio_entry(**extra: Any) -> dict[str, Any]:
    """An `mcpServers` entry for `mcp_stdio_server.py`."""
    return {"command": sys.executable, "args": [str(STDIO_SERVER)], **extra}


def bin_path(name: str) -> str:
    """A console script installed beside the interpreter (mcp-server-time, mcp-server-git)."""
    return str(Path(sys.executable).with_name(name))
