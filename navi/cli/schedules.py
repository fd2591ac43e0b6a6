"""`navi schedules list|add|pause|resume|remove|run`.

`list`, `add`, `pause`, `resume` and `remove` work on the configured database, like `navi
sessions`, whether or not Navi runs: a running Navi's runner reads the schedules from the database
every poll, so what these change takes effect within `NAVI_SCHEDULE_POLL_SECONDS`. They act on one
user's schedules: the owner's, or `--user NAME`'s. `run` asks the running Navi
(at --url or NAVI_URL, else this machine's) to run a schedule now, because only a running Navi can
run a turn that a page watching the session sees; it acts as the token's user (the owner's).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP, echo_list, fail, takes_options
from navi.cli.stores import UserOption, known_user, with_stores

app = typer.Typer(
    help="Schedules and reminders: list, add, pause, resume, remove, run now.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)
IdArgument = Annotated[
    str, typer.Argument(metavar="ID", help="The schedule's id (see `navi schedules list`).")
]


def _when(rt: Any, schedule: Any) -> str:
    return str(rt.schedules.describe(schedule))


@app.command("list")
def list_schedules(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False, user: UserOption = "local"
) -> None:
    """The user's schedules, oldest first, with when each runs next (in its zone)."""

    async def work(rt: Any) -> list[tuple[Any, str]]:
        owner = await known_user(rt, user)
        return [(s, _when(rt, s)) for s in await rt.schedules.store.list(owner=owner)]

    def line(found: tuple[Any, str]) -> str:
        schedule, when = found
        state = "paused" if schedule.paused else ("done" if schedule.done else "active")
        sent = f" → {schedule.deliver.channel}:{schedule.deliver.to}" if schedule.deliver else ""
        return f"{schedule.id}  {state:<6}  {schedule.title} — {when}{sent}"

    echo_list(
        with_stores(work),
        as_json=as_json,
        empty="No schedules yet.",
        line=line,
        record=lambda found: found[0],
    )


# `navi schedules add`'s options, one field of the NewSchedule each (--deliver parsed first).
ADD_OPTIONS: dict[str, Any] = {
    "cron": Annotated[str | None, typer.Option(help="Five cron fields, e.g. '0 7 * * 1-5' (in TZ).")],
    "every": Annotated[
        str | None,
        typer.Option(
            metavar="INTERVAL", help="Run every INTERVAL: 30m, 3h, 2h30m, 1d, or seconds (at least 5 s)."
        ),
    ],
    "at": Annotated[str | None, typer.Option(help="One moment: 2026-11-26T09:00 or 'tomorrow 9am' (in TZ).")],
    "title": Annotated[str | None, typer.Option(help="A short title (default: the prompt's start).")],
    "profile": Annotated[str | None, typer.Option(help="The profile it runs in (default: the first).")],
    "session": Annotated[
        str | None, typer.Option(help="Run in this session every time (default: a new session each run).")
    ],
    "missed": Annotated[str | None, typer.Option(help="Runs missed while Navi was down: skip or once.")],
    "deliver": Annotated[
        str | None,
        typer.Option(
            metavar="CHANNEL:TO",
            help="Also send each answer to a channel address on your allowlist: "
            "email:ana@example.org, matrix:!room:example.org.",
        ),
    ],
}


@app.command()
@takes_options(ADD_OPTIONS)
def add(
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="What to ask when it runs.")],
    *,
    user: UserOption = "local",
    **options: str | None,
) -> None:
    """Add a schedule; give exactly one of --cron, --every, --at."""
    from navi.schedules.service import NewSchedule
    from navi.schedules.when import ScheduleError, parse_every

    every, deliver = options["every"], options["deliver"]
    try:
        every_seconds = parse_every(every) if every is not None else None
    except ScheduleError as exc:
        fail(str(exc))
    delivery = None
    if deliver is not None:
        channel, colon, to = deliver.partition(":")
        if not colon or not channel.strip() or not to.strip():
            fail(f"--deliver takes CHANNEL:TO, e.g. email:ana@example.org (got {deliver!r})")
        delivery = {"channel": channel.strip().lower(), "to": to.strip()}

    async def work(rt: Any) -> tuple[Any, str]:
        made = await rt.schedules.create(
            await known_user(rt, user),
            NewSchedule(
                prompt=prompt,
                cron=options["cron"],
                every_seconds=every_seconds,
                at=options["at"],
                title=options["title"],
                profile_id=options["profile"],
                session_id=options["session"],
                missed=options["missed"],
                deliver=delivery,
            ),
        )
        return made, _when(rt, made)

    try:
        made, when = with_stores(work, writes=True)
    except ScheduleError as exc:
        fail(str(exc), 1)
    sent = f"; answers also go to {made.deliver.channel}:{made.deliver.to}" if made.deliver else ""
    typer.echo(f"added {made.id}: {made.title} — {when}{sent}")


def _set_paused(schedule_id: str, paused: bool, user: str) -> None:
    async def work(rt: Any) -> tuple[Any, str] | None:
        changed = await rt.schedules.edit(schedule_id, await known_user(rt, user), {"paused": paused})
        return (changed, _when(rt, changed)) if changed is not None else None

    done = with_stores(work)
    if done is None:
        fail(f"no schedule '{schedule_id}' — `navi schedules list` shows them", 1)
    changed, when = done
    typer.echo(
        f"{'paused' if paused else 'resumed'} {changed.id}: {changed.title}"
        + ("" if paused else f" — {when}")
    )


@app.command()
def pause(schedule_id: IdArgument, user: UserOption = "local") -> None:
    """Pause a schedule: it does not run until resumed."""
    _set_paused(schedule_id, True, user)


@app.command()
def resume(schedule_id: IdArgument, user: UserOption = "local") -> None:
    """Resume a paused schedule from its next instant from now."""
    _set_paused(schedule_id, False, user)


@app.command()
def remove(
    schedule_ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Schedules to delete.")],
    user: UserOption = "local",
) -> None:
    """Delete schedules with their runs."""

    async def work(rt: Any) -> list[str]:
        owner = await known_user(rt, user)
        return [sid for sid in schedule_ids if not await rt.schedules.store.delete(sid, owner=owner)]

    missing = with_stores(work)
    for sid in schedule_ids:
        if sid not in missing:
            typer.echo(f"removed {sid}")
    if missing:
        fail(f"no schedule {', '.join(repr(m) for m in missing)} — `navi schedules list` shows them", 1)


@app.command()
def run(
    schedule_id: IdArgument,
    url: Annotated[
        str | None,
        typer.Option(help="Navi's address, http://host:port (default NAVI_URL, else NAVI_HOST:NAVI_PORT)."),
    ] = None,
) -> None:
    """Ask the running Navi to run a schedule now (its timing stays as it is)."""
    from urllib.parse import quote

    from navi.cli.remote import with_remote

    started: dict[str, Any] = with_remote(
        url, lambda remote: remote.request("POST", f"/schedules/{quote(schedule_id, safe='')}/run")
    )
    typer.echo(f"started run {started['schedule_run_id']} of {started['schedule_id']}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="schedules")
