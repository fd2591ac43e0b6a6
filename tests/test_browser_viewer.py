"""The sign-in viewer's socket, /ws/browser/viewer, on a live Navi with its own Chromium (the
browser tool's) and the test's page server: the token, each user's sign-in in their own folder,
bad frames answered with an error (the socket goes on), what is typed never in a log nor an error,
and a sign-in saved from keys alone (Tab, text, Enter)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from navi.testing.fake_server import FakeModelServer
from tests.helpers.browser_pages import PageServer
from tests.server_helpers import LiveNavi, live_navi
from tests.test_documents_api import as_user

pytestmark = pytest.mark.browser
SECRET = "s3cret"


@pytest.fixture
def pages() -> Iterator[PageServer]:
    server = PageServer().start()
    yield server
    server.stop()


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer, pages: PageServer) -> Iterator[LiveNavi]:
    allowed = f"127.0.0.1:{pages.port}"
    with live_navi(tmp_path, fake_server, navi_fetch_allowed_hosts=allowed, log_level="DEBUG") as server:
        yield server


async def until(ws: ClientConnection, kind: str, *, where: Any = None) -> dict[str, Any]:
    """The next frame of `kind` (for which `where(frame)` holds); an error frame on the way fails."""
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if frame["type"] == kind and (where is None or where(frame)):
            return frame
        assert frame["type"] == "viewer_frame", frame


async def error(ws: ClientConnection) -> str:
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if frame["type"] == "viewer_error":
            return str(frame["message"])


async def test_a_user_signs_in_through_the_viewer_socket(navi: LiveNavi, pages: PageServer) -> None:
    url = f"{navi.ws_base}/ws/browser/viewer"
    with pytest.raises(InvalidStatus) as refused:
        async with connect(url, open_timeout=10):
            pass
    assert refused.value.response.status_code in (401, 403)
    alice = await asyncio.to_thread(as_user, navi, "alice")  # the CLI runs its own event loop
    headers = {"Authorization": alice.headers["Authorization"]}
    with capture_logs() as logs:
        async with connect(url, open_timeout=10, additional_headers=headers, max_size=2**24) as ws:
            await ws.send(json.dumps({"type": "viewer_text", "text": SECRET}))
            assert (await error(ws)) == (
                "no sign-in is under way: start one (its name and the site's address)"
            )
            await ws.send(json.dumps({"type": "viewer_start", "name": "../x", "url": pages.local("/login")}))
            assert (await error(ws)).startswith("bad frame: viewer_start.name: String should match pattern")
            await ws.send(json.dumps({"type": "viewer_key", "key": SECRET}))
            assert SECRET not in await error(ws)  # a frame's input is never said back
            await ws.send("{not json")
            assert (await error(ws)).startswith("bad frame")

            await ws.send(json.dumps({"type": "viewer_start", "name": "shop", "url": pages.local("/login")}))
            first = await until(ws, "viewer_frame")
            assert (first["title"], first["url"], first["width"], first["height"]) == (
                "Sign in",
                pages.local("/login"),
                1280,
                800,
            )
            assert first["image"].startswith("data:image/jpeg;base64,")
            for frame in (
                {"type": "viewer_key", "key": "Tab"},
                {"type": "viewer_text", "text": "alice"},
                {"type": "viewer_key", "key": "Tab"},
                {"type": "viewer_text", "text": SECRET},
                {"type": "viewer_key", "key": "Enter"},
            ):
                await ws.send(json.dumps(frame))
            await until(ws, "viewer_frame", where=lambda f: f["url"] == pages.local("/account"))
            await ws.send(json.dumps({"type": "viewer_save"}))
            saved = await until(ws, "viewer_saved")
            assert saved == {"type": "viewer_saved", "name": "shop", "sites": ["127.0.0.1"]}
    assert {"path": "/login", "user": "alice", "password": SECRET} in pages.posts
    assert any(entry.get("event") == "viewer.saved" for entry in logs)  # the log was captured…
    assert SECRET not in json.dumps(logs, default=str)  # …and what was typed is not in it
    folder = Path(navi.settings.navi_browser_profiles_dir)
    kept = folder / "alice" / "shop.json"
    assert SECRET not in kept.read_text() and "alice-session" in kept.read_text()
    # Alice's, not the owner's.
    assert [p["name"] for p in alice.get("/browser/profiles").json()["profiles"]] == ["shop"]
    owners = await asyncio.to_thread(httpx.get, f"{navi.url}/browser/profiles", headers=navi.auth)
    assert owners.json() == {"profiles": []}
    alice.close()
