"""The composition root: everything Navi runs on, built from one `Settings` object.

`build_runtime()` is called by the FastAPI lifespan and by CLI commands that need the same parts
(doctor, sessions, memory). Nothing here runs at import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from navi.config import Settings
from navi.llm.registry import BackendRegistry, build_backends
from navi.profiles.persona import system_prompt
from navi.profiles.registry import ProfileRegistry, UnknownProfile, build_profiles
from navi.sessions import SessionStore, build_session_store
from navi.sessions.archive import export_session
from navi.sessions.models import Session


@dataclass
class Runtime:
    settings: Settings
    backends: BackendRegistry
    profiles: ProfileRegistry
    sessions: SessionStore

    async def aclose(self) -> None:
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
    return Runtime(settings=settings, backends=backends, profiles=profiles, sessions=sessions)
