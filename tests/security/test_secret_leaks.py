"""Item 2 of issue 14: secrets never leak — not into the log at any level (Authorization and Cookie
headers, tokens in query strings, passwords in URLs), not into error frames or HTTP bodies (a
password inside OLLAMA_HOST), not into configuration errors (a DATABASE_URL password), not into
exports or the debug panel's views (an Authorization header the model sent with http_request).

Every path is the real one: `navi serve` at DEBUG with JSON logs, real requests and a WebSocket, a
model server whose port refuses connections, the `navi` command, and the agent calling a tool.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
from websockets.sync.client import connect

from navi.api.security import COOKIE
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.script import Reply, ScriptedCall
from tests.security.served import served_navi
from tests.server_helpers import live_navi, use_script

TOKEN = "tok-3f9a1c-never-in-a-log-42"
PASSWORD = "pw-7d2e-hunter2"


def test_a_debug_log_holds_no_token_cookie_or_password(tmp_path: Path) -> None:
    """`navi serve` with LOG_LEVEL=DEBUG: requests, a handshake and a model error are all logged,
    with every credential masked; the error the user sees names the server but not its password."""
    model_host = f"http://navi:{PASSWORD}@127.0.0.1:{free_port()}"  # nothing listens there
    with served_navi(
        tmp_path, NAVI_API_TOKEN=TOKEN, LOG_LEVEL="DEBUG", LOG_FORMAT="json", OLLAMA_HOST=model_host
    ) as navi:
        signed_in = httpx.get(f"{navi.url}/login", params={"token": TOKEN})  # the link `navi serve` prints
        assert signed_in.status_code == 303
        cookie = signed_in.cookies[COOKIE]
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=navi.url, headers=auth, timeout=30) as http:
            assert httpx.get(f"{navi.url}/sessions", cookies={COOKIE: cookie}).status_code == 200
            sid = http.post("/sessions").json()["session_id"]
            failed = http.post(f"/sessions/{sid}/messages", json={"content": "hello"})
            status = http.get("/models/status").json()
        with connect(f"{navi.url.replace('http', 'ws')}/ws/sessions/{sid}", additional_headers=auth) as ws:
            ws.send(json.dumps({"type": "message", "content": "again"}))
            frames = []
            while not frames or frames[-1]["type"] != "error":
                frames.append(json.loads(ws.recv(timeout=30)))
        with httpx.Client(base_url=navi.url, headers=auth, timeout=30) as http:
            history = http.get(f"/sessions/{sid}").text
    shown = "navi:***@127.0.0.1"
    assert failed.status_code == 502 and shown in failed.json()["detail"], failed.text
    assert shown in status["detail"] and status["reachable"] is False
    assert shown in frames[-1]["message"] and frames[-1]["code"] == "model_unreachable"
    for seen in (failed.text, json.dumps(status), json.dumps(frames), history):
        assert PASSWORD not in seen

    log = navi.output()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    received = [line for line in lines if line.get("event") == "http.received"]
    # The request lines at DEBUG carry headers and query strings — masked.
    login = next(line for line in received if line["path"] == "/login")
    assert login["query"] == "?token=***"
    with_cookie = next(line for line in received if "cookie" in line["headers"])
    assert with_cookie["headers"]["cookie"] == "***"
    bearer = next(line for line in received if "authorization" in line["headers"])
    assert bearer["headers"]["authorization"] == "Bearer ***"
    # The WebSocket library prints the handshake's headers at DEBUG itself: masked too.
    assert {"< authorization: Bearer ***", "< cookie: ***"} & {line.get("event") for line in lines}
    for secret in (TOKEN, PASSWORD, cookie):
        assert secret not in log, f"{secret!r} is in the log"


def navi_command(work: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "navi", *args],
        cwd=work,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_configuration_errors_mask_the_password(tmp_path: Path) -> None:
    not_postgres = navi_command(tmp_path, "doctor", DATABASE_URL=f"mysql://navi:{PASSWORD}@db.lan/navi")
    assert not_postgres.returncode == 2
    assert "DATABASE_URL" in not_postgres.stderr and "navi:***@db.lan" in not_postgres.stderr
    bad_port = navi_command(
        tmp_path, "serve", DATABASE_URL=f"postgresql://navi:{PASSWORD}@db.lan:fivefour/navi"
    )
    assert bad_port.returncode == 2 and "Traceback" not in bad_port.stderr, bad_port.stderr
    assert "DATABASE_URL" in bad_port.stderr and "navi:***@db.lan" in bad_port.stderr
    unreachable = navi_command(
        tmp_path,
        "doctor",
        DATABASE_URL=f"postgresql://navi:{PASSWORD}@127.0.0.1:{free_port()}/navi",
        OLLAMA_HOST=f"http://navi:{PASSWORD}@127.0.0.1:{free_port()}",
        OPENAI_BASE_URL=f"http://navi:{PASSWORD}@127.0.0.1:{free_port()}/v1",
        DEFAULT_LLM_BACKEND="ollama",
        TOOLS_DIR=str(tmp_path / "tools"),
        DB_PATH=str(tmp_path / "navi.db"),
    )
    assert unreachable.returncode == 1
    assert "cannot reach Ollama at http://navi:***@127.0.0.1" in unreachable.stdout
    assert "cannot reach the database at postgresql://navi:***@127.0.0.1" in unreachable.stdout
    for done in (not_postgres, bad_port, unreachable):
        assert PASSWORD not in done.stdout + done.stderr


def test_openai_compatible_errors_mask_the_password(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """The same through the OpenAI adapter and its own client: a refused port, over the REST API."""
    base_url = f"http://navi:{PASSWORD}@127.0.0.1:{free_port()}/v1"
    with (
        live_navi(tmp_path, fake_server, default_llm_backend="openai", openai_base_url=base_url) as navi,
        navi.client() as http,
    ):
        sid = navi.new_session()
        failed = http.post(f"/sessions/{sid}/messages", json={"content": "hello"})
        status = http.get("/models/status").json()
    assert failed.status_code == 502 and "navi:***@127.0.0.1" in failed.json()["detail"], failed.text
    assert "navi:***@127.0.0.1" in status["detail"]
    assert PASSWORD not in failed.text + json.dumps(status)


def test_exports_and_the_debug_views_mask_credentials_the_model_sent(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """The model called http_request with an Authorization header and a URL with a password. The
    stored context keeps them (the next turn may need them); what Navi hands out masks them."""
    key = "sk-live-0123456789abcdef"
    call = ScriptedCall(
        "http_request",
        {
            "method": "GET",
            "url": f"https://admin:{PASSWORD}@example.invalid/api?token={key}&page=2",
            "headers": {"Authorization": f"Bearer {key}", "X-Api-Key": key, "Accept": "application/json"},
        },
    )
    use_script(fake_server).turn(Reply(tool_calls=[call]), Reply(text="Done."))
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        sid = navi.new_session()
        assert http.post(f"/sessions/{sid}/messages", json={"content": "call my API"}).status_code == 200
        views = {
            "export": http.get(f"/sessions/{sid}/export").text,
            "session": http.get(f"/sessions/{sid}").text,
            "context": http.get(f"/sessions/{sid}/context").text,
            "window": http.get(f"/sessions/{sid}/messages", params={"last": 10}).text,
        }
        with sqlite3.connect(navi.settings.db_path) as db:
            kept = [
                row[0] for row in db.execute("SELECT data FROM session_context WHERE session_id = ?", [sid])
            ]
    for name, text in views.items():
        assert key not in text and PASSWORD not in text, name
        assert "Bearer ***" in text and "admin:***@example.invalid" in text and "page=2" in text, name
    exported = json.loads(views["export"])
    call_out = exported["messages"][1]["metadata"]["requested_tool_calls"][0]["arguments"]
    assert call_out["headers"] == {
        "Authorization": "Bearer ***",
        "X-Api-Key": "***",
        "Accept": "application/json",
    }
    # What the model needs next turn is untouched in the store.
    assert any(key in row for row in kept)
