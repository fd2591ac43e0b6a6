"""`navi` entry point: builds the Typer app from the command modules."""

from __future__ import annotations

import sys

import typer

from navi.config import Settings, SettingsError, load_settings

app = typer.Typer(
    name="navi",
    help="Navi — a self-hosted personal AI agent.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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


def settings_or_exit(**overrides: object) -> Settings:
    """Load settings, or print which variable is wrong and exit 2.

    Logging is set up here for every command, on stderr, so what a command prints on stdout (JSON
    from `navi sessions list --json`, an archive from `navi sessions export`) stays clean.
    """
    from navi.logging import configure_logging

    try:
        settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    except SettingsError as exc:
        typer.echo(f"navi: {exc}", err=True)
        raise typer.Exit(2) from None
    configure_logging(settings.log_level, settings.log_format)
    return settings


def _register() -> None:
    from navi.cli import doctor, fake, memory, serve, sessions

    serve.register(app)
    doctor.register(app)
    sessions.register(app)
    memory.register(app)
    fake.register(app)


def main() -> None:
    _register()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
