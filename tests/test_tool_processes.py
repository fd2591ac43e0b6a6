"""code_exec and terminal: real processes, limits, process-group kills, and the command allowlist."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from navi import runctx
from navi.tools.builtin.code_exec import CodeExecTool
from navi.tools.builtin.terminal import TerminalTool, shell_syntax
from navi.tools.paths import PathPolicy
from tests.helpers.sandbox import make_sandbox

SANDBOX = make_sandbox()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead for our purposes
        return fh.read().split()[2] != "Z"


async def run_code(code: str, **kw: object):
    with runctx.using(runctx.RunContext(session_id="s1")):
        return await CodeExecTool(sandbox=SANDBOX, memory_mb=256).execute({"code": code, **kw})


async def test_code_exec_prints_and_computes() -> None:
    result = await run_code("import math\nprint(sum(i * i for i in range(10)))\nprint(math.pi > 3)")
    assert result.success
    assert result.output.splitlines() == ["285", "True", "[exit code 0]"]


async def test_code_exec_runs_in_a_fresh_temporary_folder() -> None:
    first = await run_code("import os\nopen('x.txt','w').write('hi')\nprint(os.getcwd())")
    folder = first.output.splitlines()[0]
    assert "navi-code-" in folder and not await asyncio.to_thread(
        os.path.exists, folder
    )  # removed afterwards
    second = await run_code("import os\nprint(os.listdir('.'))")
    assert second.output.splitlines()[0] == "['main.py']"


async def test_code_exec_reports_errors_with_the_users_traceback() -> None:
    result = await run_code("def f():\n    return 1/0\nf()")
    assert not result.success and result.error == "the program exited with code 1"
    assert "ZeroDivisionError: division by zero" in result.output
    assert 'File "' in result.output and "main.py" in result.output
    assert "runpy" not in result.output and "sandbox_bootstrap" not in result.output


async def test_code_exec_memory_limit() -> None:
    result = await run_code("x = bytearray(1024 * 1024 * 1024)\nprint('allocated')")
    assert not result.success
    assert "MemoryError" in result.output and "allocated" not in result.output


def processes_with(marker: str) -> list[int]:
    """Host pids of live processes with `marker` among their arguments (pids inside the sandbox's
    own PID namespace mean nothing out here, so the grandchild is found by its command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    args = fh.read().split(b"\0")
            except OSError:
                continue
            if marker.encode() in args and alive(int(entry)):
                found.append(int(entry))
    return found


async def test_code_exec_timeout_kills_the_whole_group() -> None:
    marker = f"{60 + (os.getpid() % 1000) / 1000:.3f}"  # `sleep 60.xyz`: unique enough to find
    code = (
        "import subprocess, time\n"
        f"p = subprocess.Popen(['sleep', {marker!r}])\n"
        "print('started', flush=True)\ntime.sleep(60)"
    )
    started = time.monotonic()
    task = asyncio.ensure_future(run_code(code, timeout=3))
    for _ in range(100):  # until the grandchild shows up (it takes well under a second)
        if processes_with(marker) or task.done():
            break
        await asyncio.sleep(0.05)
    assert processes_with(marker), "the grandchild should be running while the program runs"
    result = await task
    assert time.monotonic() - started < 10
    assert not result.success and "longer than 3 s" in (result.error or "")
    assert "started" in result.output and "[killed: timed out" in result.output
    assert processes_with(marker) == []  # the sleep started by the program died with it


async def test_code_exec_output_cap() -> None:
    result = await run_code("print('x' * 200_000)")
    assert result.success
    assert len(result.output) < 21_000
    assert "[output truncated:" in result.output


async def test_stop_kills_a_running_program() -> None:
    stop = asyncio.Event()
    ctx = runctx.RunContext(session_id="s1", stop_event=stop)

    async def later() -> None:
        await asyncio.sleep(0.5)
        stop.set()

    with runctx.using(ctx):
        asyncio.get_running_loop().create_task(later())
        started = time.monotonic()
        result = await CodeExecTool(sandbox=SANDBOX).execute(
            {"code": "import time\nprint('going', flush=True)\ntime.sleep(30)"}
        )
    assert time.monotonic() - started < 5
    assert not result.success and result.metadata.get("stopped") is True
    assert "[killed: stopped by the user]" in result.output


# --- terminal ----------------------------------------------------------------------------------
def terminal(allowed: list[str], root: Path) -> TerminalTool:
    return TerminalTool(allowed, PathPolicy(["*"], base=root), sandbox=SANDBOX)


async def test_terminal_runs_a_program(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    tool = terminal(["*"], tmp_path)
    result = await tool.execute({"command": "cat a.txt", "cwd": str(tmp_path)})
    assert result.success and result.output.splitlines() == ["hello", "[exit code 0]"]
    failed = await tool.execute({"command": "ls /definitely/not/here"})
    assert not failed.success and "exited with code 2" in (failed.error or "")
    assert "No such file" in failed.output


async def test_arguments_are_never_interpreted_by_a_shell(tmp_path: Path) -> None:
    tool = terminal(["*"], tmp_path)
    result = await tool.execute(
        {"command": "echo '$(touch pwned)' '`id`' '$HOME' 'a;b' '|'", "cwd": str(tmp_path)}
    )
    # quoted shell syntax inside arguments is refused up front rather than passed on
    assert not result.success and "shell syntax" in (result.error or "")
    literal = await tool.execute({"command": "echo '$HOME' '*'", "cwd": str(tmp_path)})
    assert literal.output.splitlines()[0] == "$HOME *"  # no expansion, no globbing
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    "command",
    [
        "ls; rm -rf /tmp/x",
        "ls | grep a",
        "ls && id",
        "ls > out.txt",
        "cat < /etc/passwd",
        "ls $(id)",
        "ls `id`",
        "sleep 1 &",
    ],
)
async def test_shell_metacharacters_are_refused(tmp_path: Path, command: str) -> None:
    for allowed in (["*"], ["ls", "cat", "sleep"]):
        result = await terminal(allowed, tmp_path).execute({"command": command, "cwd": str(tmp_path)})
        assert not result.success and "shell syntax" in (result.error or "")
    assert not (tmp_path / "out.txt").exists()
    assert shell_syntax("echo 'a | b'") is None  # quoted pipe characters are just text


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",  # simply not listed
        "env rm x",  # wrappers that run other programs
        "sh -c 'rm x'",
        "bash -c id",
        "xargs rm",
        "sudo ls",
        "nohup rm x",
        "timeout 5 rm x",
        "/bin/rm x",  # absolute path to a program that is not allowed
        "python3 -c 'import os'",
    ],
)
async def test_allowlist_cannot_be_bypassed(tmp_path: Path, command: str) -> None:
    (tmp_path / "x").write_text("keep me")
    result = await terminal(["ls", "cat"], tmp_path).execute({"command": command, "cwd": str(tmp_path)})
    assert not result.success
    assert "not an allowed command" in (result.error or "") or "not found" in (result.error or "")
    assert (tmp_path / "x").read_text() == "keep me"


