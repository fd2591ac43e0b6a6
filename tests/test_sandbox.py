"""The sandbox around code_exec and terminal: real bubblewrap, real processes, real files.

Each test attacks from inside the child what a prompt-injected model would go for: the server's
environment (its own and through /proc), Navi's secret files, the network, folders outside
FS_ALLOWED_PATHS (directly, or through the arguments of an allowed program).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import socket
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from navi import runctx
from navi.compose import parts
from navi.sandbox import Sandbox, SandboxPolicy, python_paths
from navi.tools.base import ToolResult
from navi.tools.builtin.code_exec import CodeExecTool
from navi.tools.builtin.terminal import TerminalTool
from navi.tools.paths import PathPolicy
from navi.tools.process import SandboxPid, run_process
from tests.helpers.sandbox import make_sandbox

CANARY = "canary-7f3e9b1d-not-for-the-model"


async def run_code(sandbox: Sandbox, code: str, session_id: str = "s1") -> ToolResult:
    with runctx.using(runctx.RunContext(session_id=session_id)):
        return await CodeExecTool(sandbox=sandbox, memory_mb=256).execute({"code": code})


def printed(result: ToolResult) -> Any:
    """The JSON the program printed on its first line."""
    assert result.success, (result.error, result.output)
    return json.loads(result.output.splitlines()[0])


@pytest.fixture
def canary_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """A secret in this process's environment (what it passes on to children, not /proc)."""
    monkeypatch.setenv("NAVI_API_TOKEN", CANARY)
    return CANARY


def look_for(canary: str) -> str:
    """A program that looks for `canary` in its own environment and in every /proc/<pid>/environ
    it can open (its parent's first: the server, without a sandbox), and prints only what it found."""
    return f"""
import json, os
found = {{"environ": [k for k, v in os.environ.items() if {canary!r} in v], "proc": {{}}, "looked": 0}}
for pid in [str(os.getppid()), *[p for p in os.listdir("/proc") if p.isdigit()]]:
    try:
        text = open(f"/proc/{{pid}}/environ", "rb").read().decode(errors="replace")
    except OSError:
        continue
    found["looked"] += 1
    if {canary!r} in text:
        found["proc"][pid] = True
print(json.dumps(found))
"""


