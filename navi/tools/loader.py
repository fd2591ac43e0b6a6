"""User tool files, checked without running them: what `write_tool` accepts and what is worth
handing to the tool host.

A user tool is a `*.py` file in the tools folder in one of two formats. The module-level format
(what `write_tool` writes) defines `name`, `description`, `parameters` and `async def
execute(params)` at top level; the class-based format defines `Tool` subclasses.

The checks here are about format, not safety. They parse the file and look at its top level (it
must parse, a module-level tool must define the four names with a literal `name` equal to the file
name, `parameters` must be a JSON Schema, `print()` must not run at import time), so most mistakes
are reported with a clear reason before any of the file's code runs. A hostile file passes them
easily (`builtins.print(...)`, work hidden in a default argument, anything computed): nothing here
makes running a file safe. That is the tool host's job: user code is imported and run only in a
separate process under the sandbox (`navi/tools/host/`), never in Navi's server, and what that
process reports back is checked again here (`listing_problems`) before Navi trusts it.

Errors are isolated per file: a broken file is reported in `LoadResult.errors` and never stops the
others from loading.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema

from navi.tools.base import Tool

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
REQUIRED_NAMES = ("name", "description", "parameters", "execute")
MAX_SOURCE_CHARS = 200_000
MAX_DESCRIPTION_CHARS = 10_000
MAX_TOOL_TIMEOUT = 24 * 3600.0

Format = Literal["module", "class"]


@dataclass(frozen=True)
class LoadError:
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


@dataclass
class LoadResult:
    loaded: list[Tool] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.loaded]

    def errors_for(self, file: str) -> list[LoadError]:
        return [e for e in self.errors if e.file == file]


# --- checking source ------------------------------------------------------------------------------


def schema_problems(schema: Any) -> list[str]:
    """Why `schema` cannot be a tool's `parameters` (empty when it can)."""
    if not isinstance(schema, dict):
        return [f"`parameters` must be a dict (a JSON Schema), not {type(schema).__name__}"]
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append('`parameters` must be an object schema: {"type": "object", "properties": {...}}')
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as exc:
        problems.append(f"`parameters` must be plain JSON data: {exc}")
        return problems
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        problems.append(
            f"`parameters` is not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"
        )
        return problems
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if isinstance(properties, dict) and isinstance(required, list):
        missing = [r for r in required if isinstance(r, str) and r not in properties]
        if missing:
            problems.append(
                f"`parameters` requires {', '.join(missing)} but does not list it under properties"
            )
    return problems


def name_problems(value: Any, stem: str | None) -> list[str]:
    if not isinstance(value, str):
        return [f"`name` must be a string, not {type(value).__name__}"]
    if not NAME_PATTERN.fullmatch(value):
        return [
            f"`name` {value!r} is not a valid tool name: use 2-64 characters, lowercase letters, digits "
            "and underscores, starting with a letter"
        ]
    if stem is not None and value != stem:
        return [f"`name` is {value!r} but the file is {stem}.py; the name must equal the file name"]
    return []


