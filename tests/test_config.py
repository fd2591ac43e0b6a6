"""Settings: reference names and defaults, the persona file rule, clear errors for bad values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from navi.config import Settings, SettingsError, load_settings

REFERENCE_DEFAULTS = {
    "OLLAMA_HOST": "http://localhost:11434",
    "OLLAMA_DEFAULT_MODEL": "gemma4:e2b-it-q8_0",
    "OLLAMA_NUM_CTX": 65536,
    "OLLAMA_THINK": True,
    "OPENAI_API_KEY": "",
    "ANTHROPIC_API_KEY": "",
    "FS_ALLOWED_PATHS": "*",
    "TERMINAL_ALLOWED_COMMANDS": "*",
    "SSH_HOSTS_FILE": "ssh_hosts.json",
    "DB_PATH": "navi.db",
    "LOG_LEVEL": "INFO",
    "TOOLS_DIR": "tools",
    "SESSION_FILES_DIR": "session_files",
    "SESSION_FILES_MAX_SIZE_MB": 200,
    "SESSION_FILES_TTL_HOURS": 24,
    "CONTEXT_COMPRESSION_ENABLED": True,
    "CONTEXT_COMPRESSION_THRESHOLD": 0.80,
    "CONTEXT_KEEP_RECENT": 10,
    "CONTEXT_SUMMARY_TEMPERATURE": 0.3,
    "NAVI_PERSONA": "",
    "NAVI_PERSONA_FILE": "",
    "DATABASE_URL": "",
    "NAVI_HOST": "127.0.0.1",
    "NAVI_PORT": 8000,
    "NAVI_API_TOKEN": "",
    "OPENAI_BASE_URL": "",
}


def test_reference_variables_and_defaults() -> None:
    settings = load_settings()
    for name, default in REFERENCE_DEFAULTS.items():
        assert getattr(settings, name.lower()) == default, name
    assert settings.fs_allowed_paths_list == ["*"]
    assert settings.terminal_allowed_commands_list == ["*"]


def test_every_variable_is_documented_in_env_example() -> None:
    example = (Path(__file__).parents[1] / ".env.example").read_text()
    for name in Settings.model_fields:
        assert f"{name.upper()}=" in example, f"{name.upper()} missing from .env.example"


def test_environment_and_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OLLAMA_NUM_CTX=8192\nOLLAMA_THINK=false\nLOG_LEVEL=debug\n")
    monkeypatch.setenv("FS_ALLOWED_PATHS", "/srv/data, /home/me/docs ,")
    monkeypatch.setenv("TERMINAL_ALLOWED_COMMANDS", "ls,cat,df")
    settings = load_settings()
    assert settings.ollama_num_ctx == 8192
    assert settings.ollama_think is False
    assert settings.log_level == "DEBUG"
    assert settings.fs_allowed_paths_list == ["/srv/data", "/home/me/docs"]
    assert settings.terminal_allowed_commands_list == ["ls", "cat", "df"]


def test_persona_file_read_when_inline_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    persona = tmp_path / "persona.txt"
    persona.write_text("You are Navi.\nLine two.\n")
    monkeypatch.setenv("NAVI_PERSONA_FILE", str(persona))
    assert load_settings().navi_persona == "You are Navi.\nLine two."
    monkeypatch.setenv("NAVI_PERSONA", "Inline wins.")
    assert load_settings().navi_persona == "Inline wins."


def test_missing_persona_file_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVI_PERSONA_FILE", "/nonexistent/persona.txt")
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert "NAVI_PERSONA_FILE" in str(err.value)
    assert "/nonexistent/persona.txt" in str(err.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OLLAMA_NUM_CTX", "lots"),
        ("CONTEXT_COMPRESSION_THRESHOLD", "1.5"),
        ("LOG_LEVEL", "LOUD"),
        ("OLLAMA_HOST", "localhost:11434"),
        ("NAVI_PORT", "70000"),
        ("OLLAMA_THINK", "maybe"),
        ("DATABASE_URL", "mysql://x"),
        ("DEFAULT_LLM_BACKEND", "gpt"),
        ("SANDBOX_MODE", "sometimes"),
        ("SANDBOX_NETWORK", "perhaps"),
    ],
)
def test_invalid_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert name in str(err.value)
    assert value in str(err.value)


def test_sandbox_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert settings.sandbox_mode == "auto" and settings.sandbox_network is True
    monkeypatch.setenv("SANDBOX_MODE", " Required ")
    monkeypatch.setenv("SANDBOX_NETWORK", "false")
    settings = load_settings()
    assert settings.sandbox_mode == "required" and settings.sandbox_network is False


def test_secrets_are_not_echoed_in_errors() -> None:
    with pytest.raises(SettingsError) as err:
        load_settings(openai_api_key=["not", "a", "string"], ollama_num_ctx="x")
    assert "OPENAI_API_KEY" in str(err.value)
    assert "not" not in str(err.value).split("OPENAI_API_KEY", 1)[1].split(";")[0]


def test_no_settings_built_at_import(tmp_path: Path) -> None:
    """Importing the whole package must not read settings (a bad value only fails at start-up)."""
    code = (
        "import navi.api.app, navi.cli, navi.compose, navi.llm.registry, navi.testing.fake_server; "
        "print('imported')"
    )
    env = {"PATH": "/usr/bin:/bin", "OLLAMA_NUM_CTX": "not-a-number"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "imported"


def test_loopback_detection() -> None:
    settings = load_settings()
    assert settings.listens_on_loopback("127.0.0.1")
    assert settings.listens_on_loopback("::1")
    assert settings.listens_on_loopback("localhost")
    assert not settings.listens_on_loopback("0.0.0.0")
    assert not settings.listens_on_loopback("192.168.1.10")
