"""A real HTTP server on 127.0.0.1 for the web, HTTP and image tool tests.

A Starlette app served by uvicorn in a background thread (the approach of `navi.testing.fake_server`),
so the tools run their real httpx code against real sockets: pages, plain text, JSON, binaries,
huge and slow bodies, redirects (also to any URL: `/redirect-to?url=…`) and loops, error statuses and
an echo endpoint. Tests can also publish their own bodies with `add()`, and see which paths were
requested in `requests` (a refused fetch must leave it empty).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from io import BytesIO
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from navi.net.guard import NetGuard
from navi.testing.threaded import ThreadedServer

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
# The fetching tools refuse this machine by default; the tests allow exactly the server's address.
ALLOW_LOCAL = NetGuard.allowing("127.0.0.1")

ARTICLE_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>Understanding Local Servers</title>
<style>body { color: red; }</style><script>var trackingCode = "SHOULD-NOT-APPEAR";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/shop">NAVMENU-SHOP</a></nav>
<article>
<h1>Understanding Local Servers</h1>
<p>A local server answers requests on the loopback interface, which makes it ideal for tests.
Nothing leaves the machine, and every response is predictable down to the last byte.</p>
<p>The café on the corner serves crème brûlée; this sentence checks that UTF-8 text survives the trip
through the extractor without turning into mojibake of any kind whatsoever.</p>
<p>Read the <a href="/docs/guide">detailed guide</a> for configuration options, timeouts and the
handling of redirects, which every robust HTTP client has to get right eventually.</p>
<p>Finally, remember that streaming a body lets a client stop reading early, so a huge page never
exhausts memory, and a time limit keeps a slow server from stalling the agent forever.</p>
</article>
<footer>FOOTER-JUNK Copyright 2026, all rights reserved.</footer>
</body></html>
"""

NO_ARTICLE_HTML = """<!doctype html>
<html><head><title>Sidebar Only</title><script>var hidden = "SCRIPT-TEXT";</script></head>
<body>
<aside><h2>Quick facts</h2><p>The sidebar says the boiler pressure is 1.5 bar.</p>
<ul><li><a href="/a">First link</a></li><li>Second item</li></ul></aside>
<footer><p>Footer note: maintained by the house robot.</p></footer>
</body></html>
"""

LATIN1_HTML = (
    "<html><head><meta charset='iso-8859-1'><title>Grüße</title></head><body><article>"
    + "".join(
        f"<p>Paragraph {i}: Grüße aus München, schöne Straßen und weiße Häuser am Fluss entlang.</p>"
        for i in range(6)
    )
    + "</article></body></html>"
).encode("iso-8859-1")

PLAIN_TEXT = "line one\nline two\nthe end\n"
JSON_DATA = {"name": "navi", "items": [1, 2, 3], "nested": {"ok": True, "text": "grün"}}
XML_TEXT = '<?xml version="1.0"?>\n<feed><entry><title>Hello XML</title></entry></feed>\n'
PDF_BYTES = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 4 + b"\n%%EOF\n"


