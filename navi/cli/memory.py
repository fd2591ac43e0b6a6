"""`navi memory list|search|add|edit|history|forget`: what Navi remembers about you, straight from
the database.

The owner's memory (`local`) unless `--user NAME` names another user's (which names count:
`navi.cli.sessions.known_user`)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP
from navi.cli.stores import UserOption, known_user, with_stores

app = typer.Typer(help="What Navi remembers about you.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP)


def _print(facts: list[Any], query: str = "") -> None:
    if not facts:
        typer.echo(f"Nothing remembered matches '{query}'." if query else "Nothing remembered.")
        return
    for fact in facts:
        typer.echo(f"{fact.id:>6}  {fact.category}: {fact.key} = {fact.value}  ({fact.updated_at:%Y-%m-%d})")


@app.command("list")
def list_facts(
    summary: Annotated[bool, typer.Option("--summary", help="Also print the summary.")] = False,
    user: UserOption = "local",
) -> None:
    """Every remembered fact, by category."""

    async def work(rt: Any) -> tuple[list[Any], str | None]:
        owner = await known_user(rt, user)
        return await rt.memory.get_all_facts(owner=owner), await rt.memory.get_summary(owner=owner)

    facts, text = with_stores(work)
    _print(facts)
    if summary:
        typer.echo(f"\nSummary:\n{text or '(none yet)'}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="WORDS", help="Words to look for.")],
    limit: Annotated[int, typer.Option(help="At most this many.")] = 15,
    user: UserOption = "local",
) -> None:
    """Facts matching any of the words, best first."""

    async def work(rt: Any) -> list[Any]:
        return list(await rt.memory.search_facts(query, owner=await known_user(rt, user), limit=limit))

    _print(with_stores(work), query)


async def _refresh(rt: Any, owner: str) -> str | None:
    """Rewrite the memory summary; why the model could not write it, if it could not (said to the
    user in words by `_noted`, not as the server's log line)."""
    extractor_log = logging.getLogger("navi.memory.extractor")
    level = extractor_log.level
    extractor_log.setLevel(max(level, logging.ERROR))
    try:
        failed: str | None = await rt.extractor.refresh_summary(owner)
        return failed
    finally:
        extractor_log.setLevel(level)


def _noted(failed: str | None) -> None:
    if failed:
        typer.echo(
            "navi: the model could not write the memory summary Navi reads at the start of a "
            f"conversation ({failed}); it was made from the facts alone.",
            err=True,
        )


def _refuse(message: str, code: int = 1) -> None:
    typer.echo(f"navi: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def add(
    category: Annotated[str, typer.Argument(help="What kind of fact (e.g. location).")],
    key: Annotated[str, typer.Argument(help="What about it (e.g. home_city).")],
    value: Annotated[str, typer.Argument(help="The value (e.g. Porto).")],
    user: UserOption = "local",
) -> None:
    """Remember a fact; a new value for the same category and key replaces the old one."""

    async def work(rt: Any) -> tuple[Any, str, str | None] | str:
        owner = await known_user(rt, user)
        try:
            fact, outcome = await rt.memory.upsert_fact(category, key, value, owner=owner, source="added")
        except ValueError as exc:
            return str(exc)
        failed = await _refresh(rt, owner) if outcome != "confirmed" else None
        return fact, outcome, failed

    done = with_stores(work, writes=True)  # a first fact creates the database
    if isinstance(done, str):
        _refuse(done, 2)
        return
    fact, outcome, failed = done
    verb = {"created": "Remembered", "updated": "Updated", "confirmed": "Already remembered"}[outcome]
    typer.echo(f"{verb}: {fact.id}  {fact.category}: {fact.key} = {fact.value}")
    _noted(failed)


@app.command()
def edit(
    fact_id: Annotated[int, typer.Argument(metavar="ID", help="The fact's id (`navi memory list`).")],
    value: Annotated[str, typer.Argument(help="The new value.")],
    user: UserOption = "local",
) -> None:
    """Give a fact a new value; the old one is kept in its history."""

    async def work(rt: Any) -> tuple[Any, str, str | None]:
        owner = await known_user(rt, user)
        try:
            changed = await rt.memory.edit_fact(fact_id, value, owner=owner)
        except ValueError as exc:
            return 2, str(exc), None
        if changed is None:
            return 1, f"no current fact {fact_id} — `navi memory list` shows them", None
        failed = await _refresh(rt, owner) if changed[1] != "confirmed" else None
        return changed[0], changed[1], failed

    fact, outcome, failed = with_stores(work, writes=True)
    if isinstance(fact, int):
        _refuse(outcome, fact)
    said = "Unchanged" if outcome == "confirmed" else "Edited"
    typer.echo(f"{said}: {fact.id}  {fact.category}: {fact.key} = {fact.value}")
    _noted(failed)


@app.command()
def history(
    fact_id: Annotated[int, typer.Argument(metavar="ID", help="The fact's id.")],
    user: UserOption = "local",
) -> None:
    """A fact's former values, newest first, with when they held and where they came from."""

    async def work(rt: Any) -> tuple[Any, list[Any]]:
        owner = await known_user(rt, user)
        return await rt.memory.get_fact(fact_id, owner=owner), await rt.memory.fact_history(
            fact_id, owner=owner
        )

    fact, former = with_stores(work)
    if fact is None:
        _refuse(f"no fact {fact_id} — `navi memory list` shows them")
    typer.echo(f"{fact.id}  {fact.category}: {fact.key} = {fact.value}  (since {fact.created_at:%Y-%m-%d})")
    if not former:
        typer.echo("No former values.")
    for old in former:
        origin = f", {old.source}" + (f" in session {old.session_id}" if old.session_id else "")
        typer.echo(f"  was {old.value}  ({old.created_at:%Y-%m-%d} to {old.retired_at:%Y-%m-%d}{origin})")


@app.command()
def forget(
    key: Annotated[
        str, typer.Argument(metavar="KEY", help="The fact's key (e.g. home_city), or its id with --id.")
    ],
    category: Annotated[str | None, typer.Option(help="Only in this category.")] = None,
    by_id: Annotated[bool, typer.Option("--id", help="KEY is a fact id.")] = False,
    user: UserOption = "local",
) -> None:
    """Forget facts by key (optionally within a category), or one fact by id."""

    async def work(rt: Any) -> tuple[int, str | None]:
        owner = await known_user(rt, user)
        if by_id:
            if not key.isdigit():
                return -1, None
            count = int(await rt.memory.delete_fact_by_id(int(key), owner=owner))
        else:
            count = await rt.memory.delete_fact(key, category, owner=owner)
        return int(count), await _refresh(rt, owner) if count > 0 else None

    count, failed = with_stores(work)
    if count < 0:
        typer.echo(f"navi: --id needs a fact's number, not '{key}' — `navi memory list` shows them", err=True)
        raise typer.Exit(2)
    if count == 0:
        typer.echo(f"navi: nothing remembered under '{key}' — `navi memory list` shows what is", err=True)
        raise typer.Exit(1)
    typer.echo(f"Forgot {count} fact{'s' if count > 1 else ''}.")
    _noted(failed)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="memory")
