"""The composition root: everything Navi runs on, built from one `Settings` object.

`build_runtime()` is called by the FastAPI lifespan and by CLI commands that need the same parts.
Nothing here runs at import time. Built-in tools register through the same `register()` a user
tool would use; the spawn tool gets the agent after the agent exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from navi.agent.engine import Agent, AgentConfig
from navi.agent.workers import CompressionSettings, CompressionWorker, ContextCompressor, NamingWorker
from navi.config import Settings
from navi.llm.registry import BackendRegistry, build_backends
from navi.profiles.persona import system_prompt
from navi.profiles.registry import ProfileRegistry, UnknownProfile, build_profiles
from navi.sessions import SessionStore, build_session_store
from navi.sessions.archive import export_session
from navi.sessions.models import Session
from navi.tools.builtin.agents import SpawnAgentTool, SwitchProfileTool
from navi.tools.builtin.recall import RecallTool
from navi.tools.builtin.scratchpad import ScratchpadTool
from navi.tools.builtin.todo import TodoTool
from navi.tools.registry import ToolRegistry
from navi.tools.session_state import SessionState


@dataclass
class Runtime:
    settings: Settings
    backends: BackendRegistry
    profiles: ProfileRegistry
    sessions: SessionStore
    tools: ToolRegistry
    state: SessionState
    agent: Agent

    async def aclose(self) -> None:
        await self.agent.settle()
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


def default_models(backends: BackendRegistry) -> dict[str, str]:
    return {name: backends.default_model(name) for name in backends.names()}


def agent_config(settings: Settings) -> AgentConfig:
    return AgentConfig(
        persona=settings.navi_persona, num_ctx=settings.ollama_num_ctx, think=settings.ollama_think
    )


def compression_settings(settings: Settings) -> CompressionSettings:
    return CompressionSettings(
        enabled=settings.context_compression_enabled,
        threshold=settings.context_compression_threshold,
        keep_recent=settings.context_keep_recent,
        temperature=settings.context_summary_temperature,
        max_input_chars=settings.context_summary_max_input_chars,
    )


def register_builtin_tools(
    tools: ToolRegistry, *, state: SessionState, profiles: ProfileRegistry, sessions: SessionStore
) -> SpawnAgentTool:
    spawn = SpawnAgentTool(profiles)
    for tool in (
        TodoTool(state),
        ScratchpadTool(state),
        SwitchProfileTool(profiles, sessions),
        spawn,
        RecallTool(sessions),
    ):
        tools.register(tool, builtin=True)
    return spawn


async def build_runtime(
    settings: Settings,
    *,
    backends: BackendRegistry | None = None,
    sessions: SessionStore | None = None,
) -> Runtime:
    backends = backends or build_backends(settings)
    profiles = build_profiles(settings, default_models(backends))
    sessions = sessions or build_session_store(settings)
    await sessions.open()
    state = SessionState()
    tools = ToolRegistry()
    spawn = register_builtin_tools(tools, state=state, profiles=profiles, sessions=sessions)
    compressor = ContextCompressor(compression_settings(settings), sessions)
    agent = Agent(
        agent_config(settings),
        backends=backends,
        profiles=profiles,
        tools=tools,
        sessions=sessions,
        compressor=compressor,
        workers=[CompressionWorker(compressor), NamingWorker(sessions)],
        on_session_end=[state.forget],
    )
    spawn.spawner = agent.run_ephemeral
    return Runtime(
        settings=settings,
        backends=backends,
        profiles=profiles,
        sessions=sessions,
        tools=tools,
        state=state,
        agent=agent,
    )
