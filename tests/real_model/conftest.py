"""Real models for the suite: one llama-server per model for the whole run, stopped at the end.

Building llama-server (10-17 minutes the first time) and fetching the weights happen once, after
collection and before the first test, only when a collected test needs a real model — so neither
counts against a test's timeout, and `-m "not real_model"` or the replay tests alone never build.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from navi.testing.llama import LlamaServer, ServerOptions
from navi.testing.llama_files import MODELS, LlamaError, llama_server_binary, model_file
from tests.real_model.helpers import WINDOW, RealNavi, real_navi

SERVER_FIXTURES = {f"{name}_server": name for name in MODELS}
# Where the build and the weights are, as the run was started: the autouse `isolated_env` fixture
# strips NAVI_* variables before a test body runs, and a server fixture may be set up from there.
LLAMA_ENV = {
    k: v for k, v in os.environ.items() if k in ("NAVI_CACHE_DIR", "NAVI_LLAMA_SERVER", "NAVI_LLAMA_THREADS")
}


def _models_needed(item: pytest.Item) -> set[str]:
    """Models a test uses: its server fixtures, or for a `real_model` test that picks its server at
    run time (`request.getfixturevalue`), its `model` parameter — else every model."""
    named = {SERVER_FIXTURES[n] for n in getattr(item, "fixturenames", ()) if n in SERVER_FIXTURES}
    if named or item.get_closest_marker("real_model") is None:
        return named
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("model") if callspec else None
    return {param} if param in MODELS else set(MODELS)


def pytest_collection_finish(session: pytest.Session) -> None:
    wanted = set().union(*(_models_needed(item) for item in session.items))
    if not wanted or session.config.option.collectonly:
        return
    capture = session.config.pluginmanager.getplugin("capturemanager")
    reporter = session.config.pluginmanager.getplugin("terminalreporter")
    started = time.monotonic()
    with capture.global_and_fixture_disabled() if capture else nullcontext():
        if reporter:
            reporter.write_line(
                f"real-model tests: llama-server and {', '.join(sorted(wanted))} (cached after once)"
            )
        try:
            llama_server_binary()
            for name in sorted(wanted):
                model_file(name)
        except LlamaError as exc:
            pytest.exit(f"the real-model tests need llama-server and their models: {exc}", returncode=3)
        if reporter:
            reporter.write_line(f"real-model dependencies ready in {time.monotonic() - started:.0f} s")


# In a parallel run the model shares the cores with the other workers: one thread, unless
# NAVI_LLAMA_THREADS says otherwise. llama.cpp's threads meet at a barrier at every step, and a
# thread the busy machine has paused holds the others there: measured with four busy processes
# beside it, a greeting on SmolLM2 took 101 s on two threads and 32 s on one.
PARALLEL_THREADS = None if "NAVI_LLAMA_THREADS" in LLAMA_ENV or "PYTEST_XDIST_WORKER" not in os.environ else 1


def _serve(name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    logs = tmp_path_factory.mktemp(f"llama-{name}")
    with patch.dict(os.environ, LLAMA_ENV):
        options = ServerOptions(ctx=WINDOW, threads=PARALLEL_THREADS)
        server = LlamaServer(name, options, log_path=logs / "llama-server.log").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def smollm2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """SmolLM2-135M-Instruct with its own ChatML template, a 4,096-token window."""
    yield from _serve("smollm2", tmp_path_factory)


@pytest.fixture(scope="session")
def gemma3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """Gemma 3 270M with the official instruct template (strict role alternation), 4,096 tokens."""
    yield from _serve("gemma3", tmp_path_factory)


@pytest.fixture
def navi_on(tmp_path: Path) -> Callable[..., AbstractContextManager[RealNavi]]:
    """`with navi_on(server, scenario="greeting-smollm2") as real:` — a live Navi on that model,
    through a recording proxy; `record=True` (or NAVI_RECORD_REAL_MODEL=1) saves the exchanges."""

    def start(server: LlamaServer, **kw: Any) -> AbstractContextManager[RealNavi]:
        return real_navi(server.url, server.model, tmp_path, window=server.ctx, **kw)

    return start