async def test_allowlist_checks_the_real_executable(tmp_path: Path) -> None:
    fake_dir = tmp_path / "bin"
    fake_dir.mkdir()
    os.symlink(shutil.which("rm") or "/bin/rm", fake_dir / "ls")  # a program named ls that is really rm
    (tmp_path / "victim").write_text("keep me")
    tool = terminal(["ls"], tmp_path)
    for command in (f"{fake_dir}/ls victim", "./bin/ls victim"):
        result = await tool.execute({"command": command, "cwd": str(tmp_path)})
        assert not result.success and "not the allowed `ls`" in (result.error or "")
    assert (tmp_path / "victim").exists()
    real_ls = await tool.execute({"command": f"{shutil.which('ls')} -1", "cwd": str(tmp_path)})
    assert real_ls.success and "victim" in real_ls.output  # the real ls by absolute path is fine
    plain = await tool.execute({"command": "ls", "cwd": str(tmp_path)})
    assert plain.success


async def test_terminal_cwd_obeys_the_file_allowlist(tmp_path: Path) -> None:
    allowed = tmp_path / "work"
    allowed.mkdir()
    tool = TerminalTool(["ls"], PathPolicy([str(allowed)], base=allowed), sandbox=SANDBOX)
    refused = await tool.execute({"command": "ls", "cwd": str(tmp_path)})
    assert not refused.success and "outside the allowed paths" in (refused.error or "")
    assert (await tool.execute({"command": "ls", "cwd": str(allowed)})).success


async def test_terminal_timeout_and_unbalanced_quotes(tmp_path: Path) -> None:
    tool = terminal(["*"], tmp_path)
    started = time.monotonic()
    slow = await tool.execute({"command": "sleep 30", "timeout": 1})
    assert time.monotonic() - started < 6
    assert not slow.success and "longer than 1 s" in (slow.error or "")
    quotes = await tool.execute({"command": "echo 'unterminated"})
    assert not quotes.success and "cannot split" in (quotes.error or "")
    missing = await tool.execute({"command": "no-such-program-xyz"})
    assert missing.error == "command not found: no-such-program-xyz"
