"""`navi usage`: what a user's conversations cost — tokens and, where a model has a price, USD —
summed from the stored answers, per conversation and overall (the same report as `GET /usage`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from navi.cli.common import fail
from navi.cli.sessions import _day
from navi.cli.stores import UserOption, known_user, with_stores


def _cost(cost: float | None) -> str:
    return "-" if cost is None else f"${cost:.4f}"


def _line(label: str, totals: Any) -> str:
    estimated = "~" if totals.estimated else " "
    return (
        f"{totals.messages:>6} {totals.prompt_tokens:>12,} {totals.completion_tokens:>12,} "
        f"{totals.total_tokens:>12,}{estimated}{_cost(totals.cost):>12}  {label}"
    )


def usage(
    since: Annotated[
        str | None, typer.Option("--since", metavar="YYYY-MM-DD", help="Answers on or after this day (UTC).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="YYYY-MM-DD", help="Answers on or before this day (UTC).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (what GET /usage returns).")] = False,
    user: UserOption = "local",
) -> None:
    """Tokens and cost of your conversations: per conversation (most tokens first) and in all,
    summed from every stored answer and tool-calling step. Costs need LLM_PRICE_PER_MTOK; `~` marks
    counts that are partly Navi's estimate."""
    from datetime import UTC, date, datetime, time, timedelta

    first, last = _day(since, "--since"), _day(until, "--until")
    if first and last and first > last:
        fail("--since is after --until", 1)

    async def work(rt: Any) -> Any:
        return await rt.sessions.usage(
            owner=await known_user(rt, user),
            since=datetime.combine(first, time(), tzinfo=UTC) if first else None,
            until=datetime.combine(last + timedelta(days=1), time(), tzinfo=UTC)
            if last and last < date.max
            else None,
        )

    report = with_stores(work)
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    if not report.conversations:
        typer.echo("No answers with usage yet.")
        return
    header = f"{'msgs':>6} {'prompt':>12} {'completion':>12} {'total':>12} {'cost':>12}  conversation"
    typer.echo(header)
    for conversation in report.conversations:
        typer.echo(_line(f"{conversation.name or '(untitled)'}  [{conversation.session_id}]", conversation))
    typer.echo(_line("all conversations", report.total))


def register(app: typer.Typer) -> None:
    app.command()(usage)
