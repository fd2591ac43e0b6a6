"""The `navi` command without surprises: read-only commands create nothing, a setting Navi cannot use
stops with one line (no traceback) and exit 2, doctor answers in seconds and flags what `serve`
would trip on, and help shows flags as flags. Run as a user runs it: the real entry point."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from typer.testing import CliRunner

from navi.api.app import create_app
from navi.cli.main import _register, app
from navi.cli.serve import OneLineStartupFailure
from navi.compose import SetupError
from navi.config import Settings
from navi.llm.messages import Message
from navi.sessions.archive import export_session
from navi.sessions.models import Session, new_session_id
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port

_register()
runner = CliRunner()
DB_FIX = "set DB_PATH to a writable file"
TOOLS_FIX = "set TOOLS_DIR to a folder Navi can write"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The working directory the command runs in: every relative default (navi.db, tools/,
    session_files/) would land here, so it must stay empty."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A file where a folder is expected."""
    path = tmp_path / "file"
    path.write_text("not a folder")
    return path


def navi(work: Path, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    base = {**os.environ, "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}", **env}
    return subprocess.run(
        [sys.executable, "-m", "navi", *args],
        cwd=work,
        env=base,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a command that stopped on a configuration problem."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert done.stdout == ""
    return lines[0]


# --- read-only commands create nothing ---------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "status", "stdout"),
    [
        (["sessions", "list", "--json"], 0, "[]\n"),
        (["sessions", "export", "00000000-0000-4000-8000-000000000000"], 1, ""),
        (["memory", "list"], 0, "Nothing remembered.\n"),
        (["memory", "forget", "home_city"], 1, ""),
        (["docs", "list"], 0, "No documents yet.\n"),
        (["docs", "search", "lease"], 0, "No passage matches 'lease'.\n"),
    ],
)
def test_read_only_commands_create_no_database_and_no_tools_folder(
    work: Path, tmp_path: Path, args: list[str], status: int, stdout: str
) -> None:
    db = tmp_path / "data" / "navi.db"
    done = navi(work, *args, DB_PATH=str(db))
    assert done.returncode == status, done.stderr
    assert done.stdout == stdout
    if args[-1] == "--json":
        assert json.loads(done.stdout) == []
    assert "Traceback" not in done.stderr
    assert not db.parent.exists()
    assert os.listdir(work) == []  # no tools/, no session_files/, no navi.db


def test_doctor_creates_nothing(work: Path, tmp_path: Path, fake_server: FakeModelServer) -> None:
    db = tmp_path / "data" / "navi.db"
    done = navi(work, "doctor", DB_PATH=str(db), OLLAMA_HOST=fake_server.url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""  # no log lines around the report
    assert f"✓ no database at {db} yet; `navi serve` creates it" in done.stdout
    assert f"✓ no tools folder at {work / 'tools'} yet; `navi serve` creates it" in done.stdout
    assert not db.parent.exists()
    assert os.listdir(work) == []


# --- one line, exit 2 ----------------------------------------------------------------------------
def test_import_into_a_db_path_under_a_file(work: Path, blocker: Path) -> None:
    said = [Message.user("Milk and eggs")]
    session = Session(id=new_session_id(), profile_id="secretary", messages=said, context=said)
    archive = work.parent / "a.json"
    archive.write_text(json.dumps(export_session(session)))
    done = navi(work, "sessions", "import", str(archive), DB_PATH=str(blocker / "navi.db"))
    db = blocker / "navi.db"
    assert (
        one_line(done)
        == f"navi: cannot open the database at {db}: {blocker} is a file, not a folder — {DB_FIX}"
    )
    assert blocker.read_text() == "not a folder"
    assert os.listdir(work) == []


def test_db_path_that_is_a_folder(work: Path, tmp_path: Path) -> None:
    done = navi(work, "sessions", "list", "--json", DB_PATH=str(tmp_path))
    assert one_line(done) == f"navi: cannot open the database at {tmp_path}: it is a folder — {DB_FIX}"


def test_unreachable_database_url(work: Path) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://navi:hunter2@127.0.0.1:{port}/navi"
    done = navi(work, "sessions", "list", "--json", DATABASE_URL=url)
    assert one_line(done) == (
        f"navi: cannot reach the database at postgresql://navi:***@127.0.0.1:{port}/navi: connection refused"
        " — check DATABASE_URL and that PostgreSQL is running"
    )
    assert os.listdir(work) == []


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            lambda b: {"DB_PATH": str(b / "navi.db")},
            lambda b: f"cannot open the database at {b / 'navi.db'}: {b} is a file, not a folder — {DB_FIX}",
        ),
        (
            lambda b: {"TOOLS_DIR": str(b)},
            lambda b: f"cannot use the tools folder {b}: it is a file, not a folder — {TOOLS_FIX}",
        ),
        (
            lambda b: {"TOOLS_DIR": str(b / "tools")},
            lambda b: f"cannot use the tools folder {b / 'tools'}: {b} is a file, not a folder — {TOOLS_FIX}",
        ),
    ],
    ids=["db-under-a-file", "tools-dir-is-a-file", "tools-dir-under-a-file"],
)
def test_serve_stops_on_a_path_it_cannot_use(work: Path, blocker: Path, setting, expected) -> None:
    done = navi(work, "serve", "--port", str(free_port()), **setting(blocker))
    assert one_line(done) == f"navi: {expected(blocker)}"
    assert os.listdir(work) == [] and blocker.read_text() == "not a folder"


