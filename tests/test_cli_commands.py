"""The rest of the `navi` command: tools (against a live Navi), config, sessions rename/delete,
--version; each problem one line with the fix."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from navi import __version__
from navi.cli.main import _register, app
from navi.compose import build_runtime
from navi.config import Settings, load_settings
from navi.llm.messages import Message
from navi.sessions.models import Session, new_session_id
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import live_navi

_register()
runner = CliRunner()

GREET_TOOL = """
name = "greet"
description = "Greet someone by name.\\nA second line that list leaves out."
parameters = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}


async def execute(params):
    return "hello " + params["who"]
"""


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert (result.exit_code, result.output) == (0, f"navi {__version__}\n")


def test_tools_list_show_reload(tmp_path: Path, fake_server: FakeModelServer) -> None:
    with live_navi(tmp_path, fake_server) as navi:
        # LOG_LEVEL=ERROR: the command sets up logging for this whole process, Navi's server included,
        # whose lines would otherwise mix into what the command prints.
        env = {
            "NAVI_PORT": navi.url.rsplit(":", 1)[1],
            "DB_PATH": str(tmp_path / "navi.db"),
            "LOG_LEVEL": "ERROR",
        }
        listed = runner.invoke(app, ["tools", "list"], env=env)
        assert listed.exit_code == 0, listed.output
        assert any(line.split()[:2] == ["web_search", "built-in"] for line in listed.output.splitlines())
        assert "greet" not in listed.output

        tools = tmp_path / "tools"
        (tools / "greet.py").write_text(GREET_TOOL)
        (tools / "broken.py").write_text("name = 'broken'\n")
        reloaded = runner.invoke(app, ["tools", "reload"], env=env)
        assert reloaded.exit_code == 1  # a file failed
        assert "greet" in reloaded.output.splitlines()[0]
        assert "✗ broken.py: " in reloaded.output

        listed = runner.invoke(app, ["tools", "list"], env=env)
        greet = [ln.split(None, 2) for ln in listed.output.splitlines() if ln.startswith("greet ")]
        assert greet == [["greet", "user", "Greet someone by name."]]  # the first line only
        shown = runner.invoke(app, ["tools", "show", "greet"], env=env)
        assert shown.exit_code == 0, shown.output
        assert shown.output.startswith("greet (user tool)\n\nGreet someone by name.\nA second line")
        assert json.loads(shown.output.split("Parameters:\n", 1)[1])["required"] == ["who"]

        as_json = json.loads(runner.invoke(app, ["tools", "list", "--json"], env=env).output)
        assert {"greet", "web_search"} <= {t["name"] for t in as_json}

        missing = runner.invoke(app, ["tools", "show", "gree"], env=env)
        assert (missing.exit_code, missing.output) == (1, "navi: no tool 'gree' — did you mean greet?\n")

        (tools / "broken.py").unlink()
        assert runner.invoke(app, ["tools", "reload"], env=env).exit_code == 0

        no_token = runner.invoke(app, ["tools", "list"], env={**env, "DB_PATH": str(tmp_path / "x" / "n.db")})
        assert no_token.exit_code == 1
        assert no_token.output.startswith(
            f"navi: Navi at {navi.url} asks for an access token — set NAVI_API_TOKEN"
        )
        assert no_token.output.count("\n") == 1

    gone = runner.invoke(app, ["tools", "list"], env=env)
    assert (gone.exit_code, gone.output.count("\n")) == (1, 1)
    assert (
        "cannot reach Navi at http://127.0.0.1:" in gone.output
        and "start it with `navi serve`" in gone.output
    )
    bad = runner.invoke(app, ["tools", "list", "--url", "ftp://x"], env=env)
    assert bad.exit_code == 2 and "is not Navi's address" in bad.output


def test_config_shows_values_sources_and_masks_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("OLLAMA_NUM_CTX=8192\nOPENAI_API_KEY=sk-very-secret\n")
    env = {
        "NAVI_PORT": "9123",
        "NAVI_API_TOKEN": "tok-very-secret",
        "DATABASE_URL": "postgresql://navi:pg-very-secret@db.lan/navi",
        "DB_PATH": str(tmp_path / "n.db"),
    }
    result = runner.invoke(app, ["config"], env=env)
    assert result.exit_code == 0, result.output
    assert "very-secret" not in result.output
    rows = {line.split("=", 1)[0]: line for line in result.output.splitlines()[1:]}
    assert set(rows) == {name.upper() for name in Settings.model_fields}
    assert rows["NAVI_PORT"].split() == ["NAVI_PORT=9123", "environment"]
    assert rows["OLLAMA_NUM_CTX"].split() == ["OLLAMA_NUM_CTX=8192", ".env"]
    assert rows["OLLAMA_HOST"].split() == ["OLLAMA_HOST=http://localhost:11434", "default"]
    assert rows["OPENAI_API_KEY"].split() == ["OPENAI_API_KEY=******", "(set)", ".env"]
    assert rows["NAVI_API_TOKEN"].split() == ["NAVI_API_TOKEN=******", "(set)", "environment"]
    assert rows["DATABASE_URL"].split() == [
        "DATABASE_URL=postgresql://navi:******@db.lan/navi",
        "environment",
    ]
    assert rows["NAVI_URL"].split() == ["NAVI_URL=", "default", "(empty:", "http://127.0.0.1:9123)"]
    assert rows["NAVI_TOKEN_FILE"].endswith(f"(empty: {tmp_path / 'navi_token'})")

    one = runner.invoke(app, ["config", "ollama_num_ctx", "--json"], env=env)
    assert json.loads(one.output) == [{"name": "OLLAMA_NUM_CTX", "value": "8192", "source": ".env"}]
    unknown = runner.invoke(app, ["config", "OLLAMA_HOTS"], env=env)
    assert (unknown.exit_code, unknown.output) == (
        1,
        "navi: no setting OLLAMA_HOTS — `navi config` lists them all\n",
    )
    invalid = runner.invoke(app, ["config"], env={**env, "NAVI_PORT": "lots"})
    assert invalid.exit_code == 2 and invalid.output.count("\n") == 1 and "NAVI_PORT" in invalid.output


async def _seed(settings: Settings, name: str) -> str:
    rt = await build_runtime(settings)
    try:
        session = Session(id=new_session_id(), profile_id="secretary", name=name)
        session.messages = [Message(role="user", content="hi"), Message(role="assistant", content="hello")]
        await rt.sessions.insert(session)
        files = Path(settings.session_files_dir) / session.id
        files.mkdir(parents=True)
        (files / "notes.txt").write_text("x")
        return session.id
    finally:
        await rt.aclose()


def test_sessions_rename_and_delete(tmp_path: Path) -> None:
    env = {
        "DB_PATH": str(tmp_path / "n.db"),
        "SESSION_FILES_DIR": str(tmp_path / "files"),
        "TOOLS_DIR": str(tmp_path / "tools"),
    }
    settings = load_settings(**{k.lower(): v for k, v in env.items()})
    first, second = asyncio.run(_seed(settings, "First")), asyncio.run(_seed(settings, "Second"))

    renamed = runner.invoke(app, ["sessions", "rename", first, "  Disk   check "], env=env)
    assert (renamed.exit_code, renamed.stdout) == (0, f"renamed {first}: Disk check\n")
    listed = json.loads(runner.invoke(app, ["sessions", "list", "--json"], env=env).stdout)
    assert {s["id"]: s["name"] for s in listed} == {first: "Disk check", second: "Second"}

    deleted = runner.invoke(app, ["sessions", "delete", second], env=env)
    assert (deleted.exit_code, deleted.stdout) == (0, f"deleted {second}\n")
    assert not (tmp_path / "files" / second).exists() and (tmp_path / "files" / first).exists()
    listed = json.loads(runner.invoke(app, ["sessions", "list", "--json"], env=env).stdout)
    assert [s["id"] for s in listed] == [first]

    missing = runner.invoke(app, ["sessions", "delete", second], env=env)
    assert (missing.exit_code, missing.stderr.splitlines()[-1]) == (
        1,
        f"navi: no session '{second}' — `navi sessions list` shows them",
    )
    assert runner.invoke(app, ["sessions", "rename", second, "x"], env=env).exit_code == 1


def test_a_database_command_keeps_the_start_up_lines_for_debug(tmp_path: Path) -> None:
    """`navi sessions list` prints the list, not the start-up log of the stores it opens (migrations,
    memory search); LOG_LEVEL=DEBUG still shows it. It opens the stores only: no sandbox is probed
    and no user tool loaded, so neither is said even then."""
    import os
    import subprocess
    import sys

    paths = {"DB_PATH": "n.db", "TOOLS_DIR": "tools", "SESSION_FILES_DIR": "files"}
    env = {**os.environ, **{k: str(tmp_path / v) for k, v in paths.items()}}
    env.pop("LOG_LEVEL", None)
    settings = load_settings(**{k.lower(): env[k] for k in paths})
    asyncio.run(_seed(settings, "Quiet"))
    navi = [sys.executable, "-m", "navi", "sessions", "list"]
    quiet = subprocess.run(navi, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert "Quiet" in quiet.stdout
    assert "memory_search" not in quiet.stderr and "migration" not in quiet.stderr, quiet.stderr
    loud = subprocess.run(
        navi, env={**env, "LOG_LEVEL": "DEBUG"}, capture_output=True, text=True, timeout=60, check=True
    )
    assert "memory_search" in loud.stderr and "Quiet" in loud.stdout
    assert "sandbox" not in loud.stderr and "user_tools_loaded" not in loud.stderr, loud.stderr