def in_a_server_with_a_secret(job: dict[str, Any]) -> dict[str, Any]:
    """Run `job` in `tests/helpers/canary_server.py`, a process whose environment holds CANARY as
    NAVI_API_TOKEN and OPENAI_API_KEY from its start, as a real server's does."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NAVI_API_TOKEN": CANARY, "OPENAI_API_KEY": CANARY, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.canary_server", json.dumps(job)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("restricted", [False, True], ids=["whole-fs", "restricted-fs"])
def test_code_exec_cannot_see_the_servers_environment(tmp_path: Path, restricted: bool) -> None:
    policy = {"allowed_paths": [str(tmp_path)]} if restricted else {}
    result = in_a_server_with_a_secret({"kind": "code_exec", "code": look_for(CANARY), "policy": policy})
    found = json.loads(result["output"].splitlines()[0])
    assert found == {"environ": [], "proc": {}, "looked": found["looked"]}
    assert found["looked"] >= 2, "it could open its own environ, at least"


def test_without_the_sandbox_the_program_reads_its_servers_secrets() -> None:
    """The control: the same program, unconfined, finds the secret through /proc/<parent>/environ."""
    job = {"kind": "code_exec", "code": look_for(CANARY), "policy": {"mode": "off"}}
    result = in_a_server_with_a_secret(job)
    found = json.loads(result["output"].splitlines()[0])
    assert found["environ"] == []  # code_exec always gave the child its own environment
    assert found["proc"], "the server's /proc/<pid>/environ is readable without the sandbox"


async def test_code_exec_has_its_own_pid_namespace() -> None:
    code = (
        "import json, os\n"
        "print(json.dumps([os.getpid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit())]))"
    )
    pid, visible = printed(await run_code(make_sandbox(), code))
    assert os.getpid() > 10, "this test needs a server pid the sandbox could not have by chance"
    assert pid < 10 and max(visible) < 10
    assert os.getpid() not in visible


@pytest.fixture
def secrets(make_settings, tmp_path: Path) -> tuple[Sandbox, list[Path]]:
    """Navi's real secret files (database and journal, token file, .env, SSH hosts), each holding the
    canary, and the sandbox Navi builds from those settings."""
    data = tmp_path / "data"
    data.mkdir()
    settings = make_settings(
        db_path=str(data / "navi.db"),
        navi_token_file=str(data / "navi_token"),
        ssh_hosts_file=str(data / "ssh_hosts.json"),
        sandbox_mode="required",
    )
    files = [data / "navi.db", data / "navi.db-wal", data / "navi_token", data / "ssh_hosts.json"]
    files.append(tmp_path / ".env")  # the working directory's .env (written after the settings read it)
    for path in files:
        path.write_text(CANARY)
    assert {str(p) for p in files} <= set(parts.secret_paths(settings))
    return parts.build_sandbox(settings), files


def read_each(paths: list[Path]) -> str:
    return (
        "import json\nout = {}\n"
        f"for p in {[str(p) for p in paths]!r}:\n"
        "    try:\n        out[p] = open(p).read()\n"
        "    except OSError as exc:\n        out[p] = type(exc).__name__\n"
        "print(json.dumps(out))"
    )


async def test_code_exec_cannot_read_navis_secrets(
    secrets: tuple[Sandbox, list[Path]], tmp_path: Path
) -> None:
    sandbox, files = secrets
    (tmp_path / "data" / "notes.txt").write_text("an ordinary file")
    result = await run_code(sandbox, read_each([*files, tmp_path / "data" / "notes.txt"]))
    seen = printed(result)
    assert CANARY not in result.output
    assert all(seen[str(p)] in ("PermissionError", "") for p in files), seen
    assert seen[str(tmp_path / "data" / "notes.txt")] == "an ordinary file"  # the rest is as it was
    assert all(p.read_text() == CANARY for p in files), "hiding changes nothing on disk"


async def test_the_child_has_no_capabilities_to_uncover_a_secret(secrets: tuple[Sandbox, list[Path]]) -> None:
    """Started by root, bwrap would leave its child all of root's capabilities: enough to unmount
    what covers a secret and read it."""
    sandbox, files = secrets
    code = f"""
import json, subprocess
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
umount = subprocess.run(["umount", {str(files[0])!r}], capture_output=True, text=True)
try:
    content = open({str(files[0])!r}).read()
except OSError as exc:
    content = type(exc).__name__
caps = {{"eff": status["CapEff"].strip(), "prm": status["CapPrm"].strip()}}
print(json.dumps({{**caps, "umount": umount.returncode, "content": content}}))
"""
    result = await run_code(sandbox, code)
    seen = printed(result)
    assert int(seen["eff"], 16) == 0 and int(seen["prm"], 16) == 0
    assert seen["umount"] != 0 and seen["content"] == "PermissionError"
    assert CANARY not in result.output


@pytest.mark.parametrize("restricted", [False, True], ids=["whole-fs", "restricted-fs"])
async def test_the_kernels_settings_are_read_only(tmp_path: Path, restricted: bool) -> None:
    """As root, changing a sysctl or a sysfs file needs no capability. Each file is only opened for
    writing, never written, so the test changes nothing even where it fails."""
    targets = [
        "/proc/sys/kernel/core_pattern",
        "/proc/sys/vm/drop_caches",
        "/sys/kernel/mm/transparent_hugepage/enabled",
    ]
    code = f"""
import json, os
out = {{}}
for path in {targets!r}:
    try:
        os.close(os.open(path, os.O_WRONLY))
        out[path] = "opened for writing"
    except OSError as exc:
        out[path] = type(exc).__name__
