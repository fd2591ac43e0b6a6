"""`LlamaServer`: a real llama-server on a free port, reported as Navi needs it, stopped for good."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from navi.testing.llama import LlamaServer, ServerOptions
from navi.testing.llama_files import LlamaError
from tests.real_model.helpers import WINDOW

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(300)]


def test_the_server_reports_its_model_and_window(smollm2_server: LlamaServer) -> None:
    assert smollm2_server.base_url == f"{smollm2_server.url}/v1"
    listed = httpx.get(f"{smollm2_server.base_url}/models", timeout=10).json()["data"]
    assert [m["id"] for m in listed] == [smollm2_server.model] == ["smollm2-135m-instruct"]
    assert smollm2_server.props()["default_generation_settings"]["n_ctx"] == WINDOW == smollm2_server.ctx


def test_gemma_is_served_with_the_instruct_template(gemma3_server: LlamaServer) -> None:
    template = gemma3_server.props()["chat_template"]
    assert gemma3_server.template is not None and gemma3_server.template.name == "gemma3-it.jinja"
    assert template.strip() == gemma3_server.template.read_text().strip()


def test_stopping_ends_the_process_and_frees_the_port(tmp_path: Path) -> None:
    with LlamaServer("smollm2", ServerOptions(ctx=512), log_path=tmp_path / "log") as server:
        proc = server._proc
        assert proc is not None and httpx.get(f"{server.url}/health", timeout=5).status_code == 200
    assert proc.poll() is not None and not server.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/health", timeout=5)


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF file" * 100)
    with pytest.raises(LlamaError) as failed:
        LlamaServer(broken, log_path=tmp_path / "broken.log", startup_timeout=60).start()
    message = str(failed.value)
    assert "exited with code" in message and str(tmp_path / "broken.log") in message
    assert "gguf" in message.lower().split("log", 1)[1]  # the tail of llama-server's own log
