"""`navi fake-model`: a scripted model server, for trying Navi without downloading a model."""

from __future__ import annotations

from typing import Annotated

import typer


def fake_model(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (11434 stands in for Ollama).")] = 11434,
) -> None:
    """Serve a fake Ollama/OpenAI/Anthropic model that answers from a demo script.

    Start Navi with OLLAMA_HOST pointing here (http://127.0.0.1:11434 is Navi's default) and put
    these words in a message to see what Navi can do:

    \b
    plan: a plan from the planning step before the answer
    todo / checklist: a call of the todo tool (runs without asking)
    run / command: a terminal call that asks for your approval first: Allow, Deny or Always
    code / markdown: an answer with a heading, a list, a table and a Python block
    fail: a model error, with Retry (the retry is answered)
    slow: a slow answer: try Stop, Esc or reloading the page mid-answer

    Anything else is echoed back, after a moment of thinking.
    """
    from navi.testing.demo import demo_script
    from navi.testing.fake_server import FakeModelServer

    server = FakeModelServer(demo_script(), host=host, port=port)
    typer.echo(f"fake model server on http://{host}:{port} (Ollama /api, OpenAI /v1, Anthropic /v1/messages)")
    typer.echo("words that show Navi's features: plan, todo, run, code, fail, slow (--help says more)")
    server.serve_forever()


def register(app: typer.Typer) -> None:
    app.command("fake-model")(fake_model)