print(json.dumps(out))
"""
    sandbox = make_sandbox(allowed_paths=[tmp_path] if restricted else [])
    seen = printed(await run_code(sandbox, code))
    assert "opened for writing" not in seen.values(), seen


async def test_secrets_stay_hidden_inside_an_allowed_folder(make_settings, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    settings = make_settings(
        db_path=str(work / "navi.db"), fs_allowed_paths=str(work), sandbox_mode="required"
    )
    (work / "navi.db").write_text(CANARY)
    result = await run_code(parts.build_sandbox(settings), read_each([work / "navi.db"]))
    assert CANARY not in result.output and printed(result)[str(work / "navi.db")] == "PermissionError"
    deleted = await run_code(
        parts.build_sandbox(settings), f"import os\nos.remove({str(work / 'navi.db')!r})"
    )
    assert not deleted.success and (work / "navi.db").read_text() == CANARY


@pytest.fixture
def tcp_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections (the backlog does it, no thread needed)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


CONNECT = """import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("connected")
except OSError as exc:
    print("failed:", exc)
"""


async def test_network_off_means_no_connection(tcp_server: int) -> None:
    code = CONNECT.format(port=tcp_server)
    allowed = await run_code(make_sandbox(network=True), code)
    assert allowed.output.startswith("connected")  # the default: the network is there
    cut = await run_code(make_sandbox(network=False), code)
    assert cut.output.startswith("failed:")


async def test_a_restricted_file_system_shows_only_the_allowed_folders(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "mine.txt").write_text("visible")
    (tmp_path / "outside.txt").write_text("not for the sandbox")
    code = f"""
import json, os
out = {{}}
for folder in ["/home", "/root", "/srv", "/var", {str(tmp_path)!r}, {str(allowed)!r}]:
    try:
        out[folder] = sorted(os.listdir(folder))
    except OSError as exc:
        out[folder] = type(exc).__name__
try:
    out["outside"] = open({str(tmp_path / "outside.txt")!r}).read()
except OSError as exc:
    out["outside"] = type(exc).__name__
open({str(allowed / "made.txt")!r}, "w").write("from the sandbox")
for path in ["/usr/made.txt", "/etc/made.txt"]:
    try:
        open(path, "w")
        out[path] = "written"
    except OSError as exc:
        out[path] = type(exc).__name__
