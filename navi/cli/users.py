"""`navi users add|list|remove`: who besides the owner may use this Navi, straight in the database.

They need no running Navi, and a running one sees the change with the next request: a new user's
token works at once, a removed user's stops working at once. A removed user's open WebSockets are
closed too (navi/api/sockets.py): at once on PostgreSQL, where the removal is announced to every
worker, and within NAVI_SOCKET_RECHECK_SECONDS beside a SQLite Navi (another process hears nothing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer

from navi.cli.common import PLAIN_HELP, echo_list, fail, settings_or_exit
from navi.users.store import UserError, UserStore, check_name

T = TypeVar("T")
app = typer.Typer(
    help="Add, list and remove users (each with their own sessions, files and memory).",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)


def with_users(
    work: Callable[[UserStore], Awaitable[T]], *, writes: bool = False, revoking: str | None = None
) -> T | None:
    """Run `work` against the configured database (None: a read found no database yet). With
    `revoking`, a user whose tokens `work` revoked when it returned true: on PostgreSQL every
    worker is told, and closes that user's sockets."""
    from navi.compose import SetupError
    from navi.compose.database import open_database
    from navi.storage.stores import build_stores

    settings = settings_or_exit()

    async def run() -> T | None:
        db = await open_database(settings, create=writes)
        if db is None:
            return None
        try:
            done = await work(build_stores(db, files_dir=settings.session_files_dir).users)
            if done and revoking is not None and db.dialect == "postgresql":
                from navi.runs.feed import revoked_note
                from navi.runs.pg import announce

                await announce(db, revoked_note(revoking))
            return done
        finally:
            await db.dispose()

    try:
        return asyncio.run(run())
    except (SetupError, UserError) as exc:
        fail(str(exc), 2 if isinstance(exc, SetupError) else 1)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The user's name (their owner id).")],
    proxy: Annotated[
        bool, typer.Option("--proxy", help="A trusted reverse proxy: may name the user (X-User-Id).")
    ] = False,
) -> None:
    """Add a user and print their token (once: Navi keeps only its digest)."""
    try:
        check_name(name)  # before a database is made for nothing
    except UserError as exc:
        fail(str(exc), 1)
    added = with_users(lambda store: store.add(name, "proxy" if proxy else "user"), writes=True)
    assert added is not None
    user, token = added
    typer.echo(token)
    typer.echo(
        f"Added {user.role} {user.name!r}. This token is shown only now: give it to them "
        "(Authorization: Bearer …).",
        err=True,
    )


@app.command("list")
def list_users(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Users, by name (never their tokens)."""
    echo_list(
        with_users(lambda store: store.list()) or [],
        as_json=as_json,
        empty="No users yet (the owner's token is NAVI_API_TOKEN).",
        line=lambda user: f"{user.name:<24} {user.role:<6} {user.created_at:%Y-%m-%d %H:%M}",
    )


@app.command("remove")
def remove(name: Annotated[str, typer.Argument(metavar="NAME", help="The user to remove.")]) -> None:
    """Remove a user: their token and sign-ins stop working at once, their open connections are
    closed. Their sessions and memory stay."""
    if not with_users(lambda store: store.remove(name), revoking=name):
        fail(f"no user {name!r} (see `navi users list`)", 1)
    typer.echo(f"Removed {name!r}.")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="users")
