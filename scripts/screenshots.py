"""Take the README's screenshots: a live Navi on the fake model, driven in Debian's Chromium.

    PYTHONPATH=. .venv/bin/python scripts/screenshots.py [--out docs/screenshots]   (make screenshots)

Each picture is a real state of the page reached by using it (typing, clicking), not a mock-up. The
page is the one of the checkout on PYTHONPATH: without it, Python finds `navi` where the venv's
editable install points, which may be another checkout.
"""

from __future__ import annotations

import argparse
import io
import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright

from navi.api.app import create_app
from navi.config import load_settings
from navi.testing.agent_script import AgentScript
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from navi.testing.threaded import ThreadedServer

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ANSWER = """Here is a small script that checks your backups every morning:

```python
from pathlib import Path
import time

def newest_backup(folder: str) -> float:
    \"\"\"Age of the newest file, in hours.\"\"\"
    files = list(Path(folder).glob("*.tar.gz"))
    return (time.time() - max(f.stat().st_mtime for f in files)) / 3600
```

- **Schedule**: `cron` at 07:00, as you asked.
- **Alert**: an e-mail when the newest backup is older than 26 hours.

The helper agent confirmed the folder exists and holds 14 archives."""


def script() -> AgentScript:
    s = AgentScript()
    s.title = "Morning backup check"
    s.plan("1. Look at the backup folder\n2. Have a helper count the archives\n3. Write the check script")
    s.turn(
        Reply(
            thinking="I should look at the folder before writing anything.",
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Inspect folder", "Write script"]})],
        ),
        Reply(tool_calls=[ScriptedCall("spawn_agent", {"task": "Count the archives in /srv/backups."})]),
        Reply(
            thinking="List the folder.",
            tool_calls=[ScriptedCall("scratchpad", {"action": "write", "section": "count", "content": "14"})],
        ),
        Reply(text="14 archives, newest from this morning."),
        Reply(thinking="Now write the script and explain it briefly.", text=ANSWER, prompt_tokens=5200),
        # the streaming picture: long thinking, slowly
        Reply(
            thinking="The person wants a summary of the week. I will go through the notes one by one "
            "and group them by project, then " * 3,
            text="Working on it " * 60,
            chunk_chars=3,
            delay=0.05,
        ),
        Reply(text="Both pictures show the same router; the second one has the WAN light off."),
    )
    return s


def ready(page: Page) -> None:
    expect(page.locator("body")).to_have_attribute("data-ready", "true")


def shoot(page: Page, out: Path, name: str) -> None:
    page.wait_for_timeout(250)
    page.screenshot(path=str(out / f"{name}.png"))
    print(f"saved {out / name}.png")


def take(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer(script=script()) as fake:
        settings = load_settings(
            db_path=f"{tmp}/navi.db",
            session_files_dir=f"{tmp}/files",
            tools_dir=f"{tmp}/tools",
            ollama_host=fake.url,
            log_level="WARNING",
            navi_auth_disabled=True,  # the pictures show the app, not its sign-in
        )
        server = ThreadedServer(create_app(settings), name="navi", websockets=True, lifespan=True)
        server.start()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                desktop = browser.new_context(
                    base_url=server.url, viewport={"width": 1280, "height": 860}, color_scheme="dark"
                )
                page = desktop.new_page()
                page.goto("/")
                ready(page)

                # "and": a word of sequence, so the turn is planned (navi/agent/planning.py `needs_plan`)
                ask = "Write me a script that checks my backups every morning and alerts me"
                page.locator("#input").fill(ask)
                page.locator("#input").press("Enter")
                expect(
                    page.locator("article.turn .markdown.text h2, article.turn .markdown.text pre")
                ).not_to_have_count(0)
                expect(page.locator("#stop")).to_be_hidden()
                page.wait_for_timeout(1600)  # the conversation's name arrives
                page.mouse.move(900, 500)  # no row of the list under the pointer
                shoot(page, out, "conversation")  # the steps folded into one line, the answer under it

                page.locator("details.steps > summary").click()
                page.locator('details.tool[data-tool="spawn_agent"] > summary').click()
                page.locator("details.plan").evaluate("(d) => d.open = true")
                shoot(page, out, "steps")
                page.locator("details.steps > summary").click()

                page.locator("#input").fill("Summarise my notes from this week")
                page.locator("#input").press("Enter")
                expect(page.locator("details.thinking[open]")).to_have_count(1)
                page.locator("article.turn").last.locator("details.steps > summary").click()  # watch it think
                page.wait_for_timeout(1200)
                shoot(page, out, "streaming")
                expect(page.locator("article.turn").last.locator(".markdown.text")).to_contain_text(
                    "Working on"
                )
                page.locator("#stop").click()
                expect(page.locator(".notice.stopped")).to_be_visible()

                for color in ("#3b82f6", "#22c55e"):
                    buf = io.BytesIO()
                    Image.new("RGB", (160, 110), color).save(buf, format="PNG")
                    page.locator("#file-input").set_input_files(
                        {"name": f"router-{color[1:]}.png", "mimeType": "image/png", "buffer": buf.getvalue()}
                    )
                page.locator("#file-input").set_input_files(
                    {"name": "router-log.txt", "mimeType": "text/plain", "buffer": b"WAN down 03:12\n"}
                )
                page.locator("#input").fill("What is wrong with my router?")
                expect(page.locator("#attachments .chip")).to_have_count(3)
                shoot(page, out, "attachments")
                page.locator("#input").press("Enter")
                expect(page.locator("#stop")).to_be_hidden()

                sid = page.url.rsplit("/", 1)[-1]
                page.goto(f"/debug?session={sid}")
                ready(page)
                shoot(page, out, "debug")

                light = browser.new_context(
                    base_url=server.url, viewport={"width": 1280, "height": 860}, color_scheme="light"
                )
                bright = light.new_page()
                bright.goto("/")
                ready(bright)
                shoot(bright, out, "light")  # the empty page with its examples, in the light theme
                bright.get_by_role("button", name="Settings").click()
                expect(bright.locator("#builtin-models select")).to_have_count(3)  # each profile's picker
                shoot(bright, out, "settings")

                # Filed in a folder: the phone's list shows folders above the dated groups.
                assert page.request.patch(f"/sessions/{sid}", data={"folder": "Home server"}).ok
                phone = browser.new_context(
                    base_url=server.url,
                    viewport={"width": 390, "height": 844},
                    is_mobile=True,
                    has_touch=True,
                    color_scheme="dark",
                )
                mobile = phone.new_page()
                mobile.goto(f"/#/s/{sid}")
                ready(mobile)
                shoot(mobile, out, "phone")
                mobile.get_by_role("button", name="Show conversations").click()
                shoot(mobile, out, "phone-sessions")
                browser.close()
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    take(parser.parse_args().out)


if __name__ == "__main__":
    main()
