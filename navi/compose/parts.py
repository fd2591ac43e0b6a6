"""Settings → parts: each factory reads `Settings` and hands a lower package plain values.

Only the composition root (this package), the API's app factory and the CLI read `Settings`; the
packages below receive numbers, strings and small config objects, so they can be built and tested
without one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from navi.agent.analysis import AnalysisSettings
from navi.agent.approvals import ApprovalPolicy, Mode, Versioned
from navi.agent.compression.compressor import CompressionSettings
from navi.agent.engine import AgentConfig
from navi.agent.research import ResearchConfig
from navi.compose.models import add_models, with_chains
from navi.compose.problems import SetupError, file_problem, folder_problem, reason, which_of
from navi.config import Settings, cache_home
from navi.documents.extract.common import Limits
from navi.llm import backends as catalogue
from navi.llm.calls import CallLimits
from navi.llm.prices import Prices
from navi.llm.registry import BackendRegistry
from navi.mcp.config import McpConfigError, ServerConfig, load_servers, tokens_file
from navi.memory.embedders import (
    BUILTIN,
    BUILTIN_MINILM,
    BUILTIN_WORDLLAMA,
    BuiltinEmbedder,
    Embedder,
    ServerEmbedder,
)
from navi.memory.minilm import MiniLMEmbedder
from navi.net.guard import NetGuard, parse_allowlist
from navi.profiles.registry import ProfileRegistry, builtin_profiles
from navi.sandbox import Sandbox, SandboxPolicy, allowed_from_list, navi_code_paths, python_paths
from navi.schedules.notify import WebhookNotifier
from navi.schedules.when import system_zone_name
from navi.sessions.models import DEFAULT_OWNER
from navi.skills import SkillLibrary
from navi.storage import migrate
from navi.storage.database import Database, postgres_url, sqlite_url
from navi.storage.vectors import EXACT_MAX
from navi.tools.builtin import BuiltinSettings
from navi.tools.builtin.browser import BrowserSettings
from navi.tools.registry import ToolRegistry
from navi.tools.seeding import ensure_tools_dir

DB_FIX = "set DB_PATH to a writable file"
PG_FIX = "check DATABASE_URL and that PostgreSQL is running"
TOOLS_FIX = "set TOOLS_DIR to a folder Navi can write"
DB_ERRORS = (OSError, TimeoutError, SQLAlchemyError)


# --- model backends and profiles ---------------------------------------------------------------
def build_backends(settings: Settings, *, timeout: float | None = None) -> BackendRegistry:
    """Every backend in `navi.llm.backends.BACKENDS`, each given the settings its entry names.

    Each SDK is imported and its client made on first use, so an Ollama-only install never pays
    for loading the OpenAI and Anthropic SDKs. `timeout` replaces both HTTP timeouts (`navi doctor`
    asks with a short one).
    """
    timeouts = {
        # The HTTP read timeout is only a backstop: the agent enforces the first-token and idle
        # timeouts itself (navi/llm/calls.py), and stop closes the request at any moment.
        "timeout": timeout
        or max(settings.llm_first_token_timeout_seconds, settings.llm_idle_timeout_seconds),
        "connect_timeout": timeout or settings.llm_connect_timeout_seconds,
    }

    registry = BackendRegistry()
    for kind in catalogue.BACKENDS:
        options = {arg: getattr(settings, setting) for arg, setting in kind.options.items()}
        registry.register(
            kind.name,
            partial(kind.build, **options, **timeouts),
            default_model=getattr(settings, kind.default_model),
        )
    add_models(registry, settings, timeouts)  # MODELS_FILE's endpoints and chains (docs/models.md)
    return registry


def default_models(backends: BackendRegistry) -> dict[str, str]:
    return {name: backends.default_model(name) for name in backends.names()}


def build_profiles(settings: Settings, backends: BackendRegistry) -> ProfileRegistry:
    """The built-in profiles; an empty model or backend on a profile means the configured default."""
    registry = ProfileRegistry(settings.default_llm_backend, default_models(backends))
    for profile in builtin_profiles(settings.agent_browser_profiles):  # NAVI_AGENT_BROWSER_PROFILES
        registry.register(profile)
    with_chains(registry, backends)
    return registry


def embedder(settings: Settings, backends: BackendRegistry) -> Embedder | None:
    """Memory's (and documents') embedding model: `MEMORY_EMBED_MODEL=builtin` is the built-in
    sentence embedder (all-MiniLM-L6-v2, `builtin:minilm`), `builtin:wordllama` the faster word
    vectors, both from their wheels; another name is a model on the default backend's embedding
    endpoint; empty means keyword-only search."""
    name = settings.memory_embed_model.strip()
    if not name:
        return None
    if name in (BUILTIN, BUILTIN_MINILM):
        return MiniLMEmbedder(rewrites=cache_home() / "models")
    if name == BUILTIN_WORDLLAMA:
        return BuiltinEmbedder()
    backend = settings.default_llm_backend

    async def embed(texts: list[str], model: str) -> list[list[float]]:
        return await backends.get(backend).embed(texts, model)

    return ServerEmbedder(backend, name, embed)


def describe_memory_search(embed: Embedder | None, db_dialect: str | None) -> str:
    """What `navi doctor` and the start log say about memory search."""
    if embed is None:
        return "keyword-only (full-text search); MEMORY_EMBED_MODEL=builtin (or a served model) adds meaning"
    where = "PostgreSQL" if db_dialect == "postgresql" else "SQLite"
    return (
        f"hybrid: full-text + embedding model {embed.name}; vectors in {where}, scanned in memory "
        f"(exact up to {EXACT_MAX:,} facts a user, sign bits first beyond)"
        + ("; candidates rescored by what they are about" if getattr(embed, "attribute_floor", None) else "")
    )


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
            files_dir=str(_abs(settings.session_files_dir)),
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
    hidden = [*secret_paths(settings), str(_abs(settings.session_files_dir)), str(_abs(settings.tools_dir))]
    return BrowserSettings(
        executable=settings.navi_browser_executable,
        sandbox=settings.navi_browser_sandbox,
        bwrap=sandbox.availability.bwrap if sandbox.availability.ok else None,
        memory_mb=settings.navi_browser_memory_mb,
        max_pages=settings.navi_browser_max_pages,
        idle_seconds=float(settings.navi_browser_idle_seconds),
        max_download_bytes=settings.session_files_max_bytes,
        files_dir=settings.session_files_dir,
        profiles_dir=str(_abs(settings.navi_browser_profiles_dir)),
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
    return [str(_abs(p)) for p in paths]


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
        session_files_dir=str(_abs(settings.session_files_dir)),
    )


def _skill_folders(settings: Settings) -> tuple[str, ...]:
    folders = [_abs(settings.skills_dir), *(_abs(str(p)) for p in skills_dirs(settings))]
    return tuple(os.path.realpath(p) for p in folders if p.is_dir())


def build_sandbox(settings: Settings) -> Sandbox:
    """The sandbox, with bubblewrap probed once (unless SANDBOX_MODE=off)."""
    return Sandbox(sandbox_policy(settings))


def check_tools_dir(settings: Settings) -> None:
    """Raise `SetupError` when TOOLS_DIR is a file, or a folder that cannot be created or written."""
    problem = folder_problem(settings.tools_dir)
    if problem:
        raise SetupError(f"cannot use the tools folder {_abs(settings.tools_dir)}: {problem}", TOOLS_FIX)


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
                f"cannot create the tools folder {_abs(settings.tools_dir)}: {reason(exc)}", TOOLS_FIX
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


# --- the database --------------------------------------------------------------------------------
def database_url(settings: Settings) -> str:
    return postgres_url(settings.database_url) if settings.database_url else sqlite_url(settings.db_path)


def describe_database(settings: Settings) -> str:
    if settings.database_url:
        return make_url(settings.database_url).render_as_string(hide_password=True)
    return f"SQLite at {_abs(settings.db_path)}"


def _abs(path: str) -> Path:
    return Path(path).expanduser().absolute()


def _unusable(settings: Settings, exc: BaseException) -> SetupError:
    if settings.database_url:
        where = describe_database(settings)
        return SetupError(f"cannot reach the database at {where}: {reason(exc)}", PG_FIX)
    return SetupError(f"cannot open the database at {_abs(settings.db_path)}: {reason(exc)}", DB_FIX)


def check_db_path(settings: Settings) -> None:
    """Raise `SetupError` when DB_PATH (SQLite only) cannot be created or written."""
    if settings.database_url:
        return
    problem = file_problem(settings.db_path)
    if problem:
        raise SetupError(f"cannot open the database at {_abs(settings.db_path)}: {problem}", DB_FIX)


async def open_database(
    settings: Settings, *, create: bool = True, connect_timeout: float = 10.0
) -> Database | None:
    """The database, migrated to the current schema; the caller disposes it.

    Without `create`, a SQLite file that does not exist yet is not made: None comes back instead.
    Whatever makes the database unusable is raised as a `SetupError` naming the setting to fix.
    """
    if not settings.database_url:
        path = _abs(settings.db_path)
        if not create and not path.exists():
            return None
        check_db_path(settings)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new folder: the owner's only
        except OSError as exc:
            raise _unusable(settings, exc) from None
    db = Database(database_url(settings), connect_timeout=connect_timeout)
    try:
        await migrate.upgrade(db)
    except DB_ERRORS as exc:
        await db.dispose()
        raise _unusable(settings, exc) from None
    return db


async def probe_database(settings: Settings, *, connect_timeout: float) -> str:
    """Say whether the database would open, creating nothing; raise `SetupError` when it would not."""
    check_db_path(settings)
    if not settings.database_url and not _abs(settings.db_path).exists():
        return f"no database at {_abs(settings.db_path)} yet; `navi serve` creates it"
    db = Database(database_url(settings), connect_timeout=connect_timeout)
    try:
        await asyncio.wait_for(db.ping(), connect_timeout + 1)
    except DB_ERRORS as exc:
        raise _unusable(settings, exc) from None
    finally:
        await db.dispose()
    return f"{describe_database(settings)} opens"


# --- schedules -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScheduleSettings:
    """How the schedule runner and its notifications are set up, as plain values."""

    zone_name: str  # TZ, else this machine's zone, else UTC
    poll_seconds: float
    busy_wait_seconds: float
    notifier: WebhookNotifier | None


def schedule_zone(settings: Settings) -> str:
    return settings.tz or system_zone_name()


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
@dataclass(frozen=True)
class DocumentSettings:
    """How documents are taken and read, as plain values (DOCUMENTS_*)."""

    limits: Limits  # the size, pages and seconds one document may cost
    indexing: bool  # index in this process's background


def document_settings(settings: Settings) -> DocumentSettings:
    return DocumentSettings(
        limits=Limits(
            max_bytes=settings.documents_max_bytes,
            max_pages=settings.documents_max_pages,
            seconds=settings.documents_extract_seconds,
        ),
        indexing=settings.documents_indexing,
    )


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
