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


def mcp_login(name: str = typer.Argument(..., help="The server's name in MCP_SERVERS_FILE")) -> None:
    """Sign Navi in to a remote MCP server that uses OAuth (`"oauth": true` in its entry)."""
    from navi.compose import SetupError
    from navi.compose.parts import mcp_servers
    from navi.mcp.config import tokens_file
    from navi.mcp.oauth import sign_in

    settings = settings_or_exit()
    try:
        servers = {s.name: s for s in mcp_servers(settings)}
    except SetupError as exc:
        fail(str(exc))
    config = servers.get(name)
    if config is None:
        fail(f"no MCP server '{name}' in MCP_SERVERS_FILE ({', '.join(servers) or 'none configured'})")
    if not config.oauth:
        fail(f"the MCP server '{name}' does not use OAuth: add \"oauth\": true to its entry (docs/mcp.md)")

    async def show(url: str) -> None:
        typer.echo(f"Open this address to sign Navi in to '{name}':\n\n  {url}\n\nWaiting for the sign-in…")

    try:
        tools = asyncio.run(sign_in(config, tokens_file(settings.db_path), show))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        fail(f"signing in to '{name}' failed: {exc}")
    typer.echo(f"Signed in to '{name}': {len(tools)} tools. The token is in {tokens_file(settings.db_path)}.")


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
    app.command("mcp-login")(mcp_login)
