"""`navi tools list|show|reload`: the tools a running Navi offers, and reloading the user tools.

These ask the running Navi (like `navi chat`, at --url or NAVI_URL, else this machine's), because
that is where user tools are loaded: its tool host runs them sandboxed, and `reload` replaces what
it loaded with what the tools folder holds now.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from navi.cli.common import PLAIN_HELP, fail

app = typer.Typer(
    help="The tools a running Navi offers; reload the user tools.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN_HELP,
)

UrlOption = Annotated[
    str | None,
    typer.Option(help="Navi's address, http://host:port (default NAVI_URL, else NAVI_HOST:NAVI_PORT)."),
]


def _first_line(text: str, limit: int = 90) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


@app.command("list")
def list_tools(
    url: UrlOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (with each tool's schema).")] = False,
) -> None:
    """Every tool, built-in, user and MCP servers' (mcp:SERVER), with the first line of its description."""
    from navi.cli.remote import with_remote

    tools: list[dict[str, Any]] = with_remote(url, lambda remote: remote.tools())
    if as_json:
        typer.echo(json.dumps(tools, indent=2, ensure_ascii=False))
        return
    width = max((len(t["name"]) for t in tools), default=4)
    kinds = [_kind(t) for t in tools]
    kind_width = max((len(k) for k in kinds), default=8)
    for tool, kind in sorted(zip(tools, kinds, strict=True), key=lambda tk: (_order(tk[0]), tk[0]["name"])):
        typer.echo(f"{tool['name']:<{width}}  {kind:<{kind_width}}  {_first_line(tool['description'])}")


def _kind(tool: dict[str, Any]) -> str:
    if tool.get("server"):
        return f"mcp:{tool['server']}"
    return "built-in" if tool["builtin"] else "user"


def _order(tool: dict[str, Any]) -> int:
    return 0 if tool["builtin"] else (2 if tool.get("server") else 1)


@app.command()
def show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The tool's name (see `navi tools list`).")],
    url: UrlOption = None,
) -> None:
    """A tool's description and the JSON Schema of its parameters."""
    from navi.cli.remote import with_remote

    tools: list[dict[str, Any]] = with_remote(url, lambda remote: remote.tools())
    tool = next((t for t in tools if t["name"] == name), None)
    if tool is None:
        close = [t["name"] for t in tools if name.lower() in t["name"]]
        hint = f"did you mean {', '.join(close[:3])}?" if close else "`navi tools list` shows them"
        fail(f"no tool '{name}' — {hint}", 1)
    if tool.get("server"):
        kind = f"a tool of the MCP server '{tool['server']}'"
    else:
        kind = "built-in" if tool["builtin"] else "user tool"
    typer.echo(f"{tool['name']} ({kind})\n")
    typer.echo(tool["description"].strip() + "\n")
    typer.echo("Parameters:")
    typer.echo(json.dumps(tool["parameters"], indent=2, ensure_ascii=False))


@app.command()
def reload(url: UrlOption = None) -> None:
    """Reload the user tools from the tools folder; say what loaded and why a file did not.

    Exits 1 when a file failed to load. New tools are offered from the next message.
    """
    from navi.cli.remote import with_remote

    result: dict[str, Any] = with_remote(url, lambda remote: remote.reload_tools())
    loaded = result.get("loaded") or []
    typer.echo(
        f"Loaded {len(loaded)} user tool{'s' if len(loaded) != 1 else ''}: {', '.join(loaded) or 'none'}."
    )
    errors = result.get("errors") or []
    for error in errors:
        typer.echo(f"✗ {error['file']}: {error['message']}")
    if errors:
        raise typer.Exit(1)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="tools")
