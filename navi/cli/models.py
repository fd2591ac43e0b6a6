"""`navi models list|test`: the model list (MODELS_FILE, docs/models.md) — its endpoints, the
chains that try them, the side model, which endpoints the circuit breaker skips — and, with
`test`, each endpoint's state: is its server reachable, does it have the model, what window."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from navi.cli.common import fail
from navi.cli.stores import with_stores

models_app = typer.Typer(
    help="The model list (MODELS_FILE): endpoints, chains and their state.", no_args_is_help=True
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (what GET /models returns).")]


def _report(check: bool) -> Any:
    from navi.api.routes.models import report

    async def work(rt: Any) -> Any:
        return await report(rt.profiles, rt.backends, owner=True, check=check)

    return with_stores(work)


def _yes(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


def _print(body: Any, *, check: bool) -> None:
    for entry in body.models:
        caps = ",".join(entry.capabilities) if entry.capabilities is not None else "-"
        price = f"${entry.price[0]:g}/${entry.price[1]:g} per Mtok" if entry.price else "no price"
        where = entry.url or "(the backend's setting)"
        implicit = "  (.env's model)" if entry.implicit else ""
        typer.echo(f"{entry.id}: {entry.backend} {entry.model} at {where}{implicit}")
        typer.echo(f"    window {entry.window or 'as the server says'} · capabilities {caps} · {price}")
        if entry.key_env:
            typer.echo(f"    key from ${entry.key_env}")
        if check and entry.state is not None:
            state = entry.state
            typer.echo(
                f"    reachable {_yes(state.reachable)} · model present {_yes(state.model_present)} · "
                f"window {state.window or '?'} — {state.detail}"
            )
        if entry.cooling is not None:
            typer.echo(f"    skipped after {entry.cooling.failures} failure(s): {entry.cooling.reason}")
    for name, ids in body.chains.items():
        typer.echo(f"chain {name}: {' → '.join(ids)}")
    if body.side:
        typer.echo(f"side calls: {body.side} first")


@models_app.command("list")
def list_models(as_json: JsonOption = False) -> None:
    """The endpoints and chains, and which endpoints the circuit breaker skips (no server is asked)."""
    body = _report(check=False)
    if as_json:
        typer.echo(json.dumps(body.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    _print(body, check=False)


@models_app.command("test")
def test_models(as_json: JsonOption = False) -> None:
    """Ask each endpoint's server: reachable, model present (pulled), window. Exits 1 when one that
    a chain or side calls use is unreachable or lacks its model."""
    body = _report(check=True)
    if as_json:
        typer.echo(json.dumps(body.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        _print(body, check=True)
    used = {i for ids in body.chains.values() for i in ids} | ({body.side} if body.side else set())
    states = [(e.id, e.state) for e in body.models if e.state is not None and e.id in used]
    bad = [i for i, state in states if not state.reachable or state.model_present is False]
    if bad:
        fail(f"not ready: {', '.join(bad)}", 1)


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
