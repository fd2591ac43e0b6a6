"""User tools: find `*.py` files in the tools directory, check them, import them, wrap them as `Tool`s.

Two formats are accepted. The module-level format (what `write_tool` writes) defines `name`,
`description`, `parameters` and `async def execute(params)` at top level; the loader wraps it in a
`Tool`. The class-based format defines one or more `Tool` subclasses, each instantiated with no
arguments.

Every file is checked before it is imported (it must parse, must not print at import time, and a
module-level tool must define the four names with a literal `name` equal to the file name), so most
mistakes are reported without running any of the file's code. The same check serves `write_tool`.
Errors are isolated per file: a broken file is reported in `LoadResult.errors` and never stops the
others from loading.

Each file is compiled from the text that was checked and executed as a fresh module, so an edited
file is always picked up on reload (no stale `sys.modules` entry, no bytecode cache).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import re
import sys
import types
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema

from navi.logging import get_logger
from navi.tools.base import Tool, ToolResult

log = get_logger(__name__)

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
MODULE_PREFIX = "navi_user_tools"
REQUIRED_NAMES = ("name", "description", "parameters", "execute")
MAX_SOURCE_CHARS = 200_000

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


class ModuleTool(Tool):
    """A module-level user tool; `_make_module_tool` subclasses it with the module's attributes."""

    name = "module_tool"
    description = ""
    source_file: str = ""

    def __init__(self, fn: Callable[[dict[str, Any]], Awaitable[Any]]) -> None:
        self._fn = fn

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        try:
            result = await self._fn(params)
        except Exception as exc:  # raising is how a module-level tool reports failure
            return ToolResult.fail(f"{type(exc).__name__}: {exc}")
        return as_result(result)


def as_result(value: Any) -> ToolResult:
    """What a module-level `execute` returned, as a `ToolResult` (a str is the normal case)."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.ok(value)
    if value is None:
        return ToolResult.ok("(the tool returned nothing)")
    if isinstance(value, dict | list):
        try:
            return ToolResult.ok(json.dumps(value, ensure_ascii=False, default=str))
        except (TypeError, ValueError):
            pass
    return ToolResult.ok(str(value))


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
    if not NAME_PATTERN.match(value):
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


def _check(source: str, stem: str | None, *, module_format_only: bool) -> tuple[Format | None, list[str]]:
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
    return _check(source, name, module_format_only=module_format_only)[1]


# --- importing ------------------------------------------------------------------------------------


def _exec_module(path: Path, source: str) -> types.ModuleType:
    module_name = f"{MODULE_PREFIX}.{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None:
        raise ImportError(f"cannot make an import spec for {path}")
    module = importlib.util.module_from_spec(spec)
    code = compile(source, str(path), "exec", dont_inherit=True)
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module  # dataclasses and typing look themselves up here
    try:
        exec(code, module.__dict__)
    except BaseException:
        if previous is None:
            sys.modules.pop(module_name, None)
        else:
            sys.modules[module_name] = previous
        raise
    return module


def _module_tool(module: types.ModuleType, stem: str) -> tuple[Tool | None, list[str]]:
    ns = module.__dict__
    problems = name_problems(ns.get("name"), stem)
    description = ns.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("`description` must be a non-empty string")
    problems.extend(schema_problems(ns.get("parameters")))
    fn = ns.get("execute")
    if not inspect.iscoroutinefunction(fn):
        problems.append("`execute` must be an `async def` function")
    else:
        try:
            inspect.signature(fn).bind({})
        except TypeError:
            problems.append("`execute` must take exactly one argument: `async def execute(params: dict)`")
    timeout = ns.get("timeout")
    if not isinstance(timeout, int | float | str) or isinstance(timeout, bool):
        timeout = Tool.timeout  # absent, or something else named timeout (e.g. `from asyncio import timeout`)
    elif isinstance(timeout, str) or timeout <= 0:
        problems.append("`timeout`, when given, must be a positive number of seconds")
    if problems:
        return None, problems
    attrs = {
        "name": ns["name"],
        "description": description,
        "parameters": ns["parameters"],
        "timeout": float(timeout),
        "source_file": str(module.__file__),
        "__module__": module.__name__,
    }
    cls = type(f"UserTool_{stem}", (ModuleTool,), attrs)
    return cls(fn), []


def _class_tools(module: types.ModuleType) -> tuple[list[Tool], list[str]]:
    classes = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Tool)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]
    if not classes:
        return [], ["defines no concrete Tool subclass (and not the module-level format)"]
    tools: list[Tool] = []
    problems: list[str] = []
    for cls in classes:
        try:
            tool = cls()
        except Exception as exc:
            problems.append(f"{cls.__name__}() failed: {type(exc).__name__}: {exc}")
            continue
        found = name_problems(getattr(tool, "name", None), None)
        description = getattr(tool, "description", None)
        if not isinstance(description, str) or not description.strip():
            found.append("`description` must be a non-empty string")
        found.extend(schema_problems(getattr(tool, "parameters", None)))
        if not inspect.iscoroutinefunction(tool.execute):
            found.append("`execute` must be an `async def` method")
        if found:
            problems.extend(f"{cls.__name__}: {p}" for p in found)
        else:
            tools.append(tool)
    return tools, problems


def load_tool_file(path: Path) -> tuple[list[Tool], list[str]]:
    """The tools one file defines, or the problems that keep it from loading."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"cannot read the file: {exc}"]
    fmt, problems = _check(source, path.stem, module_format_only=False)
    if problems:
        return [], problems
    try:
        module = _exec_module(path, source)
    except (Exception, SystemExit) as exc:
        return [], [f"importing it raised {type(exc).__name__}: {exc}{_line_of(exc, path)}"]
    if fmt == "module":
        tool, problems = _module_tool(module, path.stem)
        tools = [tool] if tool else []
    else:
        tools, problems = _class_tools(module)
    if not tools and sys.modules.get(module.__name__) is module:
        del sys.modules[module.__name__]  # nothing from this file is in use; keep no half-loaded module
    return tools, problems


def _line_of(exc: BaseException, path: Path) -> str:
    """' (line N)' for the deepest traceback frame inside `path`, so the author knows where."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (line {line})" if line else ""


def load_tools_from_dir(tools_dir: str | os.PathLike[str], *, reserved: Collection[str] = ()) -> LoadResult:
    """Every tool in `tools_dir/*.py` (files starting with `_` or `.` skipped), in file-name order.

    `reserved` names (the built-ins) cannot be taken by a user tool; a later file cannot take a name
    an earlier one already has. A missing directory simply has no tools.
    """
    result = LoadResult()
    root = Path(tools_dir)
    if not root.exists():
        return result
    if not root.is_dir():
        result.errors.append(LoadError(str(root), "the tools directory is not a directory"))
        return result
    owners: dict[str, str] = {}
    for path in sorted(root.glob("*.py")):
        if path.name.startswith(("_", ".")) or not path.is_file():
            continue
        tools, problems = load_tool_file(path)
        for tool in tools:
            if tool.name in reserved:
                problems.append(
                    f"{tool.name!r} is the name of a built-in tool; a user tool cannot replace it"
                )
            elif tool.name in owners:
                problems.append(f"the tool name {tool.name!r} is already used by {owners[tool.name]}")
            else:
                owners[tool.name] = path.name
                result.loaded.append(tool)
        for problem in problems:
            result.errors.append(LoadError(path.name, problem))
            log.warning("user_tool_load_failed", file=str(path), error=problem)
    log.info("user_tools_loaded", tools_dir=str(root), loaded=result.names, errors=len(result.errors))
    return result