def png_bytes(size: tuple[int, int] = (40, 30), color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    from PIL import Image

    out = BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


async def _wait(request: Request, seconds: float) -> bool:
    """Sleep up to `seconds`; False as soon as the client goes away."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await request.is_disconnected():
            return False
        await asyncio.sleep(0.05)
    return True


class LocalHttpServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.requests: list[str] = []
        self.files: dict[str, tuple[bytes, str]] = {}
        self.image = png_bytes()
        self._runner: ThreadedServer | None = None
        self.app = Starlette(routes=self._routes())

    # --- lifecycle -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __call__(self, path: str) -> str:
        """The absolute URL of `path` on this server."""
        return self.url + path

    def add(self, name: str, body: bytes, media_type: str) -> str:
        """Serve `body` at /files/<name>; returns its URL."""
        self.files[name] = (body, media_type)
        return self(f"/files/{name}")

    def start(self) -> LocalHttpServer:
        self._runner = ThreadedServer(self._logged, host=self.host, name="local-http-server")
        self.port = self._runner.start()
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.stop()
        self._runner = None

    def __enter__(self) -> LocalHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def _logged(self) -> Any:
        """The app, noting each request's path in `requests` (an ASGI 3 callable uvicorn recognises)."""
        server = self

        class Logged:
            async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] == "http":
                    server.requests.append(scope["path"])
                await server.app(scope, receive, send)

        return Logged()

    # --- routes ----------------------------------------------------------------------------------
    def _routes(self) -> list[Route]:
        def html(text: str) -> Response:
            return Response(text, media_type="text/html")

        async def article(request: Request) -> Response:
            return html(ARTICLE_HTML)

        async def no_article(request: Request) -> Response:
            return html(NO_ARTICLE_HTML)

        async def latin1(request: Request) -> Response:
            return Response(LATIN1_HTML, headers={"content-type": "text/html"})  # charset only in <meta>

        async def plain(request: Request) -> Response:
            return Response(PLAIN_TEXT, media_type="text/plain")

        async def json_page(request: Request) -> Response:
            return Response(json.dumps(JSON_DATA, separators=(",", ":")), media_type="application/json")

        async def xml(request: Request) -> Response:
            return Response(XML_TEXT, media_type="application/xml")

        async def pdf(request: Request) -> Response:
            return Response(PDF_BYTES, media_type="application/pdf")

        async def image(request: Request) -> Response:
            return Response(self.image, media_type="image/png")

        async def octet(request: Request) -> Response:
            return Response(b"\x00\x01\x02binary\xff" * 100, media_type="application/octet-stream")

        async def files(request: Request) -> Response:
            name = request.path_params["name"]
            if name not in self.files:
                return Response("no such file", status_code=404, media_type="text/plain")
            body, media_type = self.files[name]
            return Response(body, headers={"content-type": media_type})

        async def huge(request: Request) -> Response:
            """`n` bytes of `type` (text/plain by default), streamed without a Content-Length."""
            total = int(request.query_params.get("n", "5000000"))
            media_type = request.query_params.get("type", "text/plain")
            line = b"All work and no play makes a very long page indeed.\n"

            async def body() -> AsyncIterator[bytes]:
                sent = 0
                if media_type == "text/html":
                    yield b"<html><head><title>Huge</title></head><body><article><p>"
                while sent < total:
                    chunk = (line * 1300)[: min(65536, total - sent)]
                    sent += len(chunk)
                    yield chunk
                    await asyncio.sleep(0)

            return StreamingResponse(body(), media_type=media_type)

        async def slow(request: Request) -> Response:
            """Answers only after `delay` seconds (headers included)."""
            if not await _wait(request, float(request.query_params.get("delay", "5"))):
                return Response(status_code=499)
            return Response("finally", media_type="text/plain")

        async def trickle(request: Request) -> Response:
            """Headers at once, then one byte every 50 ms for a long time: only a total limit stops it."""

            async def body() -> AsyncIterator[bytes]:
                for _ in range(400):
                    yield b"."
                    await asyncio.sleep(0.05)

            return StreamingResponse(body(), media_type="text/plain")

        async def redirect(request: Request) -> Response:
            n = int(request.path_params["n"])
            return RedirectResponse("/plain" if n <= 0 else f"/redirect/{n - 1}", status_code=302)

        async def redirect_to(request: Request) -> Response:
            status = int(request.query_params.get("status", "302"))
            return RedirectResponse(request.query_params["url"], status_code=status)

        async def loop(request: Request) -> Response:
            return RedirectResponse("/loop", status_code=302)

        async def to_ftp(request: Request) -> Response:
            return RedirectResponse("ftp://127.0.0.1/file.txt", status_code=302)

        async def status(request: Request) -> Response:
            code = int(request.path_params["code"])
            return Response(f"status body {code}", status_code=code, media_type="text/plain")

        async def echo(request: Request) -> Response:
            body = await request.body()
            return JSONResponse(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "query": [[k, v] for k, v in request.query_params.multi_items()],
                    "headers": dict(request.headers),
                    "body": body.decode("utf-8", "replace"),
                }
            )

        async def cookie(request: Request) -> Response:
            response = JSONResponse({"logged_in": True})
            response.set_cookie("session", "secret123", path="/", httponly=True)
            return response

        return [
            Route("/article", article),
            Route("/no-article", no_article),
            Route("/latin1", latin1),
            Route("/plain", plain),
            Route("/json", json_page),
            Route("/xml", xml),
            Route("/doc.pdf", pdf),
            Route("/image.png", image),
            Route("/octet", octet),
            Route("/files/{name:path}", files),
            Route("/huge", huge),
            Route("/slow", slow),
            Route("/trickle", trickle),
            Route("/redirect/{n:int}", redirect),
            Route("/redirect-to", redirect_to, methods=ALL_METHODS),
            Route("/loop", loop),
            Route("/to-ftp", to_ftp),
            Route("/status/{code:int}", status, methods=ALL_METHODS),
            Route("/echo", echo, methods=ALL_METHODS),
            Route("/cookie", cookie),
        ]
