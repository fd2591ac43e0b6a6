"""`navi fake-model`: a scripted model server, for trying Navi without downloading a model."""

from __future__ import annotations

from typing import Annotated

import typer


def fake_model(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (11434 stands in for Ollama).")] = 11434,
) -> None:
    """Serve a fake Ollama/OpenAI/Anthropic model that answers from a demo script."""
    from navi.testing.demo import demo_script
    from navi.testing.fake_server import FakeModelServer

    server = FakeModelServer(demo_script(), host=host, port=port)
    typer.echo(f"fake model server on http://{host}:{port} (Ollama /api, OpenAI /v1, Anthropic /v1/messages)")
    server.serve_forever()


def register(app: typer.Typer) -> None:
    app.command("fake-model")(fake_model)
