"""How a command that runs no agent gets at the configured data, and whose data it acts on.

`with_stores` opens the stores only (`navi.compose.stores`): no agent, tool, channel or model SDK is
imported until a command calls a model (`navi memory add` rewriting the summary, `navi models
test`): that was most of what a one-shot command paid. `with_runtime` builds the whole runtime, for
`navi sessions export`, whose archive has the agent's prompt and tools and whose analytics the
agent's analyst writes. Both hand `work` something with `sessions`, `memory`, `users`, `documents`,
`profiles`, `schedules`, `extractor` and `embedder`, so `known_user` reads either.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from navi.cli.common import fail, settings_or_exit

if TYPE_CHECKING:
    from navi.config import Settings

T = TypeVar("T")

# What a one-shot command's runtime says at INFO (migrations, the sandbox, the user tools loaded,
# memory's decisions) is news for a server's log and noise around a command's answer.
QUIET = ("alembic.runtime.migration", "navi")


Opener = Callable[["Settings", AsyncExitStack], Awaitable[Any]]


def _run(work: Callable[[Any], Awaitable[T]], opened: Opener) -> T:
    """Run `work` on what `opened` opens on the exit stack (closed once `work` is done), quietly."""
    from navi.compose.problems import SetupError

    settings = settings_or_exit()
    # Only warnings and errors while the command runs; LOG_LEVEL=DEBUG still shows everything.
    quiet = logging.getLogger().getEffectiveLevel() > logging.DEBUG
    levels = {name: logging.getLogger(name).level for name in QUIET}

    async def run() -> T:
        if quiet:
            for name in QUIET:
                logging.getLogger(name).setLevel(logging.WARNING)
        try:
            async with AsyncExitStack() as stack:
                return await work(await opened(settings, stack))
        finally:  # the rest of the process (tests run commands in-process) logs as before
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)

    try:
        return asyncio.run(run())
    except SetupError as exc:
        fail(str(exc))


def with_stores(work: Callable[[Any], Awaitable[T]], *, writes: bool = False) -> T:
    """Run `work` against the configured stores (`navi.compose.stores.OpenStores`).

    Only a command that `writes` creates a missing database; the others read an empty one instead.
    """

    async def opened(settings: Settings, stack: AsyncExitStack) -> Any:
        from navi.compose.stores import open_stores

        telemetry = None
        if settings.otel_exporter_otlp_endpoint:  # the model calls a command makes traced, as a server's
            from navi.compose.telemetry import build_telemetry

            telemetry = build_telemetry(settings)
        return await open_stores(settings, stack, create_database=writes, telemetry=telemetry)

    return _run(work, opened)


def with_runtime(work: Callable[[Any], Awaitable[T]], *, writes: bool = False) -> T:
    """Run `work` against the whole runtime, for a command that calls a model through it.

    Only a command that `writes` creates a missing database. No command creates the tools folder
    (that is `navi serve`'s first start), starts an MCP server or loads the user's tools.
    """

    async def opened(settings: Settings, stack: AsyncExitStack) -> Any:
        from navi.compose import build_runtime

        runtime = await build_runtime(settings, create_database=writes, seed_tools=False, runs_agents=False)
        stack.push_async_callback(runtime.aclose)
        return runtime

    return _run(work, opened)


UserOption = Annotated[
    str,
    typer.Option(
        "--user",
        metavar="NAME",
        help="Act on this user's sessions, memory or schedules (default: the owner, local).",
    ),
]


async def known_user(rt: Any, name: str) -> str:
    """`name` when it is the owner, a user of `navi users add`, or a name that owns sessions,
    memory facts or document collections (a user a proxy forwarded for); otherwise stop with one
    line (exit 2)."""
    from navi.sessions.models import DEFAULT_OWNER
    from navi.users.store import NAME_PATTERN

    if name == DEFAULT_OWNER:
        return name
    if not NAME_PATTERN.fullmatch(name):
        fail(f"'{name}' is not a user name — `navi users list` shows them")
    if (
        await rt.users.get(name) is not None
        or await rt.sessions.list(owner=name)
        or await rt.memory.get_all_facts(owner=name, limit=1)
        or (rt.documents is not None and await rt.documents.list_collections(name))
    ):
        return name
    fail(f"no user '{name}' — `navi users list` shows them")
