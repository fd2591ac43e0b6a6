"""Settings → parts: each factory reads `Settings` and hands a lower package plain values.

Only the composition root (this package), the API's app factory and the CLI read `Settings`; the
packages below receive numbers, strings and small config objects, so they can be built and tested
without one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from navi.agent.analysis import AnalysisSettings
from navi.agent.approvals import ApprovalPolicy, Mode, Versioned
from navi.agent.compression.compressor import CompressionSettings
from navi.agent.engine import AgentConfig
from navi.agent.research import ResearchConfig
from navi.compose.problems import SetupError, absolute, folder_problem, reason, which_of
from navi.compose.stores import schedule_zone
from navi.config import Settings
from navi.llm.calls import CallLimits
from navi.llm.prices import Prices
from navi.mcp.config import McpConfigError, ServerConfig, load_servers, tokens_file
from navi.net.guard import NetGuard, parse_allowlist
from navi.sandbox import Sandbox, SandboxPolicy, allowed_from_list, navi_code_paths, python_paths
from navi.schedules.notify import WebhookNotifier
from navi.sessions.models import DEFAULT_OWNER
from navi.skills import SkillLibrary
from navi.tools.builtin import BuiltinSettings
from navi.tools.builtin.browser import BrowserSettings
from navi.tools.registry import ToolRegistry
from navi.tools.seeding import ensure_tools_dir

TOOLS_FIX = "set TOOLS_DIR to a folder Navi can write"


# --- the agent -----------------------------------------------------------------------------------
def agent_config(settings: Settings) -> AgentConfig:
    return AgentConfig(
        persona=settings.navi_persona,
        num_ctx=settings.ollama_num_ctx,
        think=settings.ollama_think,
        planning=settings.planning_enabled,
        planning_skip_words=settings.planning_skip_words,
        tool_disclosure=settings.navi_tool_disclosure,
        long_message_tokens=settings.context_long_message_tokens,
        limits=CallLimits(
            first_token=settings.llm_first_token_timeout_seconds,
            idle=settings.llm_idle_timeout_seconds,
        ),
        max_tokens_answer=settings.llm_max_tokens_answer,
        max_tokens_planning=settings.llm_max_tokens_planning,
        max_tokens_naming=settings.llm_max_tokens_naming,
        stopped_questions=settings.navi_stopped_questions,
        prices=Prices.parse(settings.llm_price_per_mtok),
        research=ResearchConfig(
            max_questions=settings.navi_research_max_questions,
            max_sources=settings.navi_research_max_sources,
            web_search=settings.navi_research_web_search,
            # The report is the job's answer: LLM_MAX_TOKENS_ANSWER caps it, its plan and notes too.
            max_tokens_plan=min(120, settings.llm_max_tokens_answer),
            max_tokens_notes=min(200, settings.llm_max_tokens_answer),
            max_tokens_report=min(800, settings.llm_max_tokens_answer),
            files_dir=str(absolute(settings.session_files_dir)),
        ),
    )


def approval_policy(settings: Settings) -> ApprovalPolicy:
    """Which tool calls wait for the user (NAVI_APPROVAL_MODE, _OVERRIDES, _TIMEOUT_SECONDS)."""
    overrides = cast(dict[str, Mode], settings.approval_overrides)  # validated by Settings
    return ApprovalPolicy(
        mode=settings.navi_approval_mode,
        overrides=overrides,
        timeout_seconds=settings.navi_approval_timeout_seconds,
    )


def analysis_settings(settings: Settings) -> AnalysisSettings:
    """Archive analytics: each call reads at most what a summary call reads, and writes its own cap."""
    return AnalysisSettings(
        max_input_tokens=settings.context_summary_max_input_tokens,
        max_tokens=settings.llm_max_tokens_analysis,
    )


def compression_settings(settings: Settings) -> CompressionSettings:
    return CompressionSettings(
        enabled=settings.context_compression_enabled,
        threshold=settings.context_compression_threshold,
        keep_recent=settings.context_keep_recent,
        temperature=settings.context_summary_temperature,
        max_input_tokens=settings.context_summary_max_input_tokens,
        max_tokens=settings.llm_max_tokens_summary,
    )


# --- tools ---------------------------------------------------------------------------------------
def builtin_settings(settings: Settings, sandbox: Sandbox | None = None) -> BuiltinSettings:
    """The built-ins' settings; with `sandbox`, the browser tool too (its Chromium is confined by
    the same bubblewrap)."""
    return BuiltinSettings(
        browser=browser_settings(settings, sandbox) if sandbox is not None else None,
        tools_dir=settings.tools_dir,
        manuals_dir=settings.manuals_dir,
        session_files_dir=settings.session_files_dir,
        ssh_hosts_file=settings.ssh_hosts_file,
        fs_allowed_paths=settings.fs_allowed_paths_list,
        secret_paths=secret_paths(settings),
        fetch_guard=fetch_guard(settings),
        terminal_allowed_commands=settings.terminal_allowed_commands_list,
        code_exec_memory_mb=settings.code_exec_memory_mb,
        code_exec_timeout_seconds=settings.code_exec_timeout_seconds,
        terminal_timeout_seconds=settings.terminal_timeout_seconds,
    )


def browser_settings(settings: Settings, sandbox: Sandbox) -> BrowserSettings:
    """The browser tool: confined by bubblewrap when it works here (Chromium then has no network
    of its own), with Navi's secrets, data and session files hidden from it."""
    hidden = [
        *secret_paths(settings),
        str(absolute(settings.session_files_dir)),
        str(absolute(settings.tools_dir)),
    ]
    return BrowserSettings(
        executable=settings.navi_browser_executable,
        sandbox=settings.navi_browser_sandbox,
        bwrap=sandbox.availability.bwrap if sandbox.availability.ok else None,
        memory_mb=settings.navi_browser_memory_mb,
        max_pages=settings.navi_browser_max_pages,
        idle_seconds=float(settings.navi_browser_idle_seconds),
        max_download_bytes=settings.session_files_max_bytes,
        files_dir=settings.session_files_dir,
        profiles_dir=str(absolute(settings.navi_browser_profiles_dir)),
        hidden=tuple(hidden),
    )


