from __future__ import annotations

import json
import logging

import pytest
from fastapi.testclient import TestClient

from navi.api.app import create_app
from navi.logging import configure_logging


def test_request_lines_carry_the_request_id(make_settings, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "json")
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
    configure_logging("WARNING", "json")
    try:
        with TestClient(create_app(make_settings()), base_url="http://localhost") as client:
            client.get("/health")
        assert "http.request" not in capsys.readouterr().err
    finally:
        logging.getLogger().handlers = [
            h for h in logging.getLogger().handlers if not getattr(h, "_navi", False)
        ]
