"""The runtime: everything Navi runs on, built from one `Settings` object.

`build_runtime()` is called by the FastAPI lifespan and by CLI commands that need the same parts.
Nothing here runs at import time. Built-in tools register through the same `register()` a user
tool would use; the spawn tool gets the agent after the agent exists. The runtime owns the one
`Database` both stores share: it is migrated once here and disposed once in `aclose()`, and the
one tool host (the sandboxed process user tools run in), ended in `aclose()` too, as are the MCP
servers of `MCP_SERVERS_FILE`, which start in the background (a slow one holds up only its tools).

The sandbox is probed once here; when it cannot confine anything, the start says so in the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import Any

from navi.agent.analysis import AnalysisAsk, Analyst
from navi.agent.compression.compressor import ContextCompressor
from navi.agent.engine import Agent
from navi.agent.gate import ApprovalGate
from navi.agent.parts import AgentParts
from navi.agent.workers import CompressionWorker, NamingWorker
from navi.channels.store import ChannelStore, InMemoryChannelStore
from navi.compose import parts
from navi.compose.channels import channel_store
from navi.compose.models import prices as model_prices
from navi.compose.notifications import push_sender
from navi.compose.stores import DocumentSettings, memory_extractor, open_stores
from navi.compose.telemetry import build_telemetry
from navi.compose.voice import build_voice
from navi.config import Settings
from navi.documents.base import DocumentStore
from navi.documents.extract.common import Limits
from navi.documents.retrieval import Retrieval
from navi.jobs import InMemoryJobStore
from navi.jobs.service import JobService, JobSettings
from navi.llm.messages import Message
from navi.llm.registry import BackendRegistry
from navi.logging import get_logger
from navi.mcp.config import tokens_file
from navi.mcp.elicitation import Elicitations
from navi.mcp.manager import McpManager
from navi.memory.base import MemoryStore
from navi.memory.embedders import Embedder
from navi.memory.extractor import MemoryExtractor
from navi.profiles.custom import InMemoryPreferenceStore, PreferenceStore
from navi.profiles.registry import ProfileRegistry, UnknownProfile
from navi.push.prefs import InMemoryNotifySettings, NotifySettingsStore
from navi.push.presence import InMemoryPresence, Presence
from navi.push.sender import PushSender
from navi.sandbox import INSTALL_FIX, Sandbox
from navi.schedules.service import ScheduleService
from navi.sessions.archive import export_session
from navi.sessions.models import Session
from navi.sessions.state import SessionState
from navi.sessions.store import SessionNotFound, SessionStore
from navi.skills import SkillLibrary
from navi.storage.database import Database
from navi.storage.mcp_tasks import SqlTaskStore
from navi.telemetry import Telemetry
from navi.tools.builtin import BuiltinDeps, register_builtins
from navi.tools.builtin.agents import SpawnAgentTool
from navi.tools.builtin.browser import BrowserTool
from navi.tools.builtin.memory import ForgetTool, RememberTool
from navi.tools.builtin.skills import SKILL_TOOLS, register_skill_tools
from navi.tools.builtin.ssh import SshExecTool
from navi.tools.host.client import ToolHost
from navi.tools.host.listings import PROCESS_LISTINGS
from navi.tools.registry import ToolRegistry
from navi.tools.user_config import EnabledTools
from navi.users import InMemoryUserStore, UserStore
from navi.voice import Voice

log = get_logger(__name__)


@dataclass
class Runtime:
    settings: Settings
    backends: BackendRegistry
    profiles: ProfileRegistry
    sessions: SessionStore
    tools: ToolRegistry
    # Per-session working state (todo, scratchpad, memory snapshot, compression's findings): a
    # stored session's in the database with it, for every worker; a subagent's in this process.
    state: SessionState
    memory: MemoryStore
    agent: Agent
    ssh: SshExecTool
    # The browser tool (its Chromium starts on the first call), None in a runtime without one.
    browser: BrowserTool | None
    extractor: MemoryExtractor
    # Where tool calls wait for the user's consent; the API answers through it.
    approvals: ApprovalGate
    sandbox: Sandbox
    tool_host: ToolHost
    # Writes archive analytics (summary, assessment, facts) through a session's model.
    analyst: Analyst
    # Schedules and reminders (checked creation and edits over the store; the runner lives with
    # the API, which can run turns) and how their runner and notifications are set up.
    schedules: ScheduleService
    schedule_settings: parts.ScheduleSettings
    # The MCP servers Navi uses and their tools (none without MCP_SERVERS_FILE).
    mcp: McpManager
    # The database both SQL stores share, when the runtime opened it (None when both stores were
    # handed in, or a read-only command found no database yet).
    db: Database | None = None
    # Users besides the owner (in the database; in memory when the runtime opened none).
    users: UserStore = field(default_factory=InMemoryUserStore)
    # Who may talk to Navi through a channel, and which outside message belongs to which session.
    channels: ChannelStore = field(default_factory=InMemoryChannelStore)
    # Called (in the background) with the new session's id after POST /sessions — memory extraction.
    session_created_hooks: list[Callable[[str], Coroutine[Any, Any, None]]] = field(default_factory=list)
    # Metrics (GET /metrics) and traces: the model calls' are seen through `backends.observer`.
    telemetry: Telemetry = field(default_factory=Telemetry)
    # Documents people gave Navi (issue 43; on the database only, None without one), how they are
    # read (DOCUMENTS_*), and the embedding model memory uses, which indexes and searches them too.
    documents: DocumentStore | None = None
    document_settings: DocumentSettings = field(
        default_factory=lambda: DocumentSettings(Limits(), indexing=True)
    )
    embedder: Embedder | None = None
    # Search over the documents people gave Navi, with memory's embedder (None without a database).
    retrieval: Retrieval | None = None
    # Web Push to the browsers people subscribed (docs/notifications.md); None when a read-only
    # command found no VAPID key yet.
    push: PushSender | None = None
    # Which of a user's pages are visible, and what each user wants to be notified of.
    presence: Presence = field(default_factory=InMemoryPresence)
    notify_settings: NotifySettingsStore = field(default_factory=InMemoryNotifySettings)
    # Background jobs (docs/jobs.md): started here for every surface; the runner is a service.
    jobs: JobService | None = None
    # Each user's Agent Skills (SKILLS_DIR, SKILLS_DIRS): docs/skills.md.
    skills: SkillLibrary = field(default_factory=lambda: SkillLibrary("skills", owner="local"))
    # Speech to text and text to speech (issue 45; models load on first use), None when not built.
    voice: Voice | None = None
    # Each user's custom instructions and the profiles people made on the page.
    preferences: PreferenceStore = field(default_factory=InMemoryPreferenceStore)

    def background(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` without holding up the caller; failures are logged."""
        self.agent.spawn_background(coro)

    async def aclose(self) -> None:
        await self.agent.settle()
        await self.mcp.aclose()
        if self.push is not None:
            await self.push.aclose()
        await self.tool_host.aclose()
        await self.ssh.pool.aclose()
        if self.browser is not None:
            await self.browser.aclose()
        await self.memory.aclose()
        await self.sessions.aclose()
        await self.backends.aclose()
        if self.voice is not None:
            self.voice.close()
        if self.db is not None:
            await self.db.dispose()
        await asyncio.to_thread(self.telemetry.shutdown)  # the last spans flushed to the collector

    async def analyse(self, session: Session, ask: AnalysisAsk) -> dict[str, dict[str, Any]]:
        """Generate the asked analytics through the session's model and store them with it, all or
        nothing. `session` (read with its display history) gets them too, so an export right after
        includes them. Raises what `Analyst.analyse` raises, or `SessionNotFound`."""
        parts = await self.analyst.analyse(session, ask)
        if not await self.sessions.set_analysis(session.id, parts, owner=session.owner):
            raise SessionNotFound(session.id)
        session.analysis.update(parts)
        return parts

    async def export_archive(self, session: Session) -> dict[str, Any]:
        """A `session-archive/v1` document with the session's profile, model (its own, else the one
        its owner picked for the profile) and prompt filled in."""
        s = self.settings
        try:
            base = self.profiles.get(session.profile_id)
        except UnknownProfile:
            return export_session(session)
        model = session.model or await self.agent.binder.owners_model(session.owner, base)
        profile = base.for_session(session.system_prompt, model)
        return export_session(
            session,
            provider=self.profiles.backend_of(profile),
            model=self.profiles.model_of(profile),
            model_params={
                "temperature": profile.temperature,
                "num_ctx": s.ollama_num_ctx,
                "think": s.ollama_think,
            },
            system_prompt=self.agent.model_view(profile, [], owner=session.owner)[0].content or "",
            tools=[spec.model_dump() for spec in self.agent.tool_specs(profile)],
            settings={
                "context_compression_enabled": s.context_compression_enabled,
                "context_compression_threshold": s.context_compression_threshold,
                "context_keep_recent": s.context_keep_recent,
                "max_iterations": profile.max_iterations,
                "planning_enabled": profile.planning_enabled,
            },
            keep_recent=s.context_keep_recent,
        )


