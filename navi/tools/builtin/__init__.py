"""Navi's built-in tools, registered through the same `ToolRegistry.register` a user tool uses.

Importing the package loads no tool (a store below it, such as the browser states', is imported
without them); `register_builtins` imports them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the tools themselves are imported by `register_builtins`, not with the package
    from navi.documents.retrieval import Retrieval
    from navi.jobs.service import JobService
    from navi.memory.base import MemoryStore
    from navi.net.guard import NetGuard
    from navi.profiles.registry import ProfileRegistry
    from navi.sandbox import Sandbox
    from navi.schedules.service import ScheduleService
    from navi.sessions.state import SessionState
    from navi.sessions.store import SessionStore
    from navi.tools.builtin.browser.launch import BrowserSettings
    from navi.tools.builtin.browser.states import BrowserStates
    from navi.tools.registry import ToolRegistry


@dataclass(frozen=True, kw_only=True)
class BuiltinSettings:
    """What the built-in tools are configured with, as plain values (the composition root fills it)."""

    tools_dir: str
    manuals_dir: str
    session_files_dir: str
    ssh_hosts_file: str
    fs_allowed_paths: list[str]
    # Navi's own secrets (database, token file, .env, SSH hosts file): no file tool may touch them.
    secret_paths: list[str]
    # What web_view, http_request and image_view may connect to.
    fetch_guard: NetGuard
    terminal_allowed_commands: list[str]
    code_exec_memory_mb: int
    code_exec_timeout_seconds: int
    terminal_timeout_seconds: int
    # The browser tool's Chromium; None: no browser tool (a runtime built without one).
    browser: BrowserSettings | None = None


@dataclass(frozen=True, kw_only=True)
class BuiltinDeps:
    """The services the built-ins work with, built in the composition root: the session's working
    state (todo, scratchpad), profiles, sessions, memory, and the sandbox that confines the
    children of code_exec and terminal; `schedules` (where the `schedule` tool keeps reminders) is
    None only where no runtime runs, `documents` (search over the documents people gave Navi) None
    without a database, `jobs` None for no background-job tool."""

    state: SessionState
    profiles: ProfileRegistry
    sessions: SessionStore
    memory: MemoryStore
    sandbox: Sandbox
    schedules: ScheduleService | None = None
    documents: Retrieval | None = None
    jobs: JobService | None = None
    # Where conversations' browser cookies wait for their next turn (None: in this process only).
    browser_states: BrowserStates | None = None


@dataclass
class BuiltinHandles:
    """Built-ins the composition root must finish wiring (the spawner) or close (SSH pool)."""

    spawn: object
    ssh: object
    browser: object = None


def register_builtins(registry: ToolRegistry, config: BuiltinSettings, deps: BuiltinDeps) -> BuiltinHandles:
    """Register every built-in, configured by `config`, working with `deps` (the optional ones'
    tools only when they are there)."""
    from navi.tools.builtin.agents import SpawnAgentTool, SwitchProfileTool
    from navi.tools.builtin.browser import BrowserTool
    from navi.tools.builtin.code_exec import CodeExecTool
    from navi.tools.builtin.conversations import SearchConversationsTool
    from navi.tools.builtin.documents import SearchDocumentsTool
    from navi.tools.builtin.filesystem import FilesystemTool
    from navi.tools.builtin.http import HttpRequestTool
    from navi.tools.builtin.image import ImageViewTool
    from navi.tools.builtin.memory import ForgetTool, MemorySearchTool, RememberTool
    from navi.tools.builtin.meta import ListToolsTool, ReloadToolsTool, ToolManualTool, WriteToolTool
    from navi.tools.builtin.notify import NotifyTool
    from navi.tools.builtin.recall import RecallTool
    from navi.tools.builtin.schedule import ScheduleTool
    from navi.tools.builtin.scratchpad import ScratchpadTool
    from navi.tools.builtin.ssh import SshExecTool
    from navi.tools.builtin.terminal import TerminalTool
    from navi.tools.builtin.todo import TodoTool
    from navi.tools.builtin.web import WebSearchTool, WebViewTool
    from navi.tools.paths import PathPolicy

    state, profiles, sessions, memory, sandbox = (
        deps.state,
        deps.profiles,
        deps.sessions,
        deps.memory,
        deps.sandbox,
    )
    allowed = config.fs_allowed_paths
    if allowed and "*" not in allowed:
        allowed = [*allowed, config.session_files_dir]  # the agent must be able to read uploads
    # Uploads: only the current run's session folder; every other session's is off limits.
    policy = PathPolicy(allowed, denied=config.secret_paths, uploads=config.session_files_dir)
    spawn = SpawnAgentTool(profiles)
    recall = RecallTool(sessions)
    ssh = SshExecTool(config.ssh_hosts_file)
    for tool in (
        TodoTool(state),
        ScratchpadTool(state),
        SwitchProfileTool(profiles, sessions),
        WebSearchTool(),
        WebViewTool(guard=config.fetch_guard),
        HttpRequestTool(guard=config.fetch_guard),
        FilesystemTool(policy),
        CodeExecTool(
            sandbox=sandbox,
            memory_mb=config.code_exec_memory_mb,
            default_timeout=config.code_exec_timeout_seconds,
        ),
        TerminalTool(
            config.terminal_allowed_commands,
            policy,
            sandbox=sandbox,
            default_timeout=config.terminal_timeout_seconds,
        ),
        ssh,
        ImageViewTool(policy, guard=config.fetch_guard),
        MemorySearchTool(memory, sessions),
        RememberTool(memory, sessions),
        ForgetTool(memory),
        ReloadToolsTool(registry, config.tools_dir),
        WriteToolTool(registry, config.tools_dir),
        ListToolsTool(registry),
        ToolManualTool(registry, config.manuals_dir),
        spawn,
        recall,
        SearchConversationsTool(sessions),
        NotifyTool(),
    ):
        registry.register(tool, builtin=True)
    registry.alias(ForgetTool.former_name, ForgetTool.name)
    browser = None
    if config.browser is not None:  # Chromium starts on its first call, not here
        browser = BrowserTool(config.browser, guard=config.fetch_guard, states=deps.browser_states)
        registry.register(browser, builtin=True)
    if deps.schedules is not None:
        registry.register(ScheduleTool(deps.schedules), builtin=True)
    if deps.jobs is not None:
        from navi.tools.builtin.jobs import BackgroundJobTool

        registry.register(BackgroundJobTool(deps.jobs), builtin=True)
    if deps.documents is not None:
        registry.register(SearchDocumentsTool(deps.documents), builtin=True)
        recall.passage = deps.documents.passage
    return BuiltinHandles(spawn=spawn, ssh=ssh, browser=browser)
