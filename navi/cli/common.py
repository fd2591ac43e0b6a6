"""What every `navi` command shares: stopping with one line, loading settings, printing a listing.

The command modules import these from here; `navi.cli.main` (the Typer app) imports the command
modules, never the other way round.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import typer

from navi.config import Settings, SettingsError, load_settings

# Plain click help, not Rich panels: this Typer's panels print a type such as `<bool>` beside every
# flag (`--json <bool>`, even `--help <bool>`), as if it took a value. Every group sets this.
PLAIN_HELP = None


def fail(message: str, code: int = 2) -> NoReturn:
    """Stop with one line on stderr. Exit 2 is a configuration problem, 1 anything else."""
    typer.echo(f"navi: {message}", err=True)
    raise typer.Exit(code)


def echo_list(
    items: Sequence[Any],
    *,
    as_json: bool,
    empty: str,
    line: Callable[[Any], str],
    record: Callable[[Any], Any] = lambda item: item,
) -> None:
    """Print a listing command's answer: JSON (each item's `record(item)` model) for programs, or
    one `line(item)` per item — or `empty` when there is nothing — for people."""
    if as_json:
        data = [record(item).model_dump(mode="json") for item in items]
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif not items:
        typer.echo(empty)
    else:
        for item in items:
            typer.echo(line(item))


def settings_or_exit(**overrides: object) -> Settings:
    """Load settings, or print which variable is wrong and exit 2.

    Logging is set up here for every command, on stderr, so what a command prints on stdout (JSON
    from `navi sessions list --json`, an archive from `navi sessions export`) stays clean.
    """
    from navi.logging import configure_logging

    try:
        settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    except SettingsError as exc:
        fail(str(exc))
    configure_logging(settings.log_level, settings.log_format)
    # Alembic lists its plugins at INFO when first imported; a command that imports it after this
    # point (doctor) would print seven lines of that before its own.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    return settings


def takes_options(options: dict[str, Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the keyword options of a table (name → `Annotated[type, typer.Option(...)]`,
    each defaulting to None), collected in its `**options`. Typer reads a command's options off its
    signature; this signature is made from the table, so a command with many options takes them as
    one record instead of one parameter each."""
    import inspect
    from typing import get_type_hints

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = inspect.signature(command, eval_str=True)
        kinds = inspect.Parameter
        kept = [p for p in own.parameters.values() if p.kind is not kinds.VAR_KEYWORD]
        added = [
            kinds(name, kinds.KEYWORD_ONLY, annotation=kind, default=None) for name, kind in options.items()
        ]
        first = [p for p in kept if p.kind is not kinds.KEYWORD_ONLY]  # then the table, then the rest
        last = [p for p in kept if p.kind is kinds.KEYWORD_ONLY]
        command.__signature__ = own.replace(parameters=[*first, *added, *last])  # type: ignore[attr-defined]
        command.__annotations__ = {**get_type_hints(command, include_extras=True), **options}
        return command

    return decorate