print(json.dumps(out))
"""
    seen = printed(await run_code(make_sandbox(allowed_paths=[allowed]), code))
    for folder in ("/home", "/root", "/srv", "/var"):
        # Nothing, or only the way to the Python installation (e.g. /root/.pyenv).
        needed = {
            Path(p).relative_to(folder).parts[0] for p in python_paths() if Path(p).is_relative_to(folder)
        }
        assert seen[folder] == "FileNotFoundError" or set(seen[folder]) <= needed, (folder, seen[folder])
    assert "outside.txt" not in seen[str(tmp_path)]
    assert seen[str(allowed)] == ["mine.txt"]
    assert seen["outside"] == "FileNotFoundError"
    assert (allowed / "made.txt").read_text() == "from the sandbox"
    assert seen["/usr/made.txt"] != "written" and seen["/etc/made.txt"] != "written"


async def test_only_the_sessions_own_uploads_are_visible(tmp_path: Path) -> None:
    uploads = tmp_path / "session_files"
    for session in ("mine", "theirs"):
        (uploads / session).mkdir(parents=True)
        (uploads / session / "upload.txt").write_text(f"{session}'s file")
    work = tmp_path / "work"
    work.mkdir()
    sandbox = make_sandbox(allowed_paths=[work], session_files_dir=str(uploads))
    result = await run_code(
        sandbox, read_each([uploads / "mine" / "upload.txt", uploads / "theirs" / "upload.txt"]), "mine"
    )
    seen = printed(result)
    assert seen[str(uploads / "mine" / "upload.txt")] == "mine's file"
    assert seen[str(uploads / "theirs" / "upload.txt")] == "FileNotFoundError"
    assert make_sandbox(session_files_dir=str(uploads)).policy.session_folder("../theirs") is None


async def test_navis_own_code_is_read_only_even_with_the_whole_file_system() -> None:
    import navi

    target = Path(navi.__file__).with_name("planted_by_the_model.py")
    code = f"open({str(target)!r}, 'w').write('import os')"
    try:
        result = await run_code(make_sandbox(), code)
        planted = await asyncio.to_thread(target.exists)
    finally:
        await asyncio.to_thread(target.unlink, missing_ok=True)  # never leave it behind, even on failure
    assert not result.success and "Read-only file system" in result.output
    assert not planted


# --- terminal: writes through the arguments of allowed programs -------------------------------------


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "data.txt").write_text("b\na\n")
    (outside / "target.txt").write_text("original")
    with tarfile.open(str(inside / "a.tar"), "w") as archive:
        info = tarfile.TarInfo("member.txt")
        payload = b"from the archive"
        info.size = len(payload)
        archive.addfile(info, io.BytesIO(payload))
    return inside, outside


ARGUMENT_WRITES = [
    ("sort -o {outside}/target.txt {inside}/data.txt", "sort"),
    ("cp {inside}/data.txt {outside}/target.txt", "cp"),
    ("tar -xf {inside}/a.tar '--to-command=tee {outside}/target.txt'", "tar"),
    ("git -c 'alias.x=!cp {inside}/data.txt {outside}/target.txt' x", "git"),
]


@pytest.mark.parametrize(("command", "program"), ARGUMENT_WRITES, ids=[p for _, p in ARGUMENT_WRITES])
async def test_allowed_programs_cannot_write_outside_the_allowed_folders(
    folders: tuple[Path, Path], command: str, program: str
) -> None:
    inside, outside = folders
    tool = TerminalTool(
        ["sort", "cp", "tar", "git"],
        PathPolicy([str(inside)], base=inside),
        sandbox=make_sandbox(allowed_paths=[inside]),
    )
    with runctx.using(runctx.RunContext(session_id="s1")):
        result = await tool.execute(
            {"command": command.format(inside=inside, outside=outside), "cwd": str(inside)}
        )
    assert not result.success, result.output
    assert "exited with code" in (result.error or "")  # the program's own failure, reported
    assert (outside / "target.txt").read_text() == "original"
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]


async def test_allowed_programs_still_work_inside_the_allowed_folders(folders: tuple[Path, Path]) -> None:
    inside, _ = folders
    tool = TerminalTool(
        ["sort"], PathPolicy([str(inside)], base=inside), sandbox=make_sandbox(allowed_paths=[inside])
    )
    with runctx.using(runctx.RunContext(session_id="s1")):
        result = await tool.execute({"command": f"sort -o {inside}/sorted.txt data.txt"})
    assert result.success, result.output
    assert (inside / "sorted.txt").read_text() == "a\nb\n"


async def test_terminal_gets_a_home_of_its_own(canary_env: str, tmp_path: Path) -> None:
    tool = TerminalTool(["*"], PathPolicy(["*"], base=tmp_path), sandbox=make_sandbox())
    with runctx.using(runctx.RunContext(session_id="s1")):
        result = await tool.execute({"command": "env"})
    assert result.success and canary_env not in result.output
    home = next(line for line in result.output.splitlines() if line.startswith("HOME="))
    assert "navi-term-" in home and home != f"HOME={os.environ.get('HOME')}"


# --- without bubblewrap ----------------------------------------------------------------------------


def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "no-bwrap-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


async def test_required_sandbox_without_bubblewrap_runs_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    no_bwrap(monkeypatch, tmp_path)
    sandbox = Sandbox(SandboxPolicy(mode="required"))
    assert not sandbox.active and "not installed" in sandbox.availability.problem
    marker = tmp_path / "ran"
    result = await run_code(sandbox, f"open({str(marker)!r}, 'w')")
    assert not result.success and "the sandbox is required but not available" in (result.error or "")
    assert "apt-get install bubblewrap" in (result.error or "")
    terminal = TerminalTool(["*"], PathPolicy(["*"], base=tmp_path), sandbox=sandbox)
    with runctx.using(runctx.RunContext(session_id="s1")):
        refused = await terminal.execute({"command": f"touch {marker}"})
    assert not refused.success and "required" in (refused.error or "")
    assert not marker.exists()


async def test_auto_without_bubblewrap_runs_unconfined_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    no_bwrap(monkeypatch, tmp_path)
    sandbox = Sandbox(SandboxPolicy(mode="auto"))
    assert not sandbox.active
    assert sandbox.describe() == "not available (bubblewrap (bwrap) is not installed)"
    result = await run_code(sandbox, "import os\nprint(os.getpid() > 10)")
    assert result.success and result.output.startswith("True")  # as before: no PID namespace


def test_the_probe_reports_what_bwrap_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    sandbox = Sandbox(SandboxPolicy())
    assert not sandbox.active
    assert sandbox.availability.problem.endswith(
        "cannot create a sandbox here: bwrap: No permissions to create new namespace"
    )


def test_the_probe_runs_a_bwrap_once_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from navi.sandbox.probe import probe

    fake, calls = tmp_path / "bin", tmp_path / "calls"
    fake.mkdir()
    script = fake / "bwrap"
    script.write_text(f'#!/bin/sh\necho "$1" >> {calls}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    assert probe().bwrap == str(script) and probe().bwrap == str(script)
    assert calls.read_text().split() == ["--die-with-parent", "--version"]  # one sandbox, one version
    script.write_text(f"#!/bin/sh\necho \"$1\" >> {calls}\necho 'bwrap: broken now' >&2\nexit 1\n")
    assert probe().problem.endswith("cannot create a sandbox here: bwrap: broken now")
    assert calls.read_text().split() == ["--die-with-parent", "--version", "--die-with-parent"]


async def test_the_child_dies_with_bwrap(tmp_path: Path) -> None:
    """--die-with-parent: killing the process Navi started (bwrap) ends everything inside."""
    sandbox = make_sandbox()
    marker = f"61.{os.getpid()}"  # this run's own: another run of this test is not this one's child
    argv = sandbox.command(
        ["sleep", marker], workdir=str(tmp_path), cwd=str(tmp_path), env={"PATH": "/usr/bin:/bin"}
    )
    proc = await asyncio.create_subprocess_exec(*argv, start_new_session=True)
    from tests.test_tool_processes import processes_with

    def sleeping() -> list[int]:  # `sleep` itself, not the bwrap processes whose arguments name it
        found = []
        for pid in processes_with(marker):
            try:
                found += [pid] if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep" else []
            except OSError:
                continue
        return found

    # Killed before its child has run the command, bwrap can die before that child has asked to
    # die with it (seen under load): so wait for `sleep` itself
    for _ in range(200):
        if sleeping():
            break
        await asyncio.sleep(0.05)
    assert sleeping()
    proc.kill()  # SIGKILL to bwrap only: no chance to clean up
    await proc.wait()
    for _ in range(100):
        if not processes_with(marker):
            break
        await asyncio.sleep(0.05)
    assert processes_with(marker) == []


async def test_a_stop_in_bwraps_first_milliseconds_leaves_nothing_running(tmp_path: Path) -> None:
    """Runs stopped 0–10 ms after they start: bwrap's child, in a session of its own, may not yet
    have asked to die with bwrap. The pid bwrap reports on `--info-fd` is killed too, so nothing is
    left running; without it about 1 in 60 such stops left the command behind."""
    from tests.test_tool_processes import processes_with

    sandbox = make_sandbox()
    marker = f"62.{os.getpid()}"  # `sleep 62.<pid>`: this run's own
    delays = random.Random(62)
    for _ in range(90):
        inner = SandboxPid()
        argv = sandbox.command(
            ["sleep", marker],
            workdir=str(tmp_path),
            cwd=str(tmp_path),
            env={"PATH": "/usr/bin:/bin"},
            info_fd=inner.write_fd,
        )
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(delays.random() / 100, stop.set)
        try:
            result = await run_process(argv, time_limit=30, stop_event=stop, sandbox=inner)
        finally:
            inner.close()
        assert result.stopped
    await asyncio.sleep(0.3)
    assert processes_with(marker) == []
