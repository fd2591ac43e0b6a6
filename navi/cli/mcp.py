"""`navi mcp`: Navi as an MCP server over stdio, for desktop clients and agents that launch it.

The runtime is built in this process on the configured settings and database (the same ones a
running `navi serve` uses: both can run at once, and a session either one answers is the other's
too), and every call acts as the owner. Standard output is the protocol: the SDK points file
descriptor 1 at stderr while it serves, and the runtime is built and closed inside that (in the
server's lifespan), so no log line, warning or child's output can land among the messages. Logs go
to stderr. The server ends when the client closes standard input.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import typer

from navi.cli.common import fail, settings_or_exit
from navi.config import Settings


async def serve_stdio(settings: Settings) -> None:
    from navi.api.mcp_server import NaviHost, build_server
    from navi.compose.services import services_factory
    from navi.sessions.models import DEFAULT_OWNER

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[NaviHost]:
        # The same services `navi serve` runs, less the schedule runner and background loops: those
        # are the server's.
        services = await services_factory(settings, schedules=False, background=False)()
        await services.start()
        try:
            yield NaviHost(
                runtime=services.runtime,
                runs=services.runs,
                approvals=settings.navi_mcp_approvals,
                max_message_bytes=settings.navi_max_request_bytes,
                user=DEFAULT_OWNER,
            )
        finally:
            await services.stop()  # runs stopped cooperatively (each saves what it has), runtime closed

    await build_server(lifespan).run_stdio_async()


def _setup_problem(exc: BaseException) -> BaseException | None:
    """The `SetupError` behind `exc` (the SDK's task groups wrap what the lifespan raised)."""
    from navi.compose import SetupError

    if isinstance(exc, SetupError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _setup_problem(inner)
            if found is not None:
                return found
    return None


def mcp() -> None:
    """Serve Navi's MCP tools (ask, list_sessions, search_memory) over stdio, as the owner."""
    settings = settings_or_exit()
    try:
        asyncio.run(serve_stdio(settings))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        problem = _setup_problem(exc)
        if problem is None:
            raise
        fail(str(problem))


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