class _ImportTimeCalls(ast.NodeVisitor):
    """Finds `print(...)` calls that would run at import time (function bodies are skipped)."""

    def __init__(self) -> None:
        self.lines: list[int] = []

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            self.lines.append(node.lineno)
        self.generic_visit(node)

    def _visit_signature(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for item in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if item is not None:
                self.visit(item)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._visit_signature(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._visit_signature(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        main_guard = (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
        )
        if not main_guard:  # `if __name__ == "__main__":` never runs when the loader imports the file
            self.visit(test)
            for stmt in node.body:
                self.visit(stmt)
        for stmt in node.orelse:
            self.visit(stmt)


def _top_level(tree: ast.Module) -> tuple[dict[str, ast.expr], dict[str, ast.stmt]]:
    """Top-level assignments (name → value) and function definitions (name → def)."""
    values: dict[str, ast.expr] = {}
    defs: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = stmt.value
                    defs.pop(target.id, None)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            values[stmt.target.id] = stmt.value
            defs.pop(stmt.target.id, None)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            defs[stmt.name] = stmt
            values.pop(stmt.name, None)
    return values, defs


def _defines_tool_class(tree: ast.Module) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for base in stmt.bases:
                base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                if base_name.endswith("Tool"):
                    return True
    return False


def check_source(
    source: str, stem: str | None, *, module_format_only: bool = False
) -> tuple[Format | None, list[str]]:
    """The format `source` is in and the problems found in its text (nothing in it is run)."""
    if len(source) > MAX_SOURCE_CHARS:
        return None, [f"the file is too large ({len(source)} characters; at most {MAX_SOURCE_CHARS})"]
    try:
        tree = ast.parse(source, filename=f"{stem or 'tool'}.py")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        return None, [f"syntax error at {where}: {exc.msg}"]
    except ValueError as exc:  # e.g. NUL bytes in the source
        return None, [f"the source cannot be parsed: {exc}"]

    problems: list[str] = []
    calls = _ImportTimeCalls()
    calls.visit(tree)
    if calls.lines:
        lines = ", ".join(str(n) for n in calls.lines)
        problems.append(
            f"print() runs at import time (line {lines}); a tool must not print or do work when it is "
            "loaded: return text from execute instead"
        )

    values, defs = _top_level(tree)
    present = [n for n in REQUIRED_NAMES if n in values or n in defs]
    if not module_format_only and len(present) < len(REQUIRED_NAMES) and _defines_tool_class(tree):
        return "class", problems

    missing = [n for n in REQUIRED_NAMES if n not in present]
    if missing:
        problems.append(
            f"missing top-level {', '.join(f'`{m}`' for m in missing)}: a tool module defines `name`, "
            "`description`, `parameters` and `async def execute(params)`"
            + ("" if module_format_only else " (or a Tool subclass)")
        )

    execute = defs.get("execute")
    if isinstance(execute, ast.FunctionDef):
        problems.append(f"`execute` (line {execute.lineno}) must be defined with `async def`, not `def`")
    elif "execute" in values:
        problems.append("`execute` must be a top-level `async def execute(params)`, not an assignment")
    elif isinstance(execute, ast.AsyncFunctionDef):
        args = execute.args
        positional = len(args.posonlyargs) + len(args.args)
        takes_one = (positional >= 1 or args.vararg is not None) and positional - len(args.defaults) <= 1
        if not takes_one or any(d is None for d in args.kw_defaults):
            problems.append("`execute` must take exactly one argument: `async def execute(params: dict)`")

    if "name" in defs:
        problems.append("`name` must be a string, not a function")
    elif "name" in values:
        node = values["name"]
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            problems.append('`name` must be a plain string literal, e.g. name = "my_tool"')
        else:
            problems.extend(name_problems(node.value, stem))

    if "description" in values:
        node = values["description"]
        if isinstance(node, ast.Constant) and (not isinstance(node.value, str) or not node.value.strip()):
            problems.append("`description` must be a non-empty string saying what the tool does")

    if "parameters" in values:
        try:
            schema = ast.literal_eval(values["parameters"])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass  # built from expressions: checked after import
        else:
            problems.extend(schema_problems(schema))
    elif "parameters" in defs:
        problems.append("`parameters` must be a dict (a JSON Schema), not a function")
    return "module", problems


def check_tool_source(source: str, name: str | None = None, *, module_format_only: bool = False) -> list[str]:
    """Problems that keep `source` from being a loadable tool in `{name}.py` (empty when none).

    Nothing in `source` is run. With `module_format_only` (what `write_tool` accepts) a class-based
    tool is refused; otherwise a file defining a `Tool` subclass passes and is checked after import.
    """
    return check_source(source, name, module_format_only=module_format_only)[1]


def check_tool_file(path: Path) -> tuple[Format | None, list[str]]:
    """`check_source` on a file: its format and problems, or why it cannot be read."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"cannot read the file: {exc}"]
    return check_source(source, path.stem)


def tool_files(tools_dir: str | os.PathLike[str]) -> tuple[list[tuple[Path, Format]], list[LoadError]]:
    """The files of `tools_dir` worth importing (real paths, in file-name order, with their format)
    and the problems of the others. Files starting with `_` or `.` are skipped; a missing folder
    simply has no tools."""
    root = Path(tools_dir)
    if not root.exists():
        return [], []
    if not root.is_dir():
        return [], [LoadError(str(root), "the tools directory is not a directory")]
    root = Path(os.path.realpath(root))
    found: list[tuple[Path, Format]] = []
    errors: list[LoadError] = []
    for path in sorted(root.glob("*.py")):
        if path.name.startswith(("_", ".")) or not path.is_file():
            continue
        fmt, problems = check_tool_file(path)
        if fmt is None or problems:
            errors.extend(LoadError(path.name, p) for p in problems)
        else:
            found.append((path, fmt))
    return found, errors


@dataclass(frozen=True)
class ToolListing:
    """One tool as the tool host describes it, after `listing_problems` found nothing wrong."""

    name: str
    description: str
    parameters: dict[str, Any]
    timeout: float


def listing_problems(entry: Any, stem: str, fmt: Format) -> tuple[ToolListing | None, list[str]]:
    """Check what the tool host says one tool is: the host runs the user's code, so its word is
    checked like any other input (a module-level tool's name must still equal its file's)."""
    if not isinstance(entry, dict):
        return None, ["the tool host described it in a form Navi does not understand"]
    name = entry.get("name")
    problems = name_problems(name, stem if fmt == "module" else None)
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("`description` must be a non-empty string")
    elif len(description) > MAX_DESCRIPTION_CHARS:
        problems.append(f"`description` is longer than {MAX_DESCRIPTION_CHARS} characters")
    parameters = entry.get("parameters")
    problems.extend(schema_problems(parameters))
    timeout = entry.get("timeout")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or not 0 < timeout <= MAX_TOOL_TIMEOUT
    ):
        problems.append(
            f"`timeout`, when given, must be a positive number of seconds (at most {MAX_TOOL_TIMEOUT:g})"
        )
    if problems:
        return None, problems
    assert isinstance(name, str) and isinstance(description, str) and isinstance(parameters, dict)
    assert isinstance(timeout, int | float)
    return ToolListing(name, description, parameters, float(timeout)), []
