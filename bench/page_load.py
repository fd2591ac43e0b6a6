"""The CPU of opening Navi's page in a fresh browser: one script (static/app.js) against its modules.

A `navi serve` on the fake model and Debian's Chromium (through Playwright, as the UI tests drive
it). Each load is a new browser context (no cache, as a first visit and as every browser test
starts), signed in by its cookie: open `/`, wait until the page has loaded its data
(`<body data-ready>`), close.
The page as shipped loads `/static/app.js`; the other variant is the same page with its script tag
pointing at `/static/js/main.js`, so the browser loads the forty modules one import level after
another (the page's document is routed through Playwright in both variants, alike). Loads of the
two alternate, so the machine's load falls on both; reported: the median CPU-s per load of the
browser (Chromium and Playwright's driver) and of the Navi serving it, and the wall time.

    .venv/bin/python bench/page_load.py [--loads 12]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from navi.testing.ports import free_port
from tests.helpers.cpu import tree_cpu


def wait_up(url: str) -> None:
    for _ in range(300):
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"nothing answered at {url}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=12, help="loads of each variant")
    parser.add_argument("--show", action="store_true", help="print the scripts each load fetched")
    args = parser.parse_args()
    from playwright.sync_api import Route, sync_playwright

    home = Path(tempfile.mkdtemp(prefix="navi-page-load-"))
    model_port, port, token = free_port(), free_port(), secrets.token_hex(16)
    env = {**os.environ, "HOME": str(home), "NAVI_API_TOKEN": token, "NAVI_PORT": str(port)}
    env |= {"OLLAMA_HOST": f"http://127.0.0.1:{model_port}", "DB_PATH": str(home / "navi.db")}
    model = subprocess.Popen(
        [sys.executable, "-m", "navi", "fake-model", "--port", str(model_port)], env=env, cwd=home,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "navi", "serve"], env=env, cwd=home,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    figures: dict[str, list[tuple[float, float, float]]] = {"app.js": [], "modules": []}
    try:
        wait_up(f"{url}/health")
        signed = httpx.post(f"{url}/login", data={"token": token}, follow_redirects=False)
        cookies = [{"name": name, "value": value, "url": url} for name, value in signed.cookies.items()]

        def page_as(variant: str):  # type: ignore[no-untyped-def]
            def route(r: Route) -> None:
                answer = r.fetch()
                body = answer.text()
                if variant == "modules":
                    body = body.replace('src="/static/app.js"', 'src="/static/js/main.js"')
                r.fulfill(response=answer, body=body)

            return route

        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"]
            )

            def load(variant: str) -> tuple[float, float, float]:
                before = (tree_cpu(os.getpid()), tree_cpu(server.pid), time.monotonic())
                context = browser.new_context(service_workers="block")
                context.add_cookies(cookies)  # signed in, as after the link `navi serve` prints
                context.route(f"{url}/", page_as(variant))
                page = context.new_page()
                scripts: list[str] = []
                page.on("request", lambda r: scripts.append(r.url) if r.url.endswith(".js") else None)
                page.goto(f"{url}/")
                page.wait_for_selector("body[data-ready=true]", state="attached")
                context.close()
                if args.show:
                    print(variant, len(scripts), "scripts")
                after = (tree_cpu(os.getpid()), tree_cpu(server.pid), time.monotonic())
                return after[0] - before[0], after[1] - before[1], after[2] - before[2]

            for variant in ("app.js", "modules"):  # warm both once
                load(variant)
            for _ in range(args.loads):
                for variant in ("app.js", "modules"):
                    figures[variant].append(load(variant))
            browser.close()
    finally:
        server.terminate()
        model.terminate()
        server.wait(10)
        model.wait(10)
    print(f"{args.loads} fresh-context loads of each, alternating (median per load)")
    print(f"{'page script':<12} {'browser CPU-s':>14} {'Navi CPU-s':>11} {'wall s':>7}")
    for variant, rows in figures.items():
        cols = [statistics.median(r[i] for r in rows) for i in range(3)]
        print(f"{variant:<12} {cols[0]:>14.3f} {cols[1]:>11.3f} {cols[2]:>7.3f}")


if __name__ == "__main__":
    main()