def fetch_guard(settings: Settings) -> NetGuard:
    """What the fetching tools may reach: public addresses, plus NAVI_FETCH_ALLOWED_HOSTS, never
    Navi's own listener unless listed with its exact port."""
    return NetGuard(
        parse_allowlist(settings.fetch_allowed_hosts_list), own=(settings.navi_host, settings.navi_port)
    )


def secret_paths(settings: Settings) -> list[str]:
    """Navi's own secrets, absolute: no tool may read or write them, whatever FS_ALLOWED_PATHS says
    (the database and its journals, the token file, the VAPID key file, MCP servers' OAuth tokens,
    `.env`, the SSH hosts file, the browser's named sign-ins)."""
    paths = [settings.token_file, settings.vapid_file, tokens_file(settings.db_path), ".env"]
    paths += [settings.ssh_hosts_file, settings.navi_browser_profiles_dir]
    if not settings.uses_postgres:
        paths += [settings.db_path + suffix for suffix in ("", "-wal", "-shm", "-journal")]
    return [str(absolute(p)) for p in paths]


def secret_named(settings: Settings, path: str | os.PathLike[str]) -> str | None:
    """Which of Navi's own secret files `path` names (see `which_of`: nothing is opened), or None."""
    return which_of(path, secret_paths(settings))


def sandbox_policy(settings: Settings) -> SandboxPolicy:
    """What every sandboxed child may see: FS_ALLOWED_PATHS, never Navi's secrets, Navi's own code
    read-only, the network as SANDBOX_NETWORK says."""
    return SandboxPolicy(
        mode=settings.sandbox_mode,
        network=settings.sandbox_network,
        allowed_paths=allowed_from_list(settings.fs_allowed_paths_list),
        hidden_paths=tuple(secret_paths(settings)),
        protected_paths=navi_code_paths(),
        # A child may read a skill (where it sees the folder) but never change one.
        read_only_paths=_skill_folders(settings),
        runtime_paths=python_paths(),
        session_files_dir=str(absolute(settings.session_files_dir)),
    )


def _skill_folders(settings: Settings) -> tuple[str, ...]:
    folders = [absolute(settings.skills_dir), *(absolute(str(p)) for p in skills_dirs(settings))]
    return tuple(os.path.realpath(p) for p in folders if p.is_dir())


def build_sandbox(settings: Settings) -> Sandbox:
    """The sandbox, with bubblewrap probed once (unless SANDBOX_MODE=off)."""
    return Sandbox(sandbox_policy(settings))


def check_tools_dir(settings: Settings) -> None:
    """Raise `SetupError` when TOOLS_DIR is a file, or a folder that cannot be created or written."""
    problem = folder_problem(settings.tools_dir)
    if problem:
        raise SetupError(f"cannot use the tools folder {absolute(settings.tools_dir)}: {problem}", TOOLS_FIX)


