"""`navi chat`: a streaming terminal client of a running Navi (this machine's or another).

In a terminal it is a full chat (`repl`, `app`); with stdin or stdout not a terminal it sends what
stdin holds and prints the answer's text (`pipe`). Both speak Navi's public API only (REST and the
session WebSocket), like the web page.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from navi.cli.common import fail, settings_or_exit


def history_path(configured: str) -> Path:
    if configured:
        return Path(configured).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "navi" / "chat_history"


def chat(
    session: Annotated[
        str | None,
        typer.Argument(metavar="[SESSION]", help="The conversation to open: its id or the start of it."),
    ] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new conversation.")] = False,
    profile: Annotated[
        str | None, typer.Option("--profile", "-p", help="Profile of a new conversation (e.g. server_admin).")
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(help="Navi's address, http://host:port (default NAVI_URL, else NAVI_HOST:NAVI_PORT)."),
    ] = None,
) -> None:
    """Talk to Navi in the terminal (streaming, tools, approvals); in a pipe, print the answer only.

    The token is NAVI_API_TOKEN, or this machine's Navi's token file (never sent elsewhere).
    `echo "hi" | navi chat --new` prints the answer's text and exits.
    """
    from navi.cli.chat.app import Chat
    from navi.cli.chat.pipe import pipe
    from navi.cli.chat.repl import interact
    from navi.cli.remote import Remote, RemoteError, target_or_exit

    settings = settings_or_exit()
    if settings.log_level != "DEBUG":
        logging.getLogger().setLevel(logging.WARNING)  # log lines would tear the live output
    if session and new:
        fail("give a SESSION or --new, not both")
    target = target_or_exit(settings, url)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    text = "" if interactive else sys.stdin.read()
    if not interactive and not text.strip():
        fail('nothing to send: pipe a message in, e.g. echo "hello" | navi chat --new')

    async def run() -> int:
        async with Remote(target) as remote:
            if not interactive:
                if session:
                    sid = await remote.find_session(session)
                else:
                    sid = str((await remote.create(profile))["session_id"])
                return await pipe(remote, sid, text)
            from rich.console import Console

            chat_app = Chat(
                remote,
                Console(highlight=False),
                profile=profile,
                history_file=history_path(settings.navi_chat_history_file),
            )
            return await interact(chat_app, session, new)

    try:
        code = asyncio.run(run())
    except RemoteError as exc:
        fail(str(exc), 1)
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command()(chat)
