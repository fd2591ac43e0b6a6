"""`navi memory list|search|forget`: what Navi remembers about you, straight from the database.

The owner's memory (`local`) unless `--user NAME` names another user's (which names count:
`navi.cli.sessions.known_user`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP
from navi.cli.sessions import UserOption, known_user, with_runtime

app = typer.Typer(help="What Navi remembers about you.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP)


def _print(facts: list[Any]) -> None:
    if not facts:
        typer.echo("Nothing remembered.")
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

    facts, text = with_runtime(work)
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

    _print(with_runtime(work))


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

    async def work(rt: Any) -> int:
        owner = await known_user(rt, user)
        if by_id:
            if not key.isdigit():
                return -1
            count = int(await rt.memory.delete_fact_by_id(int(key), owner=owner))
        else:
            count = await rt.memory.delete_fact(key, category, owner=owner)
        if count > 0:
            await rt.extractor.refresh_summary(owner)
        return int(count)

    count = with_runtime(work)
    if count < 0:
        typer.echo(f"navi: --id needs a fact's number, not '{key}' — `navi memory list` shows them", err=True)
        raise typer.Exit(2)
    if count == 0:
        typer.echo(f"navi: nothing remembered under '{key}' — `navi memory list` shows what is", err=True)
        raise typer.Exit(1)
    typer.echo(f"Forgot {count} fact{'s' if count > 1 else ''}.")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="memory")
