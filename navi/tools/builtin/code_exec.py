"""`code_exec`: run Python in a sandboxed child process with time, memory and CPU limits.

The code runs in a fresh temporary directory (deleted afterwards; its HOME and TMPDIR) under a
small bootstrap that sets resource limits inside the child before running it — `preexec_fn` would
be unsafe in a process with threads. The child runs under the sandbox (`navi/sandbox/`): its own
PID namespace and /proc, an environment of its own, only the allowed folders when FS_ALLOWED_PATHS
is restricted, never Navi's secrets. It is a process-group leader, so a timeout or the user's stop
kills it and everything it started.
"""

from __future__ import annotations

import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from navi.sandbox import Sandbox
from navi.tools.base import Tool, ToolResult
from navi.tools.process import Program, run_confined

MAX_TIMEOUT = 300
MAX_OUTPUT = 20_000


def program_env(tmp: str, memory_mb: int, seconds: int, **extra: str) -> dict[str, str]:
    """The environment of a program run in the sandbox through `sandbox_bootstrap.py`: a clean
    PATH, the temporary folder as home, UTF-8, and the memory and CPU limits the bootstrap sets."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        **extra,
        "NAVI_MEMORY_BYTES": str(memory_mb * 1024 * 1024),
        "NAVI_CPU_SECONDS": str(seconds + 1),
    }


class CodeExecTool(Tool):
    name = "code_exec"
    description = (
        "Run a Python 3 program, for anything that needs exact results; you see only what it prints. "
        "It runs in an empty temporary folder with limited time and memory: use absolute file paths."
    )
    parameters = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 1},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
        },
        "required": ["code"],
        "additionalProperties": False,
    }
    timeout = MAX_TIMEOUT + 10.0

    def __init__(self, *, sandbox: Sandbox, memory_mb: int = 512, default_timeout: int = 30) -> None:
        self.sandbox = sandbox
        self.memory_mb = memory_mb
        self.default_timeout = default_timeout

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        limit = params.get("timeout", self.default_timeout)
        bootstrap = resources.files("navi.tools").joinpath("sandbox_bootstrap.py")
        with tempfile.TemporaryDirectory(prefix="navi-code-") as tmp, resources.as_file(bootstrap) as boot:
            script = Path(tmp) / "main.py"
            script.write_text(params["code"], encoding="utf-8")
            env = program_env(tmp, self.memory_mb, limit)
            program = Program(
                argv=[sys.executable, "-I", str(boot), str(script)],
                workdir=tmp,
                cwd=tmp,
                env=env,
                readable=[str(boot)],
            )
            return await run_confined(
                self.sandbox, program, what="program", time_limit=limit, max_output=MAX_OUTPUT
            )