def test_serve_stops_on_an_unreachable_database(work: Path) -> None:
    port = free_port()
    done = navi(
        work, "serve", "--port", str(free_port()), DATABASE_URL=f"postgresql://navi@127.0.0.1:{port}/navi"
    )
    assert one_line(done).startswith(
        f"navi: cannot reach the database at postgresql://navi@127.0.0.1:{port}/navi"
    )


def test_serve_on_a_port_in_use(work: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = navi(work, "serve", "--port", str(port), DB_PATH=str(tmp_path / "navi.db"))
    assert one_line(done) == (
        f"navi: cannot listen on 127.0.0.1:{port}: the port is already in use — stop the program using it,"
        " or pick another port with --port or NAVI_PORT"
    )
    assert not (tmp_path / "navi.db").exists() and os.listdir(work) == []


async def test_a_start_up_failure_inside_the_server_is_not_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What the checks before uvicorn cannot see (a database that breaks between the check and the
    start) still ends as one recorded problem: uvicorn logs no traceback, `serve` prints the line."""
    problem = SetupError("cannot open the database at /x/navi.db: disk I/O error", DB_FIX)

    async def failing(_settings: Settings) -> object:
        raise problem

    caplog.set_level(logging.INFO)
    api = create_app(Settings(db_path=str(tmp_path / "n.db")), runtime_factory=failing)  # type: ignore[arg-type]
    config = uvicorn.Config(OneLineStartupFailure(api), port=free_port(), log_config=None, lifespan="on")
    with pytest.raises(SystemExit):
        await uvicorn.Server(config).serve()
    assert api.state.startup_problem is problem
    logged = [r for r in caplog.records if r.name.startswith("uvicorn")]
    assert any("startup failed" in r.getMessage() for r in logged)
    assert not any("Traceback" in r.getMessage() or r.exc_info for r in logged)


# --- doctor ----------------------------------------------------------------------------------------
def test_doctor_flags_a_tools_dir_that_is_a_file(
    fake_server: FakeModelServer, blocker: Path, tmp_path: Path
) -> None:
    env = {"OLLAMA_HOST": fake_server.url, "DB_PATH": str(tmp_path / "n.db"), "TOOLS_DIR": str(blocker)}
    result = runner.invoke(app, ["doctor"], env=env)
    assert result.exit_code == 1
    assert f"✗ cannot use the tools folder {blocker}: it is a file, not a folder\n    fix: {TOOLS_FIX}\n" in (
        result.output
    )
    assert "1 problem found." in result.output


def test_doctor_flags_a_host_beyond_loopback_without_a_token(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    env = {"OLLAMA_HOST": fake_server.url, "DB_PATH": str(tmp_path / "n.db"), "NAVI_HOST": "0.0.0.0"}
    result = runner.invoke(app, ["doctor"], env=env)
    assert result.exit_code == 1
    assert "✗ NAVI_HOST=0.0.0.0 reaches beyond this machine, but NAVI_API_TOKEN is not set" in result.output
    assert "fix: set NAVI_API_TOKEN (e.g. `openssl rand -hex 32`), or NAVI_HOST=127.0.0.1" in result.output
    with_token = runner.invoke(app, ["doctor"], env={**env, "NAVI_API_TOKEN": "s3cret-token-of-16+"})
    assert with_token.exit_code == 0, with_token.output
    assert "✓ Navi listens on 0.0.0.0, beyond this machine, and asks for NAVI_API_TOKEN" in with_token.output


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung server, a stuck proxy)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


def test_doctor_against_a_silent_server_prints_as_it_goes_and_ends_in_seconds(
    work: Path, tmp_path: Path, black_hole: int
) -> None:
    url = f"http://127.0.0.1:{black_hole}"
    env = {**os.environ, "OLLAMA_HOST": url, "DB_PATH": str(tmp_path / "n.db")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "navi", "doctor"], cwd=work, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first == "✓ configuration loads\n"
        assert proc.poll() is None  # the first line arrived while doctor still waits on the server
        # The old doctor waited for the 300 s model timeout here.
        rest, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 1
    assert f"✗ cannot reach Ollama at {url} — is `ollama serve` running?" in rest
    assert "✓ no database at" in rest and rest.rstrip().endswith("1 problem found.")


# --- help ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [["--help"], ["sessions", "list", "--help"], ["memory", "forget", "--help"]])
def test_help_shows_flags_without_a_type(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "<bool>" not in result.output
    flags = [line.split()[0] for line in result.output.splitlines() if line.strip().startswith("--")]
    assert "--help" in flags
    assert {"--json", "--id", "--version"} & set(flags)
