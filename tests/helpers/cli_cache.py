"""Typer's test runner builds the whole `navi` command tree again for every `invoke` — every
command's signature read with `typing.get_type_hints`, which compiles each string annotation anew:
about 0.2-0.4 s per call, and the suite invokes the CLI in-process hundreds of times. The tree is
the same each time for the same app and the same registered commands, so the runner here reuses
it. (A real `navi` process builds it once; nothing changes for it.)"""

from __future__ import annotations

from typing import Any

import typer.main
import typer.testing

_built: dict[tuple[int, int, int], Any] = {}


def _cached(app: typer.Typer) -> Any:  # a click Command
    key = (id(app), len(app.registered_commands), len(app.registered_groups))
    command = _built.get(key)
    if command is None:
        command = _built[key] = typer.main.get_command(app)
    return command


def install() -> None:
    typer.testing._get_command = _cached  # type: ignore[assignment]  # the runner's own reference
