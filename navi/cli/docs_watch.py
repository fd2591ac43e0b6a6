"""`navi docs watch DIR [--user U] [--once]`: keep a folder in sync with a user's documents.

The folder becomes that user's collection of kind "folder" (`navi.documents.folder.FolderSync`):
scanned now — new and changed files queued for indexing, documents whose file is gone deleted —
then followed for changes until Ctrl-C (or, with `--once`, left after the scan). What is skipped
(hidden files and folders, links out of the folder, unreadable files, files over the size cap,
kinds Navi does not read) is printed with the reason. The files are indexed by a Navi server on
the same database; `KNOWLEDGE_DIRS` makes the server follow folders itself.

Registered on the `navi docs` group by `app.command("watch")(watch)` (navi/cli/docs.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from navi.cli.common import fail
from navi.cli.stores import UserOption, known_user, with_stores


def watch(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="The folder to keep in sync.")],
    user: UserOption = "local",
    once: Annotated[bool, typer.Option("--once", help="Scan the folder once and stop.")] = False,
) -> None:
    """Index a folder's files into your documents and follow it for changes (added, edited,
    renamed, deleted) until Ctrl-C."""
    from navi.documents.folder import FolderSync, Look

    root = folder.expanduser()
    if not root.is_dir():
        fail(f"'{folder}' is not a folder")

    def show(what: str, look: Look) -> None:
        if what == "scan":
            typer.echo(f"{len(look.entries)} file{'s' * (len(look.entries) != 1)} in {root}")
        else:
            for entry in look.entries:
                typer.echo(f"changed: {entry.name}")
        for name, reason in sorted(look.skipped.items()):
            typer.echo(f"skipped: {name} — {reason}")

    async def work(rt: Any) -> str | None:
        if rt.documents is None:
            return "documents need the database (DB_PATH or DATABASE_URL)"
        sync = FolderSync(rt.documents, await known_user(rt, user), root, on_look=show)
        if once:
            await sync.scan()
            return None
        task = asyncio.create_task(sync.run())
        await sync.ready.wait()
        typer.echo(f"following {sync.root} (Ctrl-C to stop)")
        try:
            await task
        finally:
            sync.stop()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return None

    try:
        problem = with_stores(work, writes=True)
    except KeyboardInterrupt:
        return
    if problem:
        fail(problem)
