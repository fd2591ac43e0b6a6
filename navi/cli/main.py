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


# The command modules, in the order `navi --help` lists them, with the commands each adds.
MODULES: dict[str, tuple[str, ...]] = {
    "serve": ("serve", "token"),
    "chat": ("chat",),
    "doctor": ("doctor",),
    "sessions": ("sessions",),
    "memory": ("memory",),
    "docs": ("docs",),
    "tools": ("tools",),
    "skills": ("skills",),
    "browser": ("browser",),
    "users": ("users",),
    "usage": ("usage",),
    "models": ("models",),
    "schedules": ("schedules",),
    "channels": ("channels",),
    "config": ("config",),
    "mcp": ("mcp", "mcp-login"),
    "fake": ("fake-model",),
}


def _register(argv: list[str] | None = None) -> None:
    """Add the commands to `app`: only the module of the command `argv` names, when it names one
    (a command then imports what it needs and not every other command's: a fifth of a `navi
    sessions list` was importing the rest); all of them for help, a bare `navi`, an unknown name
    or no `argv`."""
    import importlib

    named = next((arg for arg in argv or () if not arg.startswith("-")), None)
    wanted = [m for m, commands in MODULES.items() if named in commands] or list(MODULES)
    for module in wanted:
        importlib.import_module(f"navi.cli.{module}").register(app)


def main() -> None:
    _register(sys.argv[1:])
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
