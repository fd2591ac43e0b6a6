"""The model backends are registered in one place (`navi.llm.backends.BACKENDS`): each entry names a
real backend and real settings, and a backend added there alone is accepted by the settings, built
by the composition root, and named in the fixes `navi doctor` and the page's status light give."""

from __future__ import annotations

from pathlib import Path

import pytest

from navi.api.routes import models
from navi.cli.doctor import run_checks
from navi.compose.models import build_backends, build_profiles
from navi.config import Settings, SettingsError
from navi.llm import backends
from navi.llm.backends import BACKENDS, BackendKind
from navi.llm.base import LLMBackend, ServerStatus


def test_each_entry_names_its_backend_and_settings_that_exist(make_settings) -> None:
    settings = make_settings()
    fields = Settings.model_fields
    assert backends.names() == ["ollama", "openai", "anthropic"]
    for kind in BACKENDS:
        assert kind.load().name == kind.name
        assert kind.default_model in fields and all(setting in fields for setting in kind.options.values())
        assert kind.server_setting.lower() in fields
        built = build_backends(settings, timeout=2).get(kind.name)
        assert type(built) is kind.load()


class EchoBackend(LLMBackend):
    """A backend that exists only in this test: its server never answers."""

    name = "echo"

    def __init__(self, base_url: str, *, timeout: float, connect_timeout: float) -> None:
        self.where = base_url or "nowhere"
        self.timeouts = (timeout, connect_timeout)

    async def status(self) -> ServerStatus:
        return ServerStatus(ok=False, detail=f"nothing answers at {self.where}")


ECHO = BackendKind(
    "echo",
    f"{__name__}:EchoBackend",
    options={"base_url": "openai_base_url"},  # a real backend declares its own in llm/settings.py
    default_model="openai_default_model",
    server_setting="OPENAI_BASE_URL",
    server_fix="start the echo server (now {where})",
    pull="run `echo fetch {model}`",
)


@pytest.fixture
def with_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "BACKENDS", (*BACKENDS, ECHO))


def test_an_unregistered_backend_is_refused_by_the_settings(make_settings) -> None:
    with pytest.raises(SettingsError, match="DEFAULT_LLM_BACKEND: must be one of ollama, openai, anthropic"):
        make_settings(default_llm_backend="echo")


async def test_a_backend_registered_in_the_catalogue_alone_is_used_everywhere(
    with_echo: None, make_settings, tmp_path: Path
) -> None:
    settings = make_settings(
        default_llm_backend="echo",
        openai_base_url="http://echo.local:9",
        openai_default_model="echo-1",
        tools_dir=str(tmp_path / "tools"),
    )
    registry = build_backends(settings, timeout=2)
    echo = registry.get("echo")
    assert isinstance(echo, EchoBackend)
    assert (echo.where, echo.timeouts) == ("http://echo.local:9", (2, 2))
    profiles = build_profiles(settings, registry)
    default = profiles.get(profiles.default_id)
    assert (profiles.backend_of(default), profiles.model_of(default)) == ("echo", "echo-1")

    light = await models.check(profiles, registry)
    assert light.detail == "nothing answers at http://echo.local:9 (check OPENAI_BASE_URL)"

    checks = [check async for check in run_checks(settings)]
    down = next(c for c in checks if c.what == "nothing answers at http://echo.local:9")
    assert down.fix == "start the echo server (now http://echo.local:9)"
    assert backends.spelled_out() == "ollama, openai, anthropic or echo"
