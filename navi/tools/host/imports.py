"""Inside the tool host: import one user tool file and wrap what it defines as `Tool`s.

This is the only place user tool code is executed, and it runs only in the tool-host process
(`python -m navi.tools.host`, under the sandbox), never in Navi's server. The file is checked first
(`navi.tools.loader.check_source`, for a clear reason when it is malformed), then compiled from the
text that was checked and executed as a fresh module (no stale `sys.modules` entry, no bytecode
cache), then its tools are checked as live objects.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from navi.tools.base import Tool, ToolResult
from navi.tools.loader import check_source, name_problems, schema_problems

MODULE_PREFIX = "navi_user_tools"


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
    fmt, problems = check_source(source, path.stem)
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
