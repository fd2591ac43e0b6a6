"""`navi` entry point: builds the Typer app from the command modules.

The helpers the commands share (`fail`, `settings_or_exit`, `echo_list`, `PLAIN_HELP`) live in
`navi.cli.common`, which the commands import; nothing imports this module back.
"""

from __future__ import annotations

import sys

import typer

from navi.cli.common import PLAIN_HELP

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


def _register() -> None:
    from navi.cli import (
        browser,
        channels,
        chat,
        config,
        docs,
        doctor,
        fake,
        mcp,
        memory,
        models,
        schedules,
        serve,
        sessions,
        skills,
        tools,
        usage,
        users,
    )

    serve.register(app)
    chat.register(app)
    doctor.register(app)
    sessions.register(app)
    memory.register(app)
    docs.register(app)
    tools.register(app)
    skills.register(app)
    browser.register(app)
    users.register(app)
    usage.register(app)
    models.register(app)
    schedules.register(app)
    channels.register(app)
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
