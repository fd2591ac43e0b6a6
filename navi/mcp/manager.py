"""The MCP servers Navi uses: their connections, their tools in the registry, who is offered them.

The composition root builds one `McpManager` from `MCP_SERVERS_FILE`, starts it (every server in
the background) and closes it with the runtime. Whenever a server's tool list changes — listed at
start, re-listed on `notifications/tools/list_changed`, emptied when the server dies — its entries
in the registry are replaced. The agent asks `offered(profile_id)` for the tools every profile gets
on top of its own list, and the approval policy asks `rule(tool)` how a call is to be approved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from navi.agent.approvals import ExternalRule
from navi.logging import get_logger
from navi.mcp.config import ServerConfig
from navi.mcp.elicitation import Elicitations
from navi.mcp.task_store import MemoryTaskStore, TaskStore
from navi.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from navi.mcp.connection import ServerConnection

log = get_logger(__name__)


class McpManager:
    def __init__(
        self,
        servers: Sequence[ServerConfig],
        registry: ToolRegistry,
        elicitations: Elicitations | None = None,
        tokens_file: str = "",
        **connection_options: float,
    ) -> None:
        self.registry = registry
        # The questions servers ask the user during calls (the API answers them here).
        self.elicitations = elicitations or Elicitations()
        # Where Navi's own MCP server keeps its tasks: the database when the runtime has one.
        self.tasks: TaskStore = MemoryTaskStore()
        self.configs = list(servers)
        # The MCP types (a few hundred models, about 0.3 s) are imported only when a server is
        # configured: a `navi` command or a Navi without MCP servers never loads them.
        if any(not s.disabled for s in servers):
            from navi.mcp.connection import ServerConnection
        self.connections: dict[str, ServerConnection] = {
            s.name: ServerConnection(
                s,
                self._tools_changed,
                elicitations=self.elicitations,
                tokens_file=tokens_file,
                **connection_options,
            )
            for s in servers
            if not s.disabled
        }
        self._rules: dict[str, ExternalRule] = {}

    def start(self) -> None:
        """Start every enabled server in the background; returns at once."""
        for connection in self.connections.values():
            connection.start()

    async def wait_started(self, within: float | None = None) -> None:
        """Wait until every server's start has ended (for `navi doctor` and tests)."""
        await asyncio.gather(*(c.wait_started(within) for c in self.connections.values()))

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.connections.values()), return_exceptions=True)
        for server in self.connections:
            self._unregister(server)

    # --- what the agent and the approval policy ask -------------------------------------------
    def offered(self, profile_id: str) -> list[str]:
        """The MCP tools a profile is offered without naming them: those of every server whose entry
        lists no `profiles`, or lists this one."""
        names: list[str] = []
        for name, connection in self.connections.items():
            profiles = connection.config.profiles
            if profiles is None or profile_id in profiles:
                names.extend(self.registry.server_tools(name))
        return names

    def rule(self, tool: str) -> ExternalRule | None:
        """How a call of `tool` is approved, when it is an MCP server's tool."""
        return self._rules.get(tool)

    # --- the registry ----------------------------------------------------------------------------
    def _tools_changed(self, connection: ServerConnection) -> None:
        from navi.mcp.tools import mcp_tool, schema_problem, tool_name

        config = connection.config
        self._unregister(config.name)
        taken = set(self.registry.names())
        added: list[str] = []
        for listed in connection.tools:
            problem = schema_problem(listed.input_schema)
            if problem:
                log.warning("mcp_tool_skipped", server=config.name, tool=listed.name[:100], problem=problem)
                continue
            name = tool_name(config.prefix, listed.name, taken)
            taken.add(name)
            self.registry.register(mcp_tool(connection, listed, name), server=config.name)
            self._rules[name] = ExternalRule(
                approval=config.approval, source=f"the MCP server '{config.name}'", remote_name=listed.name
            )
            added.append(name)
        if added or connection.state == "ready":
            log.info("mcp_tools_registered", server=config.name, tools=added)

    def _unregister(self, server: str) -> None:
        for name in self.registry.server_tools(server):
            self.registry.unregister(name)
            self._rules.pop(name, None)
