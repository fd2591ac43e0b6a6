"""The tool registry: every tool by name, built-ins marked so reloads never drop them.

A profile never reaches into the registry directly: it gets a `ToolView`, the subset of tools named
by its tool list (plus the user tools enabled for all profiles). Arguments are validated against a
tool's schema here, before the tool runs.

Tools of MCP servers (`navi/mcp/`) are registered with the server they come from: they are neither
built-ins nor user tools, so reloading the user tools leaves them alone, and a server's name, where
a tool list names it, stands for all of its tools.

User tools come from a `UserToolLoader` — in Navi, the tool host (`navi/tools/host/`), which runs
them in a sandboxed process and gives the registry a proxy for each. The registry never imports a
user's file itself.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol

import jsonschema

from navi.llm.messages import ToolSpec
from navi.tools.base import Tool
from navi.tools.loader import LoadError, LoadResult


class UserToolLoader(Protocol):
    async def load(self, tools_dir: str | os.PathLike[str], *, reserved: Collection[str] = ()) -> LoadResult:
        """Every tool in `tools_dir`, none named like one in `reserved`, and each file's problems."""
        ...


class ToolView:
    """The tools one profile may use, in a stable order.

    `aliases` (a former name → the tool's name) let a call by a tool's former name reach it; the
    model is offered each tool once, by its own name (`names`, `specs`).
    """

    def __init__(self, tools: list[Tool], aliases: Mapping[str, str] | None = None) -> None:
        self._tools = {t.name: t for t in tools}
        self._specs: list[ToolSpec] | None = None
        self.aliases = {old: new for old, new in (aliases or {}).items() if new in self._tools}

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def canonical(self, name: str) -> str:
        """`name`, or the name of the tool it is a former name of."""
        return name if name in self._tools else self.aliases.get(name, name)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(self.canonical(name))

    def specs(self) -> list[ToolSpec]:
        if self._specs is None:
            self._specs = [t.spec() for t in self._tools.values()]
        return self._specs

    def __contains__(self, name: object) -> bool:
        return name in self._tools or name in self.aliases

    def __len__(self) -> int:
        return len(self._tools)


class ToolRegistry:
    def __init__(self, user_tools: UserToolLoader | None = None) -> None:
        """`user_tools` loads the user's tools for `reload_user_tools`; without one there are none."""
        self.user_tool_loader = user_tools
        self._tools: dict[str, Tool] = {}
        self._builtin: set[str] = set()
        self._servers: dict[str, str] = {}  # tool name → the MCP server it comes from
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        self._aliases: dict[str, str] = {}  # a built-in's former name → its name

    def register(self, tool: Tool, *, builtin: bool = False, server: str | None = None) -> None:
        """Add `tool`; `server` names the MCP server it comes from (see `server_of`)."""
        self._tools[tool.name] = tool
        self._validators.pop(tool.name, None)
        if builtin:
            self._builtin.add(tool.name)
        if server is not None:
            self._servers[tool.name] = server

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._validators.pop(name, None)
        self._builtin.discard(name)
        self._servers.pop(name, None)

    def alias(self, old: str, name: str) -> None:
        """Let calls by `old`, a former name of built-in `name`, reach it (never offered as `old`).

        A user tool may not take the name `old` (a reload reserves it like a built-in's)."""
        self._aliases[old] = name

    @property
    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def server_of(self, name: str) -> str | None:
        """The MCP server tool `name` comes from, or None for built-in and user tools."""
        return self._servers.get(name)

    def server_tools(self, server: str) -> list[str]:
        """The names of the tools MCP server `server` has registered now."""
        return [n for n, s in self._servers.items() if s == server]

    def mcp_tools(self) -> list[Tool]:
        return [t for n, t in self._tools.items() if n in self._servers]

    def get(self, name: str) -> Tool | None:
        """The tool `name`, or the tool `name` is a former name of."""
        return self._tools.get(name) or self._tools.get(self._aliases.get(name, ""))

    def names(self) -> list[str]:
        return list(self._tools)

    @property
    def builtin_names(self) -> set[str]:
        return set(self._builtin)

    def is_builtin(self, name: str) -> bool:
        return name in self._builtin

    def user_tools(self) -> list[Tool]:
        return [t for n, t in self._tools.items() if n not in self._builtin and n not in self._servers]

    async def reload_user_tools(self, tools_dir: str | os.PathLike[str]) -> LoadResult:
        """Replace every user tool with what `tools_dir` holds now; built-ins always stay.

        Loading happens before anything is dropped, so the registry is never seen half-reloaded. A
        user tool named like a built-in (or an MCP server's tool) is a load error, never a
        replacement; MCP tools stay.
        """
        if self.user_tool_loader is None:
            return LoadResult(errors=[LoadError(str(tools_dir), "user tools cannot be loaded: no tool host")])
        reserved = self._builtin | set(self._servers) | set(self._aliases)
        result = await self.user_tool_loader.load(tools_dir, reserved=reserved)
        for tool in self.user_tools():
            self.unregister(tool.name)
        for tool in result.loaded:
            self.register(tool)
        return result

    def view(self, names: Iterable[str]) -> ToolView:
        """The tools named; a name that is no tool but an MCP server's name stands for its tools."""
        picked: dict[str, Tool] = {}
        for asked in names:
            name = asked if asked in self._tools else self._aliases.get(asked, asked)
            if name in self._tools:
                picked.setdefault(name, self._tools[name])
            else:
                for tool in self.server_tools(name):
                    picked.setdefault(tool, self._tools[tool])
        return ToolView(list(picked.values()), self._aliases)

    def validation_error(self, tool: Tool, args: dict[str, Any]) -> str | None:
        """None when `args` fit the tool's schema, else a sentence saying what is wrong."""
        validator = self._validators.get(tool.name)
        if validator is None:
            cls = jsonschema.validators.validator_for(
                tool.parameters, default=jsonschema.Draft202012Validator
            )
            validator = cls(tool.parameters)
            self._validators[tool.name] = validator
        error = jsonschema.exceptions.best_match(validator.iter_errors(args))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"invalid arguments for {tool.name}{f' at {where}' if where else ''}: {error.message}"
