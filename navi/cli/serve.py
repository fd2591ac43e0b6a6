"""`navi serve`: run the API and web UI under uvicorn.

Before uvicorn starts, the settings that most often stop a first start are checked — the port, the
database, the tools folder — so each problem is one line naming the fix, not a server traceback.
The open-file limit is raised to what the system allows, and connections that have not sent a
request yet are bounded in time and number (navi/api/connections.py), so slow or half-open sockets
cannot use up the server's file descriptors or push real users out.
"""

from __future__ import annotations

import asyncio
import errno
import resource
import socket
from typing import TYPE_CHECKING, Annotated, Any

import typer

from navi.cli.common import fail, settings_or_exit

if TYPE_CHECKING:
    from navi.compose.token import AccessToken
    from navi.config import Settings

PORT_FIX = "stop the program using it, or pick another port with --port or NAVI_PORT"


def port_problem(host: str, port: int) -> str | None:
    """Why Navi could not listen on `host:port`, found by binding it for a moment; None when it can."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            sock.bind((host.strip("[]"), port))
        except socket.gaierror:
            return f"cannot listen on {host}: no such address — set NAVI_HOST or --host to 127.0.0.1"
        except OSError as exc:
            where = f"cannot listen on {host}:{port}"
            if exc.errno == errno.EADDRINUSE:
                return f"{where}: the port is already in use — {PORT_FIX}"
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"{where}: {host} is not an address of this machine — set NAVI_HOST or --host"
            if exc.errno == errno.EACCES:
                return f"{where}: ports below 1024 need root — pick another port with --port or NAVI_PORT"
            return f"{where}: {(exc.strerror or str(exc)).lower()} — {PORT_FIX}"
    return None


def raise_open_file_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (every connection, database file
    and child pipe needs a descriptor; distributions often start programs at 1,024). Returns the
    soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):  # e.g. macOS caps it below an unlimited hard limit
            pass
    return soft


def uvicorn_options(settings: Settings, open_files: int) -> dict[str, Any]:
    """How `navi serve` runs uvicorn, beyond host and port.

    Not `limit_concurrency`: uvicorn counts idle connections against it and answers 503 past it,
    so half-open sockets would lock real users out; the connection guard closes those instead.
    At most half the open-file limit may wait for a request head, whatever the setting says
    (three quarters for a moment, in a burst of new connections: `ConnectionGuard.grace`)."""
    from navi.api.connections import MAX_HEAD_BYTES, ConnectionGuard, guarded_protocol

    waiting = max(8, min(settings.navi_max_pending_connections, open_files // 2))
    guard = ConnectionGuard(
        head_timeout=settings.navi_header_timeout_seconds,
        max_waiting=waiting,
        # A burst's newest second may go past it, never past three quarters of the open files.
        hard_cap=max(waiting, min(2 * waiting, open_files * 3 // 4)),
    )
    return {
        "http": guarded_protocol(guard),
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,  # the same head limit if h11 is used
        "timeout_keep_alive": 5,  # an idle kept-alive connection is closed after 5 s
        "log_config": None,
        "access_log": False,
        "ws": "websockets-sansio",
        "ws_per_message_deflate": False,  # frames are small JSON: compressing each costs more than it saves
        "loop": "asyncio" if settings.navi_loop_monitor else "auto",  # the monitor times asyncio's own loop
        "ws_max_size": 64 * 1024 * 1024,  # the app refuses frames over 16 MB itself, with an error frame
        # X-Forwarded-For is believed only from NAVI_TRUSTED_PROXIES, by Navi's own access control;
        # uvicorn's handling would believe any local process, and the throttle on failed sign-ins
        # would count each made-up address apart.
        "proxy_headers": False,
    }


class OneLineStartupFailure:
    """Keeps uvicorn from printing a traceback when the app's start-up stopped on a `SetupError`.

    The lifespan records the error on `app.state.startup_problem`; `serve` prints it as one line.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def send_quietly(message: Any) -> None:
            if message["type"] == "lifespan.startup.failed" and self.problem is not None:
                message = {**message, "message": ""}
            await send(message)

        try:
            await self.app(scope, receive, send_quietly)
        except Exception:
            if self.problem is None:
                raise

    @property
    def problem(self) -> Exception | None:
        return getattr(self.app.state, "startup_problem", None)


MIN_TOKEN_LENGTH = 16


def short_token_problem(settings: Settings) -> str | None:
    """Why NAVI_API_TOKEN is too weak to listen beyond loopback with, or None.

    Sign-ins are throttled per address, but the network holds many addresses: a token must not be
    guessable in the attempts they add up to."""
    token = settings.navi_api_token
    if settings.listens_on_loopback() or not token or len(token) >= MIN_TOKEN_LENGTH:
        return None
    return (
        f"refusing to listen on {settings.navi_host} with a {len(token)}-character NAVI_API_TOKEN — "
        f"beyond this machine it needs at least {MIN_TOKEN_LENGTH}; make one with `openssl rand -hex 32`"
    )


