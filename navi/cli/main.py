"""`navi` entry point: builds the Typer app from the command modules."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import typer

from navi.config import Settings, SettingsError, load_settings

# Plain click help, not Rich panels: this Typer's panels print a type such as `<bool>` beside every
# flag (`--json <bool>`, even `--help <bool>`), as if it took a value. Every group sets this.
PLAIN_HELP = None

app = typer.Typer(
    name="navi",
    help="Navi — a self-hosted personal AI agent.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=PLAIN_HELP,
)


def _version(value: bool) -> None:
    if value:
        from navi import __version__

        typer.echo(f"navi {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print Navi's version and exit."
    ),
) -> None:
    """Navi — a self-hosted personal AI agent."""


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


def _register() -> None:
    from navi.cli import chat, config, doctor, fake, mcp, memory, schedules, serve, sessions, tools, users

    serve.register(app)
    chat.register(app)
    doctor.register(app)
    sessions.register(app)
    memory.register(app)
    tools.register(app)
    users.register(app)
    schedules.register(app)
    config.register(app)
    mcp.register(app)
    fake.register(app)


def main() -> None:
    _register()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        from navi.compose.problems import SetupError  # already loaded whenever one was raised

        if not isinstance(exc, SetupError):
            raise
        # A setting points at something Navi cannot use: one line, no traceback.
        print(f"navi: {exc}", file=sys.stderr)
        sys.exit(2)