async def build_runtime(
    settings: Settings,
    *,
    backends: BackendRegistry | None = None,
    sessions: SessionStore | None = None,
    memory: MemoryStore | None = None,
    create_database: bool = True,
    seed_tools: bool = True,
    runs_agents: bool = True,
    telemetry: Telemetry | None = None,
) -> Runtime:
    """Everything Navi runs on. Stores handed in are used as they are (and opened and closed here).

    `create_database=False` (read-only commands) makes no SQLite file: with none there yet, the
    stores are empty in-memory ones. `seed_tools=False` creates no tools (nor skills) folder.
    `runs_agents=False` (commands that run no agent) starts no MCP server, no tool host (the user's
    tools are not loaded) and imports no model SDK.
    Configuration the runtime cannot use (a DB_PATH it cannot write, an unreachable DATABASE_URL,
    a TOOLS_DIR that is a file) is raised as `SetupError`, with nothing left open. `telemetry`
    handed in is used instead of the one the settings ask for (tests: spans kept in memory).
    """
    mcp_servers = parts.mcp_servers(settings) if runs_agents else []  # a broken file stops us first
    voice = build_voice(settings)  # a remote engine without its server stops us first too; loads nothing
    async with AsyncExitStack() as cleanup:
        telemetry = telemetry or build_telemetry(settings)
        base = await open_stores(
            settings,
            cleanup,
            create_database=create_database,
            backends=backends,
            sessions=sessions,
            memory=memory,
            telemetry=telemetry,
        )
        backends, profiles, db, stores = base.backends, base.profiles, base.db, base.stores
        sessions, memory, embed = stores.sessions, stores.memory, base.embedder
        preferences, schedules = base.preferences, base.schedules
        for name in {profiles.backend_of(p) for p in profiles.all()} if runs_agents else ():
            if name in backends:  # an agent will run: its SDK imported now, not during a first turn
                backends.get(name)
        schedule_settings = parts.schedule_settings(settings)
        state = SessionState(stores.state)
        retrieval = Retrieval(stores.documents, embed) if stores.documents is not None else None
        push = push_sender(settings, stores.push, create=create_database)
        jobs = JobService(
            stores.jobs or InMemoryJobStore(),
            sessions,
            profiles,
            JobSettings(
                settings.navi_jobs_per_user, settings.navi_job_max_steps, settings.navi_job_max_seconds
            ),
        )
        if seed_tools:  # `navi serve`: the skills folder exists before the sandbox covers it
            parts.ensure_skills_dir(settings)
        sandbox = parts.build_sandbox(settings)
        report_sandbox(sandbox)
        tool_host = ToolHost(sandbox, listings=PROCESS_LISTINGS)
        cleanup.push_async_callback(tool_host.aclose)
        tools = ToolRegistry(user_tools=tool_host)
        handles = register_builtins(
            tools,
            parts.builtin_settings(settings, sandbox),
            BuiltinDeps(
                state=state,
                profiles=profiles,
                sessions=sessions,
                memory=memory,
                sandbox=sandbox,
                schedules=schedules,
                documents=retrieval,
                jobs=jobs,
                browser_states=stores.browser_states,
            ),
        )
        skills = parts.skill_library(settings)
        register_skill_tools(
            tools,
            skills,
            sandbox=sandbox,
            memory_mb=settings.code_exec_memory_mb,
            timeout=settings.skill_script_timeout_seconds,
        )
        if runs_agents:  # a user tool runs only in a turn: a command that runs none starts no host
            await parts.load_user_tools(settings, tools, seed=seed_tools)
        # A server's question to the user waits as long as an approval does.
        asked = Elicitations(settings.navi_approval_timeout_seconds) if mcp_servers else None
        mcp = McpManager(mcp_servers, tools, asked, tokens_file=tokens_file(settings.db_path))
        if db is not None:  # Navi's own MCP server's tasks, for every worker
            mcp.tasks = SqlTaskStore(db)
        mcp.start()
        cleanup.push_async_callback(mcp.aclose)
        cleanup.pop_all()  # built: from here on the runtime's aclose() owns all of it
    assert isinstance(handles.spawn, SpawnAgentTool) and isinstance(handles.ssh, SshExecTool)
    assert handles.browser is None or isinstance(handles.browser, BrowserTool)
    compressor = ContextCompressor(parts.compression_settings(settings), sessions, state)
    # "Always allow" answers live in the shared database (in memory when the runtime opened none).
    grants = stores.grants
    policy = replace(
        parts.approval_policy(settings),
        external=mcp.rule,
        versioned=parts.skill_approval(skills, network=settings.sandbox_network),
    )
    approvals = ApprovalGate(policy, grants)
    agent = Agent(
        replace(parts.agent_config(settings), prices=model_prices(settings, backends)),
        AgentParts(
            backends=backends,
            profiles=profiles,
            tools=tools,
            sessions=sessions,
            compressor=compressor,
            workers=[CompressionWorker(compressor), NamingWorker(sessions, settings.llm_max_tokens_naming)],
            memory_summary=lambda owner: memory.get_summary(owner=owner),
            instructions=instructions_of(preferences),
            picked_model=picked_model_of(preferences, backends),
            user_tools=EnabledTools(settings.tools_dir),
            offered_tools=lambda profile_id: [*mcp.offered(profile_id), *SKILL_TOOLS],
            on_session_end=[state.forget, handles.ssh.pool.close_session, *_browser_end(handles.browser)],
            approvals=approvals,
            documents=retrieval.for_session if retrieval is not None else None,
        ),
    )
    handles.spawn.spawner = agent.run_ephemeral
    agent.binder.skills = skills.listing  # each owner's skills, listed in their system message
    # A session mid-turn is read once its turn is over.
    extractor = memory_extractor(base, is_running=agent.active.__contains__)

    def memory_changed(owner: str) -> None:  # `remember` / `memory_forget`: rewrite the summary
        agent.binder.rewriting(owner, agent.spawn_background(extractor.refresh_summary(owner)))

    def turns_dropped(session_id: str, dropped: list[Message]) -> None:  # compression: flush memory
        agent.spawn_background(extractor.flush(session_id, dropped))

    compressor.on_dropped = turns_dropped
    for tool in (tools.get("remember"), tools.get("memory_forget")):
        if isinstance(tool, RememberTool | ForgetTool):
            tool.on_change = memory_changed

    async def extract_after_new_session(_session_id: str) -> None:
        await extractor.run_pending()

    return Runtime(
        settings=settings,
        backends=backends,
        profiles=profiles,
        sessions=sessions,
        tools=tools,
        state=state,
        memory=memory,
        agent=agent,
        ssh=handles.ssh,
        browser=handles.browser,
        extractor=extractor,
        approvals=approvals,
        sandbox=sandbox,
        tool_host=tool_host,
        mcp=mcp,
        analyst=Analyst(
            parts.analysis_settings(settings),
            backends=backends,
            profiles=profiles,
            limits=agent.config.limits,
        ),
        schedules=schedules,
        schedule_settings=schedule_settings,
        db=db,
        users=stores.users,
        channels=channel_store(db),
        session_created_hooks=[extract_after_new_session],
        telemetry=telemetry,
        documents=stores.documents,
        document_settings=base.document_settings,
        embedder=embed,
        retrieval=retrieval,
        push=push,
        presence=stores.presence or InMemoryPresence(),
        notify_settings=stores.notify_settings or InMemoryNotifySettings(),
        jobs=jobs,
        skills=skills,
        voice=voice,
        preferences=preferences,
    )