async def load_user_tools(settings: Settings, tools: ToolRegistry, *, seed: bool) -> None:
    """Load the user's tools; with `seed`, first create a missing tools folder with the starter tools.

    Without `seed` nothing is created: a missing folder simply has no tools. The tools run in the
    registry's tool host, never in this process.
    """
    if seed:
        check_tools_dir(settings)
        try:
            ensure_tools_dir(settings.tools_dir)  # seeding and loading log what they did, once each
        except OSError as exc:
            raise SetupError(
                f"cannot create the tools folder {absolute(settings.tools_dir)}: {reason(exc)}", TOOLS_FIX
            ) from None
    await tools.reload_user_tools(settings.tools_dir)


def mcp_servers(settings: Settings) -> list[ServerConfig]:
    """The MCP servers of MCP_SERVERS_FILE (none when it is unset); a file Navi cannot use is a
    `SetupError` naming it and the problem."""
    if not settings.mcp_servers_file:
        return []
    try:
        return load_servers(settings.mcp_servers_file)
    except McpConfigError as exc:
        raise SetupError(str(exc), "fix the file (docs/mcp.md) or unset MCP_SERVERS_FILE") from None


# --- schedules -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScheduleSettings:
    """How the schedule runner and its notifications are set up, as plain values."""

    zone_name: str  # TZ, else this machine's zone, else UTC
    poll_seconds: float
    busy_wait_seconds: float
    notifier: WebhookNotifier | None


def schedule_settings(settings: Settings) -> ScheduleSettings:
    notifier = (
        WebhookNotifier(
            settings.navi_notify_webhook_url,
            token=settings.navi_notify_webhook_token,
            headers=settings.notify_webhook_headers,
        )
        if settings.navi_notify_webhook_url
        else None
    )
    return ScheduleSettings(
        zone_name=schedule_zone(settings),
        poll_seconds=settings.navi_schedule_poll_seconds,
        busy_wait_seconds=settings.navi_schedule_busy_wait_seconds,
        notifier=notifier,
    )


# --- documents -------------------------------------------------------------------------------------
def knowledge_dirs(settings: Settings) -> list[Path]:
    """KNOWLEDGE_DIRS as paths (`~` expanded), split on commas and on os.pathsep, duplicates once."""
    parts = [p.strip() for chunk in settings.knowledge_dirs.split(",") for p in chunk.split(os.pathsep)]
    return list(dict.fromkeys(Path(p).expanduser() for p in parts if p))


def skills_dirs(settings: Settings) -> list[Path]:
    """SKILLS_DIRS as paths (`~` expanded), split on commas and on os.pathsep, duplicates once."""
    parts = [p.strip() for chunk in settings.skills_dirs.split(",") for p in chunk.split(os.pathsep)]
    return list(dict.fromkeys(Path(p).expanduser() for p in parts if p))


def ensure_skills_dir(settings: Settings) -> None:
    """Make SKILLS_DIR and NAVI_BROWSER_PROFILES_DIR (0700) when they can be made; a folder that
    cannot be is said by the first use that needs it."""
    with contextlib.suppress(OSError):
        Path(settings.skills_dir).expanduser().mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):  # the browser's sign-ins: made before the sandbox hides them
        Path(settings.navi_browser_profiles_dir).expanduser().mkdir(parents=True, exist_ok=True, mode=0o700)


def skill_library(settings: Settings) -> SkillLibrary:
    """Each user's skills in SKILLS_DIR/<user>/, and the owner's SKILLS_DIRS (docs/skills.md)."""
    return SkillLibrary(Path(settings.skills_dir).expanduser(), skills_dirs(settings), owner=DEFAULT_OWNER)


def skill_approval(
    library: SkillLibrary, *, network: bool
) -> Callable[[str, str, dict[str, Any]], Versioned | None]:
    """What "Always" on a skill's script is remembered by: the skill's name and the hash of all its
    files now, so any changed file asks again (navi/agent/approvals.py `VERSIONED`)."""

    def versioned(owner: str, tool: str, args: dict[str, Any]) -> Versioned | None:
        name = str(args.get("skill", ""))
        skill = library.load(owner).get(name)
        if skill is None:
            return None  # the tool says there is no such skill; nothing to remember
        version = skill.version()
        note = (
            "it may use the network (the skill asks for it)"
            if skill.wants_network and network
            else "no network"
        )
        return Versioned(
            subject=f"{skill.name}@{version}",
            scope=(
                f"every script of the skill '{skill.name}' as it is now (version {version[:12]}); "
                "a changed file asks again"
            ),
            note=note,
        )

    return versioned
