"""`navi serve`: run the API and web UI under uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from navi.cli.main import settings_or_exit


def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default NAVI_HOST, 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on (default NAVI_PORT, 8000).")] = None,
) -> None:
    """Start Navi."""
    import uvicorn

    from navi.api.app import create_app
    from navi.logging import configure_logging

    settings = settings_or_exit(navi_host=host, navi_port=port)
    configure_logging(settings.log_level, settings.log_format)
    if not settings.listens_on_loopback() and not settings.navi_api_token:
        typer.echo(
            f"navi: refusing to listen on {settings.navi_host} without an access token — anyone on the "
            "network could drive your agent. Set NAVI_API_TOKEN (e.g. `openssl rand -hex 32`) or use "
            "--host 127.0.0.1.",
            err=True,
        )
        raise typer.Exit(2)
    uvicorn.run(
        create_app(settings, tune_gc=True),
        host=settings.navi_host,
        port=settings.navi_port,
        log_config=None,
        access_log=False,
        ws="websockets-sansio",
        ws_per_message_deflate=False,  # frames are small JSON: compressing each costs more than it saves
        loop="asyncio" if settings.navi_loop_monitor else "auto",  # the monitor times asyncio's own loop
        ws_max_size=64 * 1024 * 1024,  # the app refuses frames over 16 MB itself, with an error frame
    )


def register(app: typer.Typer) -> None:
    app.command()(serve)
