"""A live Navi server (uvicorn in a thread, real TCP) in front of the fake model server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from navi.api.app import create_app
from navi.config import Settings, load_settings
from navi.net.tls import ca_context
from navi.testing.agent_script import AgentScript
from navi.testing.fake_server import FakeModelServer
from navi.testing.threaded import ThreadedServer


class LiveNavi:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app = create_app(settings)
        self.server = ThreadedServer(self.app, name="navi", websockets=True, lifespan=True)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def ws_base(self) -> str:
        return self.url.replace("http://", "ws://")

    @property
    def runtime(self) -> Any:
        return self.app.state.runtime

    @property
    def runs(self) -> Any:
        return self.app.state.runs

    @property
    def token(self) -> str:
        """The token this Navi asks for: the one set, else the one it made (as a client of the
        same user reads it from the token file)."""
        return str(self.app.state.access.token)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def client(self, *, anonymous: bool = False, **kw: Any) -> httpx.Client:
        """An HTTP client that signs in like a client of the same user (`anonymous`: without it)."""
        headers = {} if anonymous else dict(self.auth)
        headers.update(kw.pop("headers", None) or {})
        kw.setdefault("verify", ca_context())  # not the certificate store loaded again each time
        return httpx.Client(base_url=self.url, timeout=30, headers=headers, **kw)

    def new_session(self, profile_id: str | None = None, **kw: Any) -> str:
        with self.client(**kw) as http:
            resp = http.post("/sessions", json={"profile_id": profile_id} if profile_id else None)
            assert resp.status_code == 201, resp.text
            return str(resp.json()["session_id"])

    @asynccontextmanager
    async def socket(
        self, session_id: str, query: str = "", *, anonymous: bool = False, **kw: Any
    ) -> AsyncIterator[ClientConnection]:
        headers = {} if anonymous else dict(self.auth)
        headers.update(kw.pop("additional_headers", None) or {})
        url = f"{self.ws_base}/ws/sessions/{session_id}{query}"
        async with connect(url, open_timeout=10, additional_headers=headers, **kw) as ws:
            yield ws


@contextmanager
def live_navi(tmp_path: Path, fake: FakeModelServer, **overrides: Any) -> Iterator[LiveNavi]:
    base: dict[str, Any] = {
        "db_path": str(tmp_path / "navi.db"),
        "session_files_dir": str(tmp_path / "session_files"),
        "tools_dir": str(tmp_path / "tools"),
        "skills_dir": str(tmp_path / "skills"),
        "navi_browser_profiles_dir": str(tmp_path / "browser_profiles"),
        "ollama_host": fake.url,
        "log_level": "WARNING",
        # No person answers approvals in these tests; approval tests ask for their mode.
        "navi_approval_mode": "auto",
    }
    base.update(overrides)
    navi = LiveNavi(load_settings(**base))
    navi.server.start()
    try:
        yield navi
    finally:
        navi.server.stop()


async def frames_until(
    ws: ClientConnection, *types: str, limit: int = 2000, updates: bool = False, within: float = 60.0
) -> list[dict[str, Any]]:
    """Receive frames until one of `types` arrives (inclusive). `session_updated` frames (which
    belong to no run and arrive whenever naming finishes) are left out unless asked for
    (`updates=True`, or waiting for one)."""
    got: list[dict[str, Any]] = []
    for _ in range(limit):
        try:
            frame = json.loads(await asyncio.wait_for(ws.recv(), within))
        except TimeoutError:
            raise AssertionError(
                f"no {types} within {within} s: {[f['type'] for f in got][-20:]} {got[-1:]}"
            ) from None
        if frame["type"] == "session_updated" and not updates and "session_updated" not in types:
            continue
        got.append(frame)
        if frame["type"] in types:
            return got
    raise AssertionError(f"no {types} within {limit} frames: {[f['type'] for f in got][-20:]}")


def joined(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`frames` with consecutive deltas of one type and run joined, as a socket that is behind gets
    them (the last one's `seq`): two sockets that saw the same run compare equal this way."""
    out: list[dict[str, Any]] = []
    for frame in frames:
        last = out[-1] if out else None
        if (
            last is not None
            and frame["type"] in ("thinking_delta", "stream_delta")
            and (last["type"], last.get("run_id")) == (frame["type"], frame.get("run_id"))
        ):
            out[-1] = {**frame, "delta": last["delta"] + frame["delta"]}
        else:
            out.append(frame)
    return out


def kinds(frames: list[dict[str, Any]], *, status: bool = False) -> list[str]:
    """Frame types, runs of one delta type collapsed; Navi's additive `status` frames left out
    unless asked for, and `session_updated` (which belongs to no run) always, so the reference
    sequences read as the reference writes them."""
    out: list[str] = []
    for f in frames:
        if (f["type"] == "status" and not status) or f["type"] == "session_updated":
            continue
        if f["type"] in ("thinking_delta", "stream_delta") and out and out[-1] == f["type"]:
            continue
        out.append(f["type"])
    return out


def talk(navi: LiveNavi, name: str, messages: list[str]) -> tuple[str, list[dict[str, str]]]:
    """A session named `name` in which each message was sent and answered; its display messages."""
    with navi.client() as http:
        sid = http.post("/sessions", json={"name": name}).json()["session_id"]
        for content in messages:
            assert http.post(f"/sessions/{sid}/messages", json={"content": content}).status_code == 200
        return sid, http.get(f"/sessions/{sid}").json()["messages"]


def use_script(fake: FakeModelServer) -> AgentScript:
    script = AgentScript()
    fake.script = script
    return script


def app_client(app: Any) -> Any:
    """Starlette's TestClient on `app`, signed in with the app's token like a client of its user."""
    from fastapi.testclient import TestClient

    token = app.state.access.token
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return TestClient(app, base_url="http://localhost", headers=headers)
