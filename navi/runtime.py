"""The composition root: everything Navi runs on, built from one `Settings` object.

`build_runtime()` is called by the FastAPI lifespan and by CLI commands that need the same parts.
Nothing here runs at import time. Built-in tools register through the same `register()` a user
tool would use; the spawn tool gets the agent after the agent exists.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from navi.agent.engine import Agent, AgentConfig
from navi.agent.workers import CompressionSettings, CompressionWorker, ContextCompressor, NamingWorker
from navi.config import Settings
from navi.llm.calls import CallLimits
from navi.llm.registry import BackendRegistry, build_backends
from navi.logging import get_logger
from navi.memory.base import MemoryStore
from navi.memory.extractor import MemoryExtractor
from navi.memory.sql_store import SqlMemoryStore
from navi.profiles.persona import system_prompt
from navi.profiles.registry import ProfileRegistry, UnknownProfile, build_profiles
from navi.sessions import SessionStore, build_session_store
from navi.sessions.archive import export_session
from navi.sessions.models import Session
from navi.storage.database import open_database
from navi.tools.builtin import register_builtins
from navi.tools.builtin.agents import SpawnAgentTool
from navi.tools.builtin.ssh import SshExecTool
from navi.tools.registry import ToolRegistry
from navi.tools.seeding import ensure_tools_dir
from navi.tools.session_state import SessionState
from navi.tools.user_config import EnabledTools

log = get_logger(__name__)


@dataclass
class Runtime:
    settings: Settings
    backends: BackendRegistry
    profiles: ProfileRegistry
    sessions: SessionStore
    tools: ToolRegistry
    state: SessionState
    memory: MemoryStore
    agent: Agent
    ssh: SshExecTool
    extractor: MemoryExtractor
    # Called (in the background) with the new session's id after POST /sessions — memory extraction.
    session_created_hooks: list[Callable[[str], Coroutine[Any, Any, None]]] = field(default_factory=list)

    def background(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` without holding up the caller; failures are logged."""
        self.agent.spawn_background(coro)

    async def aclose(self) -> None:
        await self.agent.settle()
        await self.ssh.pool.aclose()
        await self.memory.aclose()
        await self.sessions.aclose()
        await self.backends.aclose()

    def export_archive(self, session: Session) -> dict[str, Any]:
        """A `session-archive/v1` document with the session's profile, model and prompt filled in."""
        s = self.settings
        try:
            profile = self.profiles.get(session.profile_id)
        except UnknownProfile:
            return export_session(session)
        return export_session(
            session,
            provider=self.profiles.backend_of(profile),
            model=self.profiles.model_of(profile),
            model_params={
                "temperature": profile.temperature,
                "num_ctx": s.ollama_num_ctx,
                "think": s.ollama_think,
            },
            system_prompt=system_prompt(s.navi_persona, profile),
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


def _embedder(settings: Settings, backends: BackendRegistry) -> Any:
    """Memory's embedding function when `MEMORY_EMBED_MODEL` is set, on the default backend."""
    if not settings.memory_embed_model:
        return None

    async def embed(texts: list[str]) -> list[list[float]]:
        return await backends.get(settings.default_llm_backend).embed(texts, settings.memory_embed_model)

    return embed


def default_models(backends: BackendRegistry) -> dict[str, str]:
    return {name: backends.default_model(name) for name in backends.names()}


def agent_config(settings: Settings) -> AgentConfig:
    return AgentConfig(
        persona=settings.navi_persona,
        num_ctx=settings.ollama_num_ctx,
        think=settings.ollama_think,
        planning=settings.planning_enabled,
        limits=CallLimits(
            first_token=settings.llm_first_token_timeout_seconds,
            idle=settings.llm_idle_timeout_seconds,
        ),
        max_tokens_answer=settings.llm_max_tokens_answer,
        max_tokens_planning=settings.llm_max_tokens_planning,
        max_tokens_naming=settings.llm_max_tokens_naming,
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


async def build_runtime(
    settings: Settings,
    *,
    backends: BackendRegistry | None = None,
    sessions: SessionStore | None = None,
    memory: MemoryStore | None = None,
) -> Runtime:
    backends = backends or build_backends(settings)
    profiles = build_profiles(settings, default_models(backends))
    for name in {profiles.backend_of(p) for p in profiles.all()}:
        if name in backends:
            backends.get(name)  # import the SDK and build its client now, not during someone's first turn
    db = open_database(settings) if sessions is None or memory is None else None
    sessions = sessions or build_session_store(settings, db)
    await sessions.open()
    memory = memory or SqlMemoryStore(db or open_database(settings), embed=_embedder(settings, backends))
    await memory.open()
    state = SessionState()
    tools = ToolRegistry()
    handles = register_builtins(
        tools, settings, state=state, profiles=profiles, sessions=sessions, memory=memory
    )
    ensure_tools_dir(settings.tools_dir)  # seeding and loading log what they did, once each
    tools.reload_user_tools(settings.tools_dir)
    assert isinstance(handles.spawn, SpawnAgentTool) and isinstance(handles.ssh, SshExecTool)
    compressor = ContextCompressor(compression_settings(settings), sessions)
    agent = Agent(
        agent_config(settings),
        backends=backends,
        profiles=profiles,
        tools=tools,
        sessions=sessions,
        compressor=compressor,
        workers=[CompressionWorker(compressor), NamingWorker(sessions, settings.llm_max_tokens_naming)],
        memory_summary=lambda owner: memory.get_summary(owner=owner),
        user_tools=EnabledTools(settings.tools_dir),
        on_session_end=[state.forget, handles.ssh.pool.close_session],
    )
    handles.spawn.spawner = agent.run_ephemeral
    extractor = MemoryExtractor(
        sessions=sessions,
        memory=memory,
        backends=backends,
        profiles=profiles,
        stale_minutes=settings.memory_stale_minutes,
        is_running=agent.active.__contains__,  # a session mid-turn is read once its turn is over
        max_tokens=settings.llm_max_tokens_extraction,
    )

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
        extractor=extractor,
        session_created_hooks=[extract_after_new_session],
    )
