"""GET /models/status over real HTTP against the fake model server: ready, model missing, server
unreachable or hanging, the short cache, and the token."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from navi.api.routes import models
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port as closed_port
from tests.server_helpers import live_navi

DEFAULT = "gemma4:e2b-it-q8_0"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers (a model server stuck loading)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_ready_with_the_default_profiles_model(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        body = http.get("/models/status").json()
    assert body == {
        "backend": "ollama",
        "model": DEFAULT,
        "reachable": True,
        "model_available": True,
        "detail": f"{DEFAULT} on Ollama {fake_server.version} at {fake_server.url}",
    }


def test_a_model_that_is_not_pulled(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server, ollama_default_model="missing:7b") as navi, navi.client() as http:
        body = http.get("/models/status").json()
    assert body["model"] == "missing:7b" and body["reachable"] is True
    assert body["model_available"] is False
    assert "missing:7b" in body["detail"] and "ollama pull missing:7b" in body["detail"]


def test_an_unreachable_server_names_the_setting(tmp_path: Path, fake_server: FakeModelServer) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with live_navi(tmp_path, fake_server, ollama_host=url) as navi, navi.client() as http:
        body = http.get("/models/status").json()
    assert body["reachable"] is False and body["model_available"] is None
    assert url in body["detail"] and "OLLAMA_HOST" in body["detail"]


def test_a_server_that_never_answers_is_given_up_on(
    tmp_path: Path, fake_server: FakeModelServer, silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "CHECK_TIMEOUT", 0.5)
    with live_navi(tmp_path, fake_server, ollama_host=silent_server) as navi, navi.client() as http:
        started = time.monotonic()
        body = http.get("/models/status").json()
        took = time.monotonic() - started
    assert body["reachable"] is False and "did not answer within 0.5 s" in body["detail"]
    assert took < 3


def test_the_answer_is_kept_for_a_few_seconds(
    tmp_path: Path, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with live_navi(tmp_path, fake_server) as navi, navi.client() as http:
        assert http.get("/models/status").json()["model_available"] is True
        removed = fake_server.models.pop(DEFAULT)
        try:
            assert http.get("/models/status").json()["model_available"] is True  # from the cache
            monkeypatch.setattr(models, "CACHE_SECONDS", 0.0)
            assert http.get("/models/status").json()["model_available"] is False  # asked again
        finally:
            fake_server.models[DEFAULT] = removed


def test_it_needs_the_token_like_every_other_route(tmp_path: Path, fake_server: FakeModelServer) -> None:
    token = "a-long-enough-test-token"
    with live_navi(tmp_path, fake_server, navi_api_token=token) as navi, navi.client(anonymous=True) as http:
        assert http.get("/models/status").status_code == 401
        allowed = http.get("/models/status", headers={"Authorization": f"Bearer {token}"})
        assert allowed.status_code == 200 and allowed.json()["reachable"] is True
