"""Tools about tools: reload user tools, write a new one, list what exists, read a tool's manual.

These let the agent extend itself: `write_tool` checks the code with the loader's own checker
before anything touches the disk, writes `tools/{name}.py`, enables it for all profiles and reloads.
The model's tool list is built when a user message arrives, so new tools appear from the next one.

The check is about format (a clear reason for a malformed tool, before anything is saved), not
safety: the written code is only ever imported and run in the tool host, a separate sandboxed
process (`navi/tools/host/`), never in Navi's server. The file stays in the tools folder, so the
tool is there again after a restart: it is the user's tool, running where user tools run.
"""

from __future__ import annotations

import importlib.resources
import os
import re
from pathlib import Path
from typing import Any

from navi.logging import get_logger
from navi.tools.base import Tool, ToolResult
from navi.tools.loader import NAME_PATTERN, LoadResult, check_tool_source
from navi.tools.registry import ToolRegistry
from navi.tools.user_config import add_enabled, atomic_write_text

log = get_logger(__name__)

MAX_CODE_CHARS = 100_000
NEXT_MESSAGE = "New or changed tools are available from the next user message."


def _summarise(result: LoadResult) -> str:
    loaded = ", ".join(sorted(result.names)) or "none"
    lines = [f"Loaded {len(result.loaded)} user tool(s): {loaded}."]
    if result.errors:
        lines.append(f"{len(result.errors)} problem(s):")
        lines.extend(f"- {e}" for e in result.errors)
    return "\n".join(lines)


def first_line(text: str, limit: int = 120) -> str:
    """The first sentence of `text` (or as much as fits in `limit` characters)."""
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


class ReloadToolsTool(Tool):
    name = "reload_tools"
    description = (
        "Reload the user tools from the tools folder; reports what loaded and what failed, and "
        "why. Built-in tools stay."
    )
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}
    timeout = 60.0

    def __init__(self, registry: ToolRegistry, tools_dir: str | os.PathLike[str]) -> None:
        self.registry = registry
        self.tools_dir = tools_dir

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        result = await self.registry.reload_user_tools(self.tools_dir)
        return ToolResult.ok(
            f"{_summarise(result)}\n{NEXT_MESSAGE}",
            loaded=result.names,
            errors=[{"file": e.file, "message": e.message} for e in result.errors],
        )


class WriteToolTool(Tool):
    name = "write_tool"
    description = (
        "Create or replace the user tool tools/{name}.py from `code`, a whole module (name, "
        "description, parameters, async def execute). It is checked, enabled for all profiles and "
        "loaded for the next user message. Read tool_manual('write_tool') first."
    )
    parameters = {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "pattern": NAME_PATTERN.pattern,
                "description": "the same as `name` in the code",
            },
            "code": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_CODE_CHARS,
            },
        },
        "required": ["name", "code"],
        "additionalProperties": False,
    }
    timeout = 60.0

    def __init__(self, registry: ToolRegistry, tools_dir: str | os.PathLike[str]) -> None:
        self.registry = registry
        self.tools_dir = tools_dir

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        name, code = params["name"], params["code"]
        if not NAME_PATTERN.fullmatch(name):  # not .match: its `$` also matches before a final newline
            return ToolResult.fail(
                f"{name!r} is not a valid tool name: 2-64 lowercase letters, digits and underscores, "
                "starting with a letter"
            )
        if self.registry.is_builtin(name):
            return ToolResult.fail(f"{name!r} is a built-in tool and cannot be replaced; choose another name")
        problems = check_tool_source(code, name, module_format_only=True)
        if problems:
            listed = "\n".join(f"- {p}" for p in problems)
            return ToolResult.fail(
                f"the code was not saved:\n{listed}\nSee tool_manual('write_tool') for the format.",
                problems=problems,
            )
        path = Path(self.tools_dir) / f"{name}.py"
        existed = path.exists()
        atomic_write_text(path, code if code.endswith("\n") else code + "\n")
        add_enabled(self.tools_dir, name)
        log.info("user_tool_written", tool=name, path=str(path), replaced=existed)
        result = await self.registry.reload_user_tools(self.tools_dir)
        verb = "Updated" if existed else "Created"
        own_errors = result.errors_for(path.name)
        if name not in result.names or own_errors:
            reasons = "\n".join(f"- {e.message}" for e in own_errors) or "- it was not found after reloading"
            return ToolResult.fail(
                f"{verb} {path}, but the tool failed to load:\n{reasons}\n"
                "Fix the code and call write_tool again with the same name.",
                path=str(path),
                loaded=False,
            )
        others = [e for e in result.errors if e.file != path.name]
        text = f"{verb} {path}; tool '{name}' loaded and enabled for all profiles. {NEXT_MESSAGE}"
        if others:
            text += "\nOther tool files have problems:\n" + "\n".join(f"- {e}" for e in others)
        return ToolResult.ok(text, path=str(path), loaded=True)