def sign_in_text(host: str, port: int, token: AccessToken) -> str:
    """What `navi serve` prints once it listens, whatever the log level, as the last lines of its
    start: where Navi is and how to sign in. This and `navi token` are the only places Navi's own
    token is ever shown (never in a log line)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    base = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"
    if token.source == "disabled":
        return f"Navi is ready: {base}/ (no access token: NAVI_AUTH_DISABLED is set)"
    if token.source == "setting":
        return f"Navi is ready: {base}/ (sign in with your NAVI_API_TOKEN)"
    return (
        f"Navi is ready: {base}/\n"
        f"  sign in: {base}/login?token={token.value}\n"
        f"  (the token is kept in {token.path}, readable only by you; `navi token` prints this link again)"
    )


def announced_server(config: Any, text: str) -> Any:
    """uvicorn's server, printing `text` once it listens: after uvicorn's and Navi's start-up lines,
    so the sign-in link is the last thing on the screen, not scrolled away under them."""
    import uvicorn

    class AnnouncedServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                typer.echo(text, err=True)

    return AnnouncedServer(config)


def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default NAVI_HOST, 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on (default NAVI_PORT, 8000).")] = None,
    workers: Annotated[
        int,
        typer.Option(min=1, help="Processes serving the one port (PostgreSQL: DATABASE_URL). Default 1."),
    ] = 1,
) -> None:
    """Start Navi."""
    import uvicorn

    from navi.api.app import create_app
    from navi.compose import SetupError
    from navi.compose.database import probe_database
    from navi.compose.parts import check_tools_dir
    from navi.compose.token import access_token

    settings = settings_or_exit(navi_host=host, navi_port=port)
    if workers > 1 and not settings.database_url:
        fail(
            f"--workers {workers} needs PostgreSQL (DATABASE_URL): workers share runs, sign-ins and "
            "uploads through it; on SQLite one `navi serve` serves (run it without --workers)"
        )
    if not settings.listens_on_loopback() and not settings.navi_api_token:
        fail(
            f"refusing to listen on {settings.navi_host} without an access token — anyone on the "
            "network could drive your agent. Set NAVI_API_TOKEN (e.g. `openssl rand -hex 32`) or use "
            "--host 127.0.0.1."
        )
    weak = short_token_problem(settings)
    if weak:
        fail(weak)
    problem = port_problem(settings.navi_host, settings.navi_port)
    if problem:
        fail(problem)
    try:
        check_tools_dir(settings)
        asyncio.run(probe_database(settings, connect_timeout=10.0))
        token = access_token(settings)
    except SetupError as exc:
        fail(str(exc))
    open_files = raise_open_file_limit()
    if workers > 1:  # the parent says where Navi is; each worker announces nothing of its own
        typer.echo(sign_in_text(settings.navi_host, settings.navi_port, token), err=True)
        raise typer.Exit(serve_workers(settings, workers, open_files))
    app = create_app(settings, tune_gc=True)
    options = uvicorn_options(settings, open_files)
    config = uvicorn.Config(
        OneLineStartupFailure(app), host=settings.navi_host, port=settings.navi_port, **options
    )
    server = announced_server(config, sign_in_text(settings.navi_host, settings.navi_port, token))
    try:
        server.run()  # as uvicorn.run does
    except KeyboardInterrupt:
        pass
    except SystemExit:
        startup_problem = getattr(app.state, "startup_problem", None)
        if startup_problem is not None:
            fail(str(startup_problem))
        raise
    if not server.started:
        raise SystemExit(3)  # uvicorn's STARTUP_FAILURE


def token_command() -> None:
    """Print the sign-in link of this machine's Navi (from its token file), or say where the token is."""
    from navi.compose import SetupError
    from navi.compose.token import access_token

    settings = settings_or_exit()
    try:
        found = access_token(settings, create=False)
    except SetupError as exc:
        fail(str(exc))
    if found.source == "file" and not found.value:
        fail(f"no token yet: `navi serve` makes one in {found.path} on its first start")
    typer.echo(
        sign_in_text(settings.navi_host, settings.navi_port, found).replace("Navi is ready: ", "Navi: ")
    )


def serve_workers(settings: Settings, count: int, open_files: int) -> int:
    """`count` processes on one socket (`navi/cli/workers.py`), each with its own app."""
    import socket as sockets

    import uvicorn

    from navi.api.app import create_app
    from navi.cli.workers import STARTUP_FAILED, listening_socket, supervise

    def serve_one(sock: sockets.socket) -> int:
        app = create_app(settings, tune_gc=True)
        options = uvicorn_options(settings, open_files)
        config = uvicorn.Config(
            OneLineStartupFailure(app), host=settings.navi_host, port=settings.navi_port, **options
        )
        uvicorn.Server(config).run(sockets=[sock])
        startup_problem = getattr(app.state, "startup_problem", None)
        if startup_problem is not None:
            typer.echo(f"navi: {startup_problem}", err=True)
            return STARTUP_FAILED
        return 0

    return supervise(count, listening_socket(settings.navi_host, settings.navi_port), serve_one)


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command("token")(token_command)
