"""Commands that run no agent open the stores only (`navi.compose.stores`), not the whole runtime.

Each command runs in a fresh `python -m navi`-like process, which writes down every module it had
imported by the end: the agent, the tools, the channels, the runs and the model SDKs must not be
among them (issue 41: they were most of the CPU such a command paid), and the answer must be the
one the runtime gave.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from navi.llm.messages import Message
from navi.sessions.archive import export_session
from navi.sessions.models import Session, new_session_id

# What only an agent's runtime needs: none of it is imported by a command that reads or writes stores.
HEAVY = (
    "navi.compose.runtime",
    "navi.compose.parts",
    "navi.agent.engine",
    "navi.agent.analysis",
    "navi.tools.registry",
    "navi.tools.builtin.code_exec",
    "navi.tools.builtin.browser.tool",
    "navi.tools.host.client",
    "navi.sandbox",
    "navi.mcp.manager",
    "navi.channels.worker",
    "navi.channels.email",
    "navi.runs.manager",
    "navi.llm.ollama_backend",
    "navi.llm.openai_backend",
    "navi.llm.anthropic_backend",
    "openai",
    "anthropic",
    "ollama",
)

# `navi ARGS` in this process, then the modules it imported written to MODULES_OUT.
DRIVER = """
import json, os, sys
from navi.cli.main import main
sys.argv = ["navi", *json.loads(os.environ["NAVI_ARGS"])]
code = 0
try:
    main()
except SystemExit as done:
    code = done.code or 0
with open(os.environ["MODULES_OUT"], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def navi(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `navi ARGS` in `folder` (its database there, unless `env` names another); what it printed
    and the modules it imported."""
    out = folder / "modules.json"
    environ = {
        **os.environ,
        "DB_PATH": str(folder / "navi.db"),
        "TOOLS_DIR": str(folder / "tools"),
        "SESSION_FILES_DIR": str(folder / "files"),
        "NAVI_ARGS": json.dumps(args),
        "MODULES_OUT": str(out),
        **(env or {}),
    }
    environ.pop("MEMORY_EMBED_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], cwd=folder, env=environ, capture_output=True, text=True, timeout=60
    )
    found = json.loads(out.read_text())
    assert found["code"] == done.returncode == 0, done.stderr
    return done, set(found["modules"])


def groceries(where: Path, env: dict[str, str] | None = None) -> None:
    """One conversation brought in from an archive, through the store path too."""
    said = [Message.user("Milk and eggs")]
    session = Session(
        id=new_session_id(), profile_id="secretary", name="Groceries", messages=said, context=said
    )
    (where / "a.json").write_text(json.dumps(export_session(session)))
    _, modules = navi(where, "sessions", "import", "a.json", env=env)
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database with one imported conversation."""
    where = tmp_path_factory.mktemp("store-path")
    groceries(where)
    return where


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("sessions", "list"), "Groceries"),
        (("sessions", "search", "eggs"), "**eggs**"),
        (("memory", "list"), "Nothing remembered."),
        (("schedules", "list"), "No schedules"),
        (("docs", "list"), "No documents"),
        (("usage",), "No answers with usage yet."),
    ],
)
def test_a_command_that_runs_no_agent_imports_none(folder: Path, args: tuple[str, ...], said: str) -> None:
    done, modules = navi(folder, *args)
    assert said in done.stdout, done.stdout
    assert "navi.compose.stores" in modules and "navi.storage.sessions" in modules  # it did open them
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_export_still_builds_the_runtime(folder: Path) -> None:
    """`navi sessions export` writes the agent's prompt and tools into the archive: the whole runtime."""
    listed, _ = navi(folder, "sessions", "list", "--json")
    session_id = json.loads(listed.stdout)[0]["id"]
    done, modules = navi(folder, "sessions", "export", session_id)
    archive = json.loads(done.stdout)
    assert archive["session"]["name"] == "Groceries" and archive["session"]["tool_registry"]
    assert {"navi.compose.runtime", "navi.agent.engine", "navi.tools.registry"} <= modules


@pytest.mark.postgres
def test_on_postgresql_too(tmp_path: Path, pg_url: str) -> None:
    on_pg = {"DATABASE_URL": pg_url}
    groceries(tmp_path, on_pg)
    assert not (tmp_path / "navi.db").exists()  # it went to PostgreSQL
    for args, said in ((("sessions", "list"), "Groceries"), (("memory", "list"), "Nothing remembered.")):
        done, modules = navi(tmp_path, *args, env=on_pg)
        assert said in done.stdout, done.stdout
        assert "asyncpg" in modules and not modules & set(HEAVY), sorted(modules & set(HEAVY))
