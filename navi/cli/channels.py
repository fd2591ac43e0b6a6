"""`navi channels allow|list|deny`: who may talk to Navi through a channel, straight in the database.

Nobody may until listed: `navi channels allow email ana@example.org --user ana` answers Ana's mail
as the Navi user `ana` (the owner is `local`). A running Navi sees a change with the next message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from navi.cli.common import PLAIN_HELP, echo_list, fail, settings_or_exit

if TYPE_CHECKING:
    from navi.channels.store import ChannelStore
    from navi.users.store import UserStore

T = TypeVar("T")
app = typer.Typer(
    help="Who may talk to Navi through a channel (email, matrix), and as which Navi user.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)
Channel = Annotated[str, typer.Argument(metavar="CHANNEL", help="The channel: email or matrix.")]
Address = Annotated[
    str,
    typer.Argument(
        metavar="ADDRESS", help="The sender's address (email: ana@example.org; matrix: @ana:example.org)."
    ),
]


def with_channels(work: Callable[..., Awaitable[T]], *, writes: bool = False) -> T | None:
    """Run `work(channel store, user store)` against the configured database (None: a read found
    no database yet)."""
    from navi.channels.store import ChannelError
    from navi.compose import SetupError
    from navi.compose.channels import channel_store
    from navi.compose.database import open_database
    from navi.storage.stores import build_stores

    settings = settings_or_exit()

    async def run() -> T | None:
        db = await open_database(settings, create=writes)
        if db is None:
            return None
        try:
            return await work(channel_store(db), build_stores(db, files_dir=settings.session_files_dir).users)
        finally:
            await db.dispose()

    try:
        return asyncio.run(run())
    except (SetupError, ChannelError) as exc:
        fail(str(exc), 2 if isinstance(exc, SetupError) else 1)


def _address(channel: str, address: str) -> tuple[str, str]:
    from navi.compose.channels import normalize

    try:
        return normalize(channel, address)
    except ValueError as exc:
        fail(str(exc), 1)


@app.command("allow")
def allow(
    channel: Channel,
    address: Address,
    user: Annotated[
        str, typer.Option("--user", help="The Navi user who answers as (the owner: local).")
    ] = "local",
) -> None:
    """Let ADDRESS talk to Navi through CHANNEL, as the Navi user --user."""
    from navi.sessions.models import DEFAULT_OWNER

    channel, address = _address(channel, address)

    async def work(store: ChannelStore, users: UserStore) -> Any:
        if user != DEFAULT_OWNER and await users.get(user) is None:
            fail(f"no user {user!r} (see `navi users list`; the owner is {DEFAULT_OWNER!r})", 1)
        return await store.allow(channel, address, user)

    entry = with_channels(work, writes=True)
    assert entry is not None
    typer.echo(f"Allowed {entry.address} on {entry.channel}, answered as {entry.user!r}.")


@app.command("list")
def list_allowed(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Every address allowed, by channel."""

    async def work(store: ChannelStore, users: UserStore) -> Any:
        return await store.allowed()

    echo_list(
        with_channels(work) or [],
        as_json=as_json,
        empty="Nobody may talk to Navi through a channel yet (navi channels allow …).",
        line=lambda e: f"{e.channel:<10} {e.address:<40} {e.user:<16} {e.created_at:%Y-%m-%d %H:%M}",
    )


@app.command("deny")
def deny(channel: Channel, address: Address) -> None:
    """Take ADDRESS off the list: its messages get no answer from now on."""
    channel, address = _address(channel, address)

    async def work(store: ChannelStore, users: UserStore) -> Any:
        return await store.deny(channel, address)

    if not with_channels(work):
        fail(f"{address} is not allowed on {channel} (see `navi channels list`)", 1)
    typer.echo(f"Denied {address} on {channel}.")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="channels")
