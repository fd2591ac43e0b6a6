"""Navi's answers stay out of caches (issue 41, item 3): every answer but the page's shell carries
`Cache-Control: no-store`, so a browser keeps no copy of a conversation, a memory fact or a
schedule to be read from its cache after signing out. Checked by walking every route the app
has, with a session, a message, a fact, a schedule and an upload in place to answer with."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Mount

from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, live_navi

SECRET = "the combination is 31-7-42"
SHELL = {"/", "/debug", "/docs", "/redoc", "/manifest.webmanifest", "/sw.js"}  # and /static/…


def is_shell(url: str) -> bool:
    """The pages and their files: nothing of anybody's, cached as before (the service worker's shell)."""
    return url in SHELL or url.startswith("/static/")


def routes(items: Iterable[Any], prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    """(path, methods) of every route, routers included into the app included (a mount: GET)."""
    for route in items:
        inner = getattr(route, "original_router", None)
        if inner is not None:  # FastAPI's included router
            yield from routes(inner.routes, prefix + route.include_context.prefix)
        elif isinstance(route, Mount):
            yield prefix + route.path, {"GET"}
        elif getattr(route, "methods", None):
            yield prefix + route.path, set(route.methods)


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server) as server:
        yield server


class Anything(dict[str, str]):
    """Path parameters: the ids made above, "x" for any other (a route added later is walked too)."""

    def __missing__(self, key: str) -> str:
        return "x"


def test_every_answer_but_the_shell_is_no_store(navi: LiveNavi) -> None:
    with navi.client() as http:
        made = http.post("/sessions", json={"name": "Safe"})
        assert made.headers["cache-control"] == "no-store"
        session_id = made.json()["session_id"]
        stored = http.post(
            f"/sessions/{session_id}/messages", json={"role": "user", "content": SECRET, "respond": False}
        )
        message_id = stored.json()["message_id"]
        fact = http.post("/memory/facts", json={"category": "home", "key": "safe", "value": SECRET})
        fact_id = fact.json()["fact"]["id"]
        schedule = http.post("/schedules", json={"prompt": SECRET, "every_seconds": 3600, "paused": True})
        schedule_id = schedule.json()["id"]
        upload = http.post(f"/sessions/{session_id}/files", files={"file": ("safe.txt", SECRET.encode())})
        assert upload.status_code == 201
        shelf = http.post("/collections", json={"name": "Safe"}).json()["id"]
        document = http.post(
            f"/collections/{shelf}/documents", files={"file": ("safe.md", SECRET.encode())}
        ).json()[0]["id"]
        for _ in range(300):  # indexed, so that its passage is there to answer with
            if http.get(f"/documents/{document}").json()["state"] == "ready":
                break
            time.sleep(0.05)
        chunk_id = http.get("/documents/search", params={"q": "combination"}).json()[0]["chunk_id"]
        values = {
            "collection_id": shelf,
            "document_id": document,
            "chunk_id": chunk_id,
            "session_id": session_id,
            "message_id": message_id,
            "fact_id": fact_id,
            "schedule_id": schedule_id,
            "model_id": "x",
            "call_id": "x",
            "tool": "x",
        }
        answered: dict[str, httpx.Response] = {}
        for path, methods in sorted(routes(navi.app.routes)):
            if "GET" not in methods or path.startswith("/ws/"):
                continue
            url = path.format_map(Anything(values)) if path != "/static" else "/static/app.css"
            with http.stream("GET", url, timeout=10) as answer:
                if path != "/mcp":  # its GET is an event stream that stays open: the head is enough
                    answer.read()
            answered[path] = answer
            if is_shell(url):
                assert "no-store" not in answer.headers.get("cache-control", ""), url
            else:
                assert answer.headers.get("cache-control") == "no-store", (url, answer.status_code)
        # The walk reached the answers that hold what was said and kept, not only refusals.
        for path in (
            "/sessions",
            "/sessions/{session_id}",
            "/sessions/{session_id}/messages",
            "/sessions/{session_id}/export",
            "/memory/facts",
            "/schedules",
            "/schedules/{schedule_id}",
            "/documents/{document_id}/file",
            "/documents/chunks/{chunk_id}",
        ):
            answer = answered[path]
            assert answer.status_code == 200, (path, answer.text)
            assert "Safe" in answer.text or SECRET in answer.text, path
        assert {"/", "/static", "/sw.js", "/login", "/health", "/openapi.json", "/mcp"} <= set(answered)
        # Answers to changes, refusals and other methods too.
        for answer in (
            stored,
            fact,
            schedule,
            upload,
            http.patch(f"/sessions/{session_id}", json={"name": "Safer"}),
            http.get("/sessions/not-a-session"),
        ):
            assert answer.headers["cache-control"] == "no-store", answer.request.url
    with navi.client(anonymous=True) as stranger:
        refused = stranger.get(f"/sessions/{session_id}")
        assert refused.status_code == 401 and refused.headers["cache-control"] == "no-store"