def instructions_of(store: PreferenceStore) -> Callable[[str], Awaitable[str]]:
    """An owner's custom instructions as the system prompt's layer (empty: none)."""

    async def text(owner: str) -> str:
        return (await store.instructions(owner)).text()

    return text


def picked_model_of(
    store: PreferenceStore, backends: BackendRegistry
) -> Callable[[str, str], Awaitable[str]]:
    """The model an owner picked for a profile ("": none, or its backend is no longer configured)."""

    async def picked(owner: str, profile_id: str) -> str:
        choice = (await store.profile_models(owner)).get(profile_id, "")
        return choice if choice.partition(":")[0] in backends else ""

    return picked


def report_sandbox(sandbox: Sandbox) -> None:
    """Say at start how code_exec, terminal and user tools are confined; never pretend they are."""
    if sandbox.active:
        log.info("sandbox_ready", sandbox=sandbox.describe())
    elif sandbox.policy.mode == "off":
        log.warning("sandbox_off", detail=sandbox.describe(), setting="SANDBOX_MODE=off")
    elif sandbox.policy.mode == "required":
        log.warning(
            "sandbox_unavailable",
            detail=f"{sandbox.availability.problem}: code_exec, terminal and user tools will refuse to run "
            "(SANDBOX_MODE=required)",
            fix=INSTALL_FIX,
        )
    else:
        log.warning(
            "sandbox_unavailable",
            detail=f"{sandbox.availability.problem}: code_exec, terminal and user tools run unconfined, "
            "as the user running Navi",
            fix=INSTALL_FIX,
        )


def _browser_end(browser: BrowserTool | None) -> list[Callable[[str], Awaitable[None]]]:
    """The session-end hook that closes a finished session's browser context, if there is a browser."""
    if browser is None:
        return []

    async def close(session_id: str) -> None:
        await browser.pool.forget(session_id)  # a deleted session's browser state goes with it

    return [close]
