"""`navi config`: the settings Navi runs with, where each value came from, secrets masked.

A value comes from the environment, else from `.env` in the working directory, else the default —
pydantic-settings' order, which this mirrors (it does not report sources itself). Keys, tokens and
passwords are shown as set or not, never as what they are.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from navi.cli.common import fail, settings_or_exit

SECRET = re.compile(r"(_KEY|_TOKEN|PASSWORD|SECRET)$")
SHOWN = 70  # longer values are cut (a persona can be pages)


def masked(name: str, value: Any) -> str:
    text = json.dumps(value) if isinstance(value, bool) else str(value)
    if SECRET.search(name):
        return "****** (set)" if text else ""
    if name == "DATABASE_URL" and text:
        return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1******@", text)
    text = text.replace("\n", "\\n")
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def sources(names: list[str], env_file: Path) -> dict[str, str]:
    """Where each setting's value comes from: `environment`, `.env` or `default`."""
    from dotenv import dotenv_values

    environ = {k.upper() for k in os.environ}
    try:
        dotenv = {k.upper() for k, v in dotenv_values(env_file).items() if v is not None}
    except OSError:
        dotenv = set()
    out = {}
    for name in names:
        out[name] = "environment" if name in environ else ".env" if name in dotenv else "default"
    return out


def derived(settings: Any) -> dict[str, str]:
    """What an empty setting means, where it stands for a computed value."""
    from navi.cli.chat import history_path
    from navi.cli.remote import default_url

    return {
        "NAVI_TOKEN_FILE": str(Path(settings.token_file).expanduser().absolute()),
        "NAVI_URL": default_url(settings),
        "NAVI_CHAT_HISTORY_FILE": str(history_path("")),
    }


def config(
    names: Annotated[
        list[str] | None, typer.Argument(metavar="[NAME]...", help="Only these settings (e.g. OLLAMA_HOST).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: name, value, source.")] = False,
) -> None:
    """The settings in effect, each with where it came from (environment, .env, default).

    Keys, tokens and the database password are masked.
    """
    settings = settings_or_exit()
    fields = [name.upper() for name in type(settings).model_fields]
    wanted = [n.upper() for n in names or []]
    unknown = [n for n in wanted if n not in fields]
    if unknown:
        fail(f"no setting {', '.join(unknown)} — `navi config` lists them all", 1)
    env_file = Path(str(settings.model_config.get("env_file") or ".env")).absolute()
    where = sources(fields, env_file)
    notes = derived(settings)
    rows = []
    for name in wanted or fields:
        value = masked(name, getattr(settings, name.lower()))
        note = notes.get(name, "") if not value else ""
        rows.append(
            {"name": name, "value": value, "source": where[name], **({"means": note} if note else {})}
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not wanted:
        dotenv = f".env ({env_file})" if env_file.exists() else ".env (none here)"
        typer.echo(f"# environment > {dotenv} > default")
    width = min(60, max(len(f"{r['name']}={r['value']}") for r in rows))
    for row in rows:
        pair = f"{row['name']}={row['value']}"
        extra = f"  (empty: {row['means']})" if "means" in row else ""
        typer.echo(f"{pair:<{width}}  {row['source']}{extra}")


def register(app: typer.Typer) -> None:
    app.command()(config)
