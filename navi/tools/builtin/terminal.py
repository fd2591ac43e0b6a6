"""`terminal`: run one program, without a shell, optionally restricted to an allowlist.

The command line is split like a shell would split words (`shlex`), but nothing else a shell does
happens: no pipes, redirects, `;`, `&&`, variables, globs or `$(…)`. Commands using that syntax are
refused with an explanation rather than silently run with odd arguments.

When `TERMINAL_ALLOWED_COMMANDS` is not `*`, a command runs only if the name typed is on the list
and it resolves to the same real executable as that name does on the safe PATH. So `/tmp/x/ls`,
a symlink named `ls`, or a multi-call binary invoked under another name (`busybox rm`) are refused,
and so are wrappers that run other programs (`env`, `sh -c`, `xargs`, `sudo`…) unless listed.

The allowlist decides which program starts; it cannot decide what the program's arguments make it
do (`sort -o FILE`, `cp`, `tar --to-command`, `git -c alias.x=!…` all write or run things). That is
the sandbox's job: the program runs under it (`navi/sandbox/`), so with a restricted
FS_ALLOWED_PATHS nothing outside the allowed folders is visible or writable to it, whatever its
arguments say. HOME is a fresh temporary folder for each command.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

from navi.sandbox import Sandbox
from navi.tools.base import Tool, ToolResult
from navi.tools.paths import PathDenied, PathPolicy
from navi.tools.process import Program, run_confined

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_TIMEOUT = 600
MAX_OUTPUT = 20_000
SHELL_HINT = (
    "terminal runs a single program without a shell, so pipes, redirects, `;`, `&&`, `$(…)` and "
    "backticks are not available. Run one command at a time, or use code_exec for scripting."
)


def shell_syntax(command: str) -> str | None:
    """The first piece of shell syntax in `command` (outside quotes), or None."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None  # unbalanced quotes: reported by the split itself
    for token in tokens:
        if token and set(token) <= set("|&;<>()"):
            return token
    if "`" in command or "$(" in command:
        return "`" if "`" in command else "$("
    return None


class TerminalTool(Tool):
    name = "terminal"
    description = "Run one program on this machine, e.g. `df -h`. No shell: no pipes, redirects, `;` or `&&`."
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1},
            "cwd": {"type": "string", "minLength": 1},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    timeout = MAX_TIMEOUT + 10.0

    def __init__(
        self, allowed: list[str], policy: PathPolicy, *, sandbox: Sandbox, default_timeout: int = 60
    ) -> None:
        self.sandbox = sandbox
        self.unrestricted = not allowed or "*" in allowed
        self.allowed_names = {a.strip() for a in allowed if a.strip() and a.strip() != "*"}
        self.policy = policy
        self.default_timeout = default_timeout

    def _resolve(self, program: str, cwd: Path) -> Path | None:
        if "/" in program:
            candidate = Path(program) if Path(program).is_absolute() else cwd / program
            return Path(os.path.realpath(candidate)) if candidate.is_file() else None
        found = shutil.which(program, path=SAFE_PATH)
        return Path(os.path.realpath(found)) if found else None

    def _check_allowed(self, program: str, resolved: Path, cwd: Path) -> str | None:
        if self.unrestricted:
            return None
        listed = ", ".join(sorted(self.allowed_names)) or "nothing"
        typed = os.path.basename(program)
        if typed not in self.allowed_names:
            return f"`{typed}` is not an allowed command (TERMINAL_ALLOWED_COMMANDS: {listed})"
        expected = self._resolve(typed, cwd) if "/" not in typed else None
        if expected is None or expected != resolved:
            return (
                f"`{program}` resolves to {resolved}, which is not the allowed `{typed}`"
                f"{f' ({expected})' if expected else ''}"
            )
        return None

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        command: str = params["command"]
        syntax = shell_syntax(command)
        if syntax is not None:
            return ToolResult.fail(f"`{syntax}` is shell syntax. {SHELL_HINT}")
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return ToolResult.fail(f"cannot split the command: {exc}")
        if not argv:
            return ToolResult.fail("the command is empty")
        # Without a cwd, run in the working directory, or in the first allowed folder when restricted.
        default_cwd = "." if self.policy.unrestricted else str(self.policy.roots[0])
        try:
            cwd = self.policy.resolve(params.get("cwd", default_cwd))
        except PathDenied as exc:
            return ToolResult.fail(str(exc))
        if not cwd.is_dir():
            return ToolResult.fail(f"working directory {params.get('cwd')} does not exist")
        resolved = self._resolve(argv[0], cwd)
        if resolved is None:
            return ToolResult.fail(f"command not found: {argv[0]}")
        if self.policy.is_other_upload(resolved):  # the sandbox hides it too; say why here
            return ToolResult.fail(str(self.policy.upload_denied(argv[0])))
        refusal = self._check_allowed(argv[0], resolved, cwd)
        if refusal:
            return ToolResult.fail(refusal)
        limit = params.get("timeout", self.default_timeout)
        with tempfile.TemporaryDirectory(prefix="navi-term-") as home:
            env = {"PATH": SAFE_PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
            env["TERM"] = "dumb"
            # argv[0] stays as typed (multi-call binaries dispatch on it); exec resolves it on the
            # same safe PATH the check used.
            program = Program(argv=argv, workdir=home, cwd=str(cwd), env=env)
            return await run_confined(
                self.sandbox, program, what="command", time_limit=limit, max_output=MAX_OUTPUT
            )
