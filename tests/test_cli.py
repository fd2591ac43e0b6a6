"""The `navi` command: serve and doctor, run the way a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import httpx
import pytest
import typer
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.llm.messages import Message
from navi.net.tls import ca_context
from navi.sessions.archive import export_session
from navi.sessions.models import Session, new_session_id
from navi.testing.fake_server import FakeModelServer, LlamaCppFace
from navi.testing.ports import free_port
from tests.helpers.cli import run_navi

_register()
runner = CliRunner()


def test_doctor_without_model_server_prints_the_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = runner.invoke(app, ["doctor"], env={"OLLAMA_HOST": url, "DB_PATH": str(tmp_path / "n.db")})
    assert result.exit_code == 1
    assert f"cannot reach Ollama at {url} — is `ollama serve` running?" in result.output
    assert "fix: start Ollama with `ollama serve`" in result.output
    assert f"✓ no database at {tmp_path / 'n.db'} yet; `navi serve` creates it" in result.output
    assert not (tmp_path / "n.db").exists()  # doctor looks, it does not create


def test_doctor_against_the_fake_passes(fake_server: FakeModelServer, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["doctor"], env={"OLLAMA_HOST": fake_server.url, "DB_PATH": str(tmp_path / "n.db")}
    )
    assert result.exit_code == 0, result.output
    assert "✓ model gemma4:e2b-it-q8_0 is available (secretary, server_admin, smart_home)" in result.output
    assert result.output.strip().endswith("All good.")


def test_doctor_reports_the_sandbox(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = {"OLLAMA_HOST": fake_server.url, "DB_PATH": str(tmp_path / "n.db")}
    result = runner.invoke(app, ["doctor"], env={**env, "SANDBOX_NETWORK": "false"})
    assert result.exit_code == 0, result.output
    assert "✓ sandbox: bubblewrap " in result.output
    assert "confines code_exec, terminal and user tools: network off" in result.output

    no_bwrap = tmp_path / "empty"
    no_bwrap.mkdir()
    result = runner.invoke(app, ["doctor"], env={**env, "PATH": str(no_bwrap)})
    assert result.exit_code == 1
    assert (
        "✗ sandbox: bubblewrap (bwrap) is not installed; code_exec, terminal and user tools would run "
        "unconfined, as the user running Navi\n    fix: apt-get install bubblewrap"
    ) in result.output
    result = runner.invoke(app, ["doctor"], env={**env, "PATH": str(no_bwrap), "SANDBOX_MODE": "required"})
    assert "will refuse to run (SANDBOX_MODE=required)" in result.output

    result = runner.invoke(app, ["doctor"], env={**env, "SANDBOX_MODE": "off"})
    assert result.exit_code == 0, result.output
    assert "! sandbox: off: code_exec, terminal and user tools run unconfined" in result.output
    assert "hint: set SANDBOX_MODE=auto" in result.output


def test_doctor_reports_the_browser(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = {"OLLAMA_HOST": fake_server.url, "DB_PATH": str(tmp_path / "n.db")}
    result = runner.invoke(app, ["doctor"], env={**env, "SANDBOX_MODE": "off"})
    # SANDBOX_MODE=off leaves the code tools unconfined, not the browser: bubblewrap still works
    assert "✓ browser: /usr/bin/chromium, in bubblewrap, with no network of its own" in result.output
    missing = tmp_path / "no-chromium"
    result = runner.invoke(app, ["doctor"], env={**env, "NAVI_BROWSER_EXECUTABLE": str(missing)})
    assert result.exit_code == 0, result.output  # the browser is optional: worth knowing, no failure
    assert f"! browser: no Chromium at {missing}; the browser tool will fail" in result.output
    assert "hint: apt-get install chromium" in result.output


def test_doctor_names_the_model_to_pull(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = {
        "OLLAMA_HOST": fake_server.url,
        "OLLAMA_DEFAULT_MODEL": "qwen3:8b",
        "DB_PATH": str(tmp_path / "n.db"),
    }
    result = runner.invoke(app, ["doctor"], env=env)
    assert result.exit_code == 1
    assert "✗ model qwen3:8b is not pulled" in result.output
    assert "fix: run `ollama pull qwen3:8b`" in result.output


def test_doctor_reports_an_unopenable_database(fake_server: FakeModelServer, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = {"OLLAMA_HOST": fake_server.url, "DB_PATH": str(blocker / "navi.db")}
    result = runner.invoke(app, ["doctor"], env=env)
    assert result.exit_code == 1
    assert f"✗ cannot open the database at {blocker / 'navi.db'}: {blocker} is a file, not a folder" in (
        result.output
    )
    assert "fix: set DB_PATH to a writable file" in result.output


LLAMA_FIXTURES = Path(__file__).parent / "fixtures" / "llama_cpp"


def _llama_face(props: str) -> LlamaCppFace:
    return LlamaCppFace(
        props=json.loads((LLAMA_FIXTURES / props).read_text()),
        models=json.loads((LLAMA_FIXTURES / "v1_models.json").read_text()),
    )


def _doctor_openai(fake_server: FakeModelServer, tmp_path: Path, num_ctx: int) -> tuple[int, str]:
    env = {
        "DEFAULT_LLM_BACKEND": "openai",
        "OPENAI_BASE_URL": fake_server.openai_url,
        "OPENAI_DEFAULT_MODEL": "smollm2",  # llama-server answers to any name
        "OLLAMA_NUM_CTX": str(num_ctx),
        "DB_PATH": str(tmp_path / "n.db"),
    }
    try:
        result = runner.invoke(app, ["doctor"], env=env)
    finally:
        fake_server.reset()
    return result.exit_code, result.output


def test_doctor_reports_a_server_window_smaller_than_navis(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.llama_cpp = _llama_face("props_gemma3_template.json")
    code, output = _doctor_openai(fake_server, tmp_path, 4096)
    assert code == 1, output
    assert "✓ model smollm2 is available" in output
    assert (
        "✗ model smollm2: Navi's window (4,096 tokens) is larger than the 2,048 the llama.cpp server "
        "runs it with; long conversations would overflow it"
    ) in output
    assert "fix: set OLLAMA_NUM_CTX=2048 or restart llama-server with `-c 4096`" in output
    assert "! model smollm2: no native tool calls on this server — Navi will use text tool calling" in output
    assert "1 problem found." in output


def test_doctor_passes_a_matching_window_with_native_tools(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.llama_cpp = _llama_face("props_chatml_tools_template.json")
    code, output = _doctor_openai(fake_server, tmp_path, 2048)
    assert code == 0, output
    assert "✓ model smollm2: window 2,048 tokens (the llama.cpp server allows 2,048)" in output
    assert "text tool calling" not in output
    assert "one slot" not in output  # recorded with 4 slots
    assert output.strip().endswith("All good.")


def test_doctor_notes_a_llama_server_with_one_slot(fake_server: FakeModelServer, tmp_path: Path) -> None:
    face = _llama_face("props_chatml_tools_template.json")
    face.props["total_slots"] = 1
    fake_server.llama_cpp = face
    code, output = _doctor_openai(fake_server, tmp_path, 2048)
    assert code == 0, output  # a note, not a problem
    assert "! model smollm2: llama-server runs one slot" in output
    assert "`--parallel 2` and twice the `-c`" in output


def test_doctor_on_ollama_model_without_tools(fake_server: FakeModelServer, tmp_path: Path) -> None:
    env = {
        "OLLAMA_HOST": fake_server.url,
        "OLLAMA_DEFAULT_MODEL": "plain:1b",
        "OLLAMA_NUM_CTX": "16384",
        "DB_PATH": str(tmp_path / "n.db"),
    }
    result = runner.invoke(app, ["doctor"], env=env)
    assert result.exit_code == 1
    assert (
        "✗ model plain:1b: Navi's window (16,384 tokens) is larger than the 8,192 it was trained for"
    ) in result.output
    assert "fix: set OLLAMA_NUM_CTX=8192" in result.output
    assert "! model plain:1b: no native tool calls on this server" in result.output


def test_bad_setting_stops_with_its_name() -> None:
    result = runner.invoke(app, ["doctor"], env={"CONTEXT_KEEP_RECENT": "-3"})
    assert result.exit_code == 2
    assert "CONTEXT_KEEP_RECENT" in result.output


def _serve(args: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "DB_PATH": str(tmp_path / "navi.db"), "OLLAMA_HOST": "http://127.0.0.1:9"}
    return subprocess.Popen(
        [sys.executable, "-m", "navi", "serve", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_serve_answers_health_on_loopback(tmp_path: Path) -> None:
    port = free_port()
    proc = _serve(["--port", str(port)], tmp_path)
    try:
        deadline = time.monotonic() + 60  # ~5 s on a quiet machine, 15-25 s under a loaded CI
        with httpx.Client(timeout=1, verify=ca_context()) as http:  # one certificate store, not one a poll
            while True:
                try:
                    resp = http.get(f"http://127.0.0.1:{port}/health")
                    break
                except httpx.TransportError as exc:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise AssertionError(
                            f"navi serve did not come up: {proc.stdout.read() if proc.stdout else ''}"
                        ) from exc
                    time.sleep(0.1)
        assert resp.status_code == 200
        assert resp.json() == {"status": "ok"}
        assert resp.headers["x-request-id"]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20"])
def test_serve_refuses_to_listen_beyond_loopback_without_a_token(tmp_path: Path, host: str) -> None:
    proc = _serve(["--host", host, "--port", str(free_port())], tmp_path)
    try:
        out, _ = proc.communicate(timeout=60)  # ~3 s here; a loaded CI machine took over 20
    finally:  # never left running for a later test to trip over (an unraisable ResourceWarning)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2
    assert f"refusing to listen on {host} without an access token" in out
    assert "NAVI_API_TOKEN" in out


def test_json_output_is_not_mixed_with_logs(tmp_path: Path) -> None:
    """Logs go to stderr: what a command prints for a program to read stays valid JSON."""

    def navi(*args: str) -> subprocess.CompletedProcess[str]:
        return run_navi(tmp_path, *args)

    said = [Message.user("Milk and eggs")]
    session = Session(
        id=new_session_id(), profile_id="secretary", name="Groceries", messages=said, context=said
    )
    (tmp_path / "a.json").write_text(json.dumps(export_session(session)))
    assert navi("sessions", "import", "a.json").returncode == 0
    done = run_navi(tmp_path, "sessions", "list", "--json", env={"LOG_LEVEL": "DEBUG"})
    assert done.returncode == 0, done.stderr
    assert [s["name"] for s in json.loads(done.stdout)] == ["Groceries"]
    assert "memory_search" in done.stderr  # the start-up lines were logged, on stderr


def test_version() -> None:
    from navi import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"navi {__version__}"


Who = Annotated[str, typer.Option(help="Who.")]


def test_a_command_takes_its_options_from_a_table() -> None:
    """`takes_options`: the table's options reach the command in one record, in the table's order
    in --help, before the command's own keyword options; a missing one is None."""
    from navi.cli.common import takes_options

    got: list[dict[str, object]] = []
    demo = typer.Typer(rich_markup_mode=None)  # plain help, as `navi`'s

    @demo.command()
    @takes_options(
        {
            "colour": Annotated[str | None, typer.Option(help="A colour.")],
            "size": Annotated[int | None, typer.Option(help="A size.")],
        }
    )
    def paint(
        wall: str, *, user: Annotated[str, typer.Option(help="Who.")] = "local", **options: object
    ) -> None:
        got.append({"wall": wall, "user": user, **options})

    runner = CliRunner()
    assert runner.invoke(demo, ["north", "--size", "3"]).exit_code == 0
    assert got == [{"wall": "north", "user": "local", "colour": None, "size": 3}]
    bad = runner.invoke(demo, ["north", "--size", "big"])
    assert bad.exit_code == 2 and got[1:] == []
    flags = [line.split()[0] for line in runner.invoke(demo, ["--help"]).output.splitlines() if "--" in line]
    assert flags[:3] == ["--colour", "--size", "--user"]


def test_a_command_imports_its_own_module_and_help_lists_every_command() -> None:
    """`navi sessions list` registers (and imports) only the sessions commands; `navi --help`, a
    bare `navi` and an unknown name get every command, in the same order."""
    probe = (
        "import importlib, json, sys, typer\n"
        "main = importlib.import_module('navi.cli.main')\n"
        "main._register(sys.argv[1:])\n"
        "app = typer.main.get_command(main.app)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('navi.cli.'))))\n"
        "print(json.dumps(list(app.commands)))\n"
    )

    def run(*argv: str) -> tuple[list[str], list[str]]:
        out = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True, timeout=60
        ).stdout.splitlines()
        return json.loads(out[0]), json.loads(out[1])

    modules, commands = run("sessions", "list", "--user", "ann")
    assert commands == ["sessions"]
    assert "navi.cli.sessions" in modules
    assert not {"navi.cli.doctor", "navi.cli.serve", "navi.cli.chat"} & set(modules)
    assert run("--version", "mcp-login")[1] == ["mcp", "mcp-login"]
    every = run("--help")[1]
    assert every[:4] == ["serve", "token", "chat", "doctor"] and len(every) == 19
    assert run()[1] == every and run("nosuch")[1] == every
