from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from navi.api.app import create_app
from navi.logging import configure_logging


def test_request_lines_carry_the_request_id(make_settings, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("DEBUG", "json")  # the access log is at DEBUG
    try:
        with TestClient(create_app(make_settings()), base_url="http://localhost") as client:
            resp = client.get("/health", headers={"X-Request-Id": "req-abc123"})
        assert resp.headers["x-request-id"] == "req-abc123"
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
        access = [line for line in lines if line.get("event") == "http.request"]
        assert access and access[0]["request_id"] == "req-abc123"
        assert access[0]["status"] == 200 and access[0]["path"] == "/health"
        assert any(line.get("event") == "navi.started" for line in lines)
    finally:
        logging.getLogger().handlers = [
            h for h in logging.getLogger().handlers if not getattr(h, "_navi", False)
        ]


def test_level_filters_lines(make_settings, capsys: pytest.CaptureFixture[str]) -> None:
    """At the default level (INFO) no access-log line is written: a page polling every few seconds
    would bury the sign-in link and every warning under them."""
    configure_logging("INFO", "json")
    try:
        with TestClient(create_app(make_settings()), base_url="http://localhost") as client:
            client.get("/health")
        assert "http.request" not in capsys.readouterr().err
    finally:
        logging.getLogger().handlers = [
            h for h in logging.getLogger().handlers if not getattr(h, "_navi", False)
        ]


async def test_tool_seeding_and_load_errors_are_logged_once(tmp_path: Path) -> None:
    from structlog.testing import capture_logs

    from navi.compose import build_runtime
    from navi.config import load_settings
    from navi.sessions.memory_store import InMemorySessionStore

    tools_dir = tmp_path / "tools"
    settings = load_settings(db_path=str(tmp_path / "n.db"), tools_dir=str(tools_dir))
    with capture_logs() as first:  # a new folder: seeded
        rt = await build_runtime(settings, sessions=InMemorySessionStore())
    await rt.aclose()
    (tools_dir / "broken.py").write_text("def oops(:\n")
    with capture_logs() as second:  # a broken user tool
        rt = await build_runtime(settings, sessions=InMemorySessionStore())
    await rt.aclose()
    events = [entry["event"] for entry in [*first, *second]]
    assert events.count("tools_dir_seeded") == 1
    assert events.count("user_tool_load_failed") == 1
    assert "tools.load_error" not in events and "tools.seeded" not in events


def test_uvicorn_lines_of_normal_sockets_are_not_labelled_error(capsys: pytest.CaptureFixture[str]) -> None:
    """uvicorn logs everything through "uvicorn.error": its normal lines are named "uvicorn", and
    its line for each WebSocket opened is an access-log line, written at DEBUG only."""
    uvicorn = logging.getLogger("uvicorn.error")
    try:
        configure_logging("INFO", "json")
        uvicorn.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:5000", "/ws/sessions/x")
        uvicorn.info("Started server process [%d]", 42)
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
        assert [(line["event"], line["logger"], line["level"]) for line in lines] == [
            ("Started server process [42]", "uvicorn", "info")
        ]
        configure_logging("DEBUG", "json")
        uvicorn.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:5000", "/ws/sessions/x")
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
        assert [line["logger"] for line in lines] == ["uvicorn"] and "WebSocket" in lines[0]["event"]
    finally:
        logging.getLogger().handlers = [
            h for h in logging.getLogger().handlers if not getattr(h, "_navi", False)
        ]
        uvicorn.filters = []
