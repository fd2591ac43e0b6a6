"""What the browser tool's guarded routing costs: a page with many subresources opened through the
`browser` tool (every request fetched by Navi through the network guard, Chromium in bubblewrap
with no network) against the same page opened by the same Chromium fetching by itself.

The page has `--assets` images and scripts, served by a local server in a thread. Each side opens
it `--rounds` times (after one warm-up open); reported: wall time per open, this process's CPU time
per open (the routing runs here: for the direct side it is only Playwright's bookkeeping), and the
ratios. Chromium's start is left out of both.

    .venv/bin/python bench/browser.py [--assets 40] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import time
from io import BytesIO
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from navi import runctx
from navi.net.guard import NetGuard
from navi.sandbox import probe
from navi.testing.threaded import ThreadedServer
from navi.tools.builtin.browser import BrowserSettings, BrowserTool
from navi.tools.builtin.browser.launch import ARGS, CHROMIUM


def _png() -> bytes:
    from PIL import Image

    out = BytesIO()
    Image.new("RGB", (64, 64), (30, 120, 200)).save(out, "PNG")
    return out.getvalue()


def app(assets: int) -> Starlette:
    png = _png()
    body = "".join(f'<img src="/img/{i}.png"><script src="/js/{i}.js"></script>' for i in range(assets))

    async def page(request: Request) -> Response:
        return HTMLResponse(f"<!doctype html><title>Bench</title><h1>Assets</h1>{body}")

    async def image(request: Request) -> Response:
        return Response(png, media_type="image/png")

    async def script(request: Request) -> Response:
        return Response("window.count = (window.count || 0) + 1;", media_type="text/javascript")

    return Starlette(routes=[Route("/", page), Route("/img/{n}.png", image), Route("/js/{n}.js", script)])


async def routed(port: int, rounds: int) -> tuple[float, float]:
    async def resolve(host: str, _port: int) -> list[str]:
        if host == "bench.test":
            return ["127.0.0.1"]
        raise socket.gaierror(socket.EAI_NONAME, host)

    guard = NetGuard.allowing("bench.test", resolver=resolve)
    tool = BrowserTool(BrowserSettings(bwrap=probe().bwrap), guard)
    url = f"http://bench.test:{port}/"
    try:
        with runctx.using(runctx.RunContext(session_id="bench")):
            await tool.execute({"action": "open", "url": url})  # warm-up, Chromium's start
            return await _timed(rounds, lambda: tool.execute({"action": "open", "url": url}))
    finally:
        await tool.aclose()


async def direct(port: int, rounds: int) -> tuple[float, float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = await browser.new_page()
        url = f"http://127.0.0.1:{port}/"

        async def one() -> Any:
            await page.goto(url, wait_until="load")
            try:
                await page.wait_for_load_state("networkidle", timeout=2_000)
            except Exception:
                pass
            return await page.screenshot(type="jpeg", quality=60)  # as the tool's thumbnail

        await one()
        try:
            return await _timed(rounds, one)
        finally:
            await browser.close()


async def _timed(rounds: int, step: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        await step()
    return (time.perf_counter() - wall) / rounds, (time.process_time() - cpu) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    server = ThreadedServer(app(args.assets), name="bench-pages")
    port = server.start()
    try:
        r_wall, r_cpu = asyncio.run(routed(port, args.rounds))
        d_wall, d_cpu = asyncio.run(direct(port, args.rounds))
    finally:
        server.stop()
    requests = 1 + 2 * args.assets
    print(f"a page of {requests} requests, {args.rounds} opens a side (Chromium's start left out)")
    print(f"{'':28}{'wall s/open':>12}{'CPU s/open':>12}")
    print(f"{'browser tool (guarded)':28}{r_wall:12.3f}{r_cpu:12.3f}")
    print(f"{'Chromium fetching itself':28}{d_wall:12.3f}{d_cpu:12.3f}")
    per_request = (r_cpu - d_cpu) / requests * 1000
    print(f"ratio wall {r_wall / d_wall:.2f}×; routing CPU {per_request:.2f} ms a request")


if __name__ == "__main__":
    main()