class ListToolsTool(Tool):
    name = "list_tools"
    description = "List every tool that exists now (built-in, user and MCP servers'), one line each."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}
    timeout = 5.0

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        builtin = sorted(self.registry.builtin_names)
        user = sorted(t.name for t in self.registry.user_tools())
        mcp = sorted(t.name for t in self.registry.mcp_tools())
        lines: list[str] = []
        for group, names in (("built-in", builtin), ("user", user), ("mcp", mcp)):
            for n in names:
                tool = self.registry.get(n)
                if tool is not None:
                    kind = f"MCP server {self.registry.server_of(n)}" if group == "mcp" else group
                    lines.append(f"- {n} ({kind}): {first_line(tool.description)}")
        if not lines:
            return ToolResult.ok("No tools are registered.")
        from_mcp = f", {len(mcp)} from MCP servers" if mcp else ""
        header = f"{len(lines)} tools ({len(builtin)} built-in, {len(user)} user{from_mcp}):"
        return ToolResult.ok("\n".join([header, *lines]), builtin=builtin, user=user, mcp=mcp)


_MANUAL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def package_manual(name: str) -> str | None:
    """The manual shipped with Navi for `name` (navi/tools/manuals/{name}.md), if there is one."""
    try:
        resource = importlib.resources.files("navi.tools").joinpath("manuals", f"{name}.md")
        return resource.read_text(encoding="utf-8") if resource.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def _type_text(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " or ".join(str(k) for k in kind)
    elif isinstance(kind, str):
        text = kind
    elif "enum" in schema:
        text = "value"
    else:
        options = schema.get("anyOf") or schema.get("oneOf")
        text = " or ".join(_type_text(o) for o in options if isinstance(o, dict)) if options else "any"
    if kind == "array" and isinstance(schema.get("items"), dict):
        text = f"array of {_type_text(schema['items'])}"
    return text


_CONSTRAINTS = {
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "more than {}",
    "exclusiveMaximum": "less than {}",
    "minLength": "at least {} character(s)",
    "maxLength": "at most {} characters",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "pattern": "matching /{}/",
}


def generated_manual(tool: Tool, *, builtin: bool) -> str:
    """A manual made from the tool's description and schema, for tools nobody wrote one for."""
    params = tool.parameters if isinstance(tool.parameters, dict) else {}
    properties = params.get("properties") or {}
    required = set(params.get("required") or [])
    lines = [
        f"# {tool.name} ({'built-in' if builtin else 'user'} tool)",
        "",
        tool.description.strip(),
        "",
        "## Parameters",
        "",
    ]
    if not properties:
        lines.append("None: call it with an empty object {}.")
    for pname, pschema in properties.items():
        pschema = pschema if isinstance(pschema, dict) else {}
        facts = [_type_text(pschema), "required" if pname in required else "optional"]
        line = f"- `{pname}` ({', '.join(facts)})"
        if pschema.get("description"):
            line += f": {pschema['description']}"
        extra: list[str] = []
        if "enum" in pschema:
            extra.append("one of " + ", ".join(repr(v) for v in pschema["enum"]))
        if "default" in pschema:
            extra.append(f"default {pschema['default']!r}")
        extra.extend(fmt.format(pschema[key]) for key, fmt in _CONSTRAINTS.items() if key in pschema)
        if extra:
            line += f" [{'; '.join(extra)}]"
        lines.append(line)
    if params.get("additionalProperties") is False:
        lines += ["", "No other parameters are accepted."]
    lines += ["", f"Times out after {tool.timeout:g} s.", "", "(Generated from the tool's schema.)"]
    return "\n".join(lines)


class ToolManualTool(Tool):
    name = "tool_manual"
    description = (
        "A tool's manual: what it does, its parameters, how to use it well. Read it when unsure "
        "about a tool, and always before write_tool."
    )
    parameters = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}},
        "required": ["name"],
        "additionalProperties": False,
    }
    timeout = 5.0

    def __init__(self, registry: ToolRegistry, manuals_dir: str | os.PathLike[str]) -> None:
        self.registry = registry
        self.manuals_dir = manuals_dir

    def _user_manual(self, name: str) -> str | None:
        path = Path(self.manuals_dir) / f"{name}.md"
        try:
            return path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("tool_manual_unreadable", file=str(path), error=str(exc))
            return None

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        name = params["name"].strip()
        if any(sep in name for sep in ("/", "\\", os.sep)) or name.startswith(".") or "\x00" in name:
            return ToolResult.fail("give a tool name, not a path (no '/', '\\' or leading '.')")
        if not _MANUAL_NAME.match(name):
            return ToolResult.fail(f"{name!r} is not a tool name (letters, digits, '_' and '-' only)")
        tool = self.registry.get(name)
        for source, text in (("user", self._user_manual(name)), ("package", package_manual(name))):
            if text is not None:
                if tool is None:
                    text += f"\n\n(Note: no tool named '{name}' is loaded right now.)"
                return ToolResult.ok(text, source=source)
        if tool is None:
            known = ", ".join(sorted(self.registry.names())) or "none"
            return ToolResult.fail(f"there is no tool named {name!r}. Tools: {known}")
        return ToolResult.ok(
            generated_manual(tool, builtin=self.registry.is_builtin(name)), source="generated"
        )
