"""`use_skill`, `run_skill_script`, `write_skill`: the user's Agent Skills, used by the model.

The system message lists each enabled skill by name and a line of its description
(`SkillLibrary.listing`); `use_skill` hands over the instructions (SKILL.md's body) and the list of
the skill's files, and reads one of them on demand (a reference, an asset's size).

`run_skill_script` runs a file of the skill's `scripts/` the way `code_exec` runs a program: in the
sandbox, in a fresh scratch folder, with time and memory limits, the run's stop. The network is
off unless the skill's metadata asks for it (`network: "true"`) and SANDBOX_NETWORK allows it; the
approval says so. In `smart` mode its first call asks ("the skill X wants to run scripts/y.py"),
and "Always" is remembered for the skill as it is now — a hash of all its files — so a changed
file asks again (`navi.agent.approvals.VERSIONED`).

`write_skill` saves a skill the model wrote (instructions plus files such as scripts) into the
user's own skills folder, through the same checks as any installed skill.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from navi import runctx
from navi.sandbox import Sandbox
from navi.sessions.models import DEFAULT_OWNER
from navi.skills import Skill, SkillError, SkillLibrary, SkillNotFound
from navi.skills.format import MAX_DESCRIPTION, SKILL_FILE, safe_relative
from navi.tools.base import Tool, ToolResult
from navi.tools.builtin.code_exec import program_env
from navi.tools.process import Program, run_confined

MAX_READ = 40_000
MAX_TIMEOUT = 300
MAX_OUTPUT = 20_000
INTERPRETERS: dict[str, list[str]] = {".sh": ["bash"], ".bash": ["bash"], ".js": ["node"], ".mjs": ["node"]}


def _owner() -> str:
    ctx = runctx.current()
    return ctx.owner if ctx is not None else DEFAULT_OWNER


def _skill(library: SkillLibrary, name: str) -> Skill | ToolResult:
    report = library.load(_owner())
    skill = report.get(name)
    if skill is None:
        known = ", ".join(s.name for s in report.enabled()) or "none"
        return ToolResult.fail(f"there is no skill named {name!r}. Skills: {known}")
    if skill.name in report.disabled:
        return ToolResult.fail(
            f"the skill {name!r} is disabled; the user can enable it (navi skills enable {name})"
        )
    return skill


class UseSkillTool(Tool):
    name = "use_skill"
    description = (
        "Read a skill's instructions before doing its task. With `file`, read one of its files "
        "(references/…) when the instructions point to it."
    )
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 64},
            "file": {"type": "string", "maxLength": 300, "description": "a path inside the skill"},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    timeout = 10.0
    keywords = ("skill",)

    def __init__(self, library: SkillLibrary) -> None:
        self.library = library

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        name = params["name"].strip()
        report = self.library.load(_owner())
        if name == "list" and report.get("list") is None:
            lines = [f"- {s.name}: {s.description}" for s in report.enabled()]
            return ToolResult.ok(
                "\n".join(lines) or "No skills are installed.", skills=[s.name for s in report.enabled()]
            )
        found = _skill(self.library, name)
        if isinstance(found, ToolResult):
            return found
        if params.get("file"):
            return self._file(found, params["file"])
        files = found.files()
        parts = [
            f"# Skill: {found.name}",
            "",
            found.body or "(the skill has no instructions beyond its description)",
        ]
        if files:
            parts += ["", "## Files of this skill", *(f"- {f}" for f in files)]
            parts += [
                "",
                f"Read a file with use_skill(name='{found.name}', file=…); run a script with "
                f"run_skill_script(skill='{found.name}', script='scripts/…', args=[…]).",
            ]
        if found.allowed_tools:
            parts += [
                "",
                f"(The skill names these tools: {' '.join(found.allowed_tools)}; each still asks as usual.)",
            ]
        return ToolResult.ok("\n".join(parts), skill=found.name, files=files)

    def _file(self, skill: Skill, file: str) -> ToolResult:
        rel = safe_relative(file.strip())
        if rel is None:
            return ToolResult.fail("`file` must be a path inside the skill, such as references/guide.md")
        path = skill.folder / rel
        if (rel not in skill.files() and rel != SKILL_FILE) or path.is_symlink():
            listed = ", ".join(skill.files()) or "none besides SKILL.md"
            return ToolResult.fail(f"the skill {skill.name!r} has no file {rel!r}. Its files: {listed}")
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return ToolResult.ok(
                f"{rel} is a binary file of {len(data):,} bytes; a script of the skill can read it "
                f"(its folder is $SKILL_DIR).",
                skill=skill.name,
                file=rel,
            )
        if len(text) > MAX_READ:
            text = text[:MAX_READ] + f"\n[cut: {len(text) - MAX_READ:,} more characters]"
        return ToolResult.ok(text, skill=skill.name, file=rel)


class RunSkillScriptTool(Tool):
    name = "run_skill_script"
    description = (
        "Run a skill's script in the sandbox. Use it as the skill's instructions say; you see what it "
        "prints. It runs in an empty scratch folder: use absolute paths."
    )
    parameters = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "minLength": 1, "maxLength": 64},
            "script": {"type": "string", "minLength": 1, "maxLength": 300},
            "args": {"type": "array", "items": {"type": "string", "maxLength": 4000}, "maxItems": 64},
            "stdin": {"type": "string", "maxLength": 200_000},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
        },
        "required": ["skill", "script"],
        "additionalProperties": False,
    }
    timeout = MAX_TIMEOUT + 10.0

    def __init__(
        self, library: SkillLibrary, *, sandbox: Sandbox, memory_mb: int = 512, default_timeout: int = 60
    ) -> None:
        self.library = library
        self.sandbox = sandbox
        self.memory_mb = memory_mb
        self.default_timeout = default_timeout

    def sandbox_for(self, skill: Skill) -> Sandbox:
        """The sandbox with the network only when the skill asks for it and the settings allow it."""
        policy = replace(self.sandbox.policy, network=self.sandbox.policy.network and skill.wants_network)
        return Sandbox(policy, self.sandbox.availability)

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        found = _skill(self.library, params["skill"].strip())
        if isinstance(found, ToolResult):
            return found
        rel = safe_relative(params["script"].strip())
        if rel is None or not rel.startswith("scripts/"):
            return ToolResult.fail(
                "`script` must be a file under the skill's scripts/ folder, such as scripts/run.py"
            )
        if rel not in found.scripts() or (found.folder / rel).is_symlink():
            listed = ", ".join(found.scripts()) or "none"
            return ToolResult.fail(f"the skill {found.name!r} has no script {rel!r}. Its scripts: {listed}")
        script = (found.folder / rel).resolve()
        limit = params.get("timeout", self.default_timeout)
        args = [str(a) for a in params.get("args", [])]
        bootstrap = resources.files("navi.tools").joinpath("sandbox_bootstrap.py")
        with tempfile.TemporaryDirectory(prefix="navi-skill-") as tmp, resources.as_file(bootstrap) as boot:
            argv = self._argv(script, str(boot), args)
            if argv is None:
                return ToolResult.fail(
                    f"Navi does not know how to run {rel}: use .py, .sh or .js, "
                    "or start the file with a #! line"
                )
            env = program_env(tmp, self.memory_mb, limit, SKILL_DIR=str(found.folder.resolve()))
            program = Program(
                argv=argv,
                workdir=tmp,
                cwd=tmp,
                env=env,
                readable=[str(boot), str(found.folder.resolve())],
                stdin=params.get("stdin"),
            )
            result = await run_confined(
                self.sandbox_for(found),
                program,
                what=f"script {rel}",
                time_limit=limit,
                max_output=MAX_OUTPUT,
            )
        result.metadata.update(skill=found.name, script=rel)
        return result

    @staticmethod
    def _argv(script: Path, boot: str, args: list[str]) -> list[str] | None:
        if script.suffix == ".py":
            return [sys.executable, "-I", boot, str(script), *args]
        if script.suffix in INTERPRETERS:
            return [*INTERPRETERS[script.suffix], str(script), *args]
        with script.open("rb") as fh:
            first = fh.readline(300)
        if first.startswith(b"#!"):
            try:
                shebang = shlex.split(first[2:].decode("utf-8").strip())
            except (UnicodeDecodeError, ValueError):
                return None
            return [*shebang, str(script), *args] if shebang else None
        return None


class WriteSkillTool(Tool):
    name = "write_skill"
    description = (
        "Save a task's instructions as a skill. Markdown instructions, with optional files such as "
        "scripts/run.py; checked, then listed under 'Skills' from the next message."
    )
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$", "maxLength": 64},
            "description": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_DESCRIPTION,
                "description": "what it does and when to use it",
            },
            "instructions": {"type": "string", "minLength": 1, "maxLength": 100_000},
            "files": {
                "type": "object",
                "additionalProperties": {"type": "string", "maxLength": 100_000},
                "description": "path inside the skill (scripts/…, references/…) → text",
            },
        },
        "required": ["name", "description", "instructions"],
        "additionalProperties": False,
    }
    timeout = 30.0
    keywords = ("remember how", "save this as a skill", "new skill")

    def __init__(self, library: SkillLibrary) -> None:
        self.library = library

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        owner = _owner()
        try:
            skill = self.library.write(
                owner,
                params["name"],
                params["description"],
                params["instructions"],
                params.get("files") or {},
            )
        except SkillError as exc:
            listed = "\n".join(f"- {p}" for p in exc.problems)
            return ToolResult.fail(
                f"the skill was not saved:\n{listed}", problems=[str(p) for p in exc.problems]
            )
        except SkillNotFound as exc:  # pragma: no cover - write reads back what it wrote
            return ToolResult.fail(str(exc))
        files = skill.files()
        listed = f" with {', '.join(files)}" if files else ""
        return ToolResult.ok(
            f"Saved the skill '{skill.name}'{listed}. "
            "It is listed under 'Skills' from the next user message.",
            skill=skill.name,
            files=files,
        )


SKILL_TOOLS: tuple[str, ...] = (UseSkillTool.name, RunSkillScriptTool.name, WriteSkillTool.name)


def register_skill_tools(
    registry: Any, library: SkillLibrary, *, sandbox: Sandbox, memory_mb: int, timeout: int
) -> None:
    for tool in (
        UseSkillTool(library),
        RunSkillScriptTool(library, sandbox=sandbox, memory_mb=memory_mb, default_timeout=timeout),
        WriteSkillTool(library),
    ):
        registry.register(tool, builtin=True)
