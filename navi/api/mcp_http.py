"""`/mcp`: Navi's MCP server as streamable HTTP in Navi's own app, built on the route's first request.

Building the server — the SDK imported, each tool's input and output schema made from its
signature — costs about a third of a second of CPU, at every start of every worker, for a route
most installs never call. So the route is a small ASGI app that builds it when `/mcp` is first
asked for: `navi/api/mcp_server.py` makes the server and its session manager, which runs in a task
of its own until the app stops (`aclose`, from the app's lifespan). Requests are checked by Navi's
access control before they reach it, like every route's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

MCP_PATH = "/mcp"
Asgi = Callable[[Any, Any, Any], Awaitable[None]]


class McpRoute:
    """The ASGI app at `/mcp`. `host()` gives what the tools act through (a `NaviHost`), read when
    the server first needs it; `max_body_bytes` caps a request's body."""

    def __init__(self, host: Callable[[], Any], max_body_bytes: int) -> None:
        self._host = host
        self._max_body_bytes = max_body_bytes
        self._ready: asyncio.Future[Asgi] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        endpoint = await self._endpoint()
        await endpoint(scope, receive, send)

    async def _endpoint(self) -> Asgi:
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._serve(self._ready), name="mcp-http")
        return await asyncio.shield(self._ready)

    async def _serve(self, ready: asyncio.Future[Asgi]) -> None:
        """The session manager's task group lives in this task, from the first request to `aclose`."""
        from navi.api.mcp_server import http_endpoint

        try:
            manager, endpoint = http_endpoint(self._host, MCP_PATH, self._max_body_bytes)
            async with manager.run():
                ready.set_result(endpoint)
                await self._closed.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(
                    exc if isinstance(exc, Exception) else RuntimeError("the MCP server stopped")
                )
            raise

    async def aclose(self) -> None:
        """Stop the server, if a request ever built it."""
        self._closed.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
