"""An ASGI app served by uvicorn on a background thread, on a free loopback port.

Used by the fake model server and by tests' local HTTP servers, so sync and async tests alike can
talk to a real server.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class ThreadedServer:
    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "server",
        websockets: bool = False,
        lifespan: bool = False,
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.name = name
        self.websockets = websockets
        self.lifespan = lifespan
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def config(self) -> uvicorn.Config:
        return uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_config=None,
            access_log=False,
            lifespan="on" if self.lifespan else "off",
            ws="websockets-sansio" if self.websockets else "none",
            ws_max_size=64 * 1024 * 1024,
            ws_per_message_deflate=False,
            http="h11",
            loop="asyncio",
            timeout_graceful_shutdown=1,
            proxy_headers=False,  # as `navi serve`: Navi decides whom X-Forwarded-For is believed from
        )

    def start(self) -> int:
        """Bind, serve in the background, and return the port once the server accepts connections."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        self._server = uvicorn.Server(self.config())
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=self.name, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"{self.name} did not start")
            time.sleep(0.01)
        return self.port

    def serve_forever(self) -> None:
        """Serve in the foreground until interrupted."""
        uvicorn.Server(self.config()).run()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None
