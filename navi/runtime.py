"""The composition root: everything Navi runs on, built from one `Settings` object.

`build_runtime()` is called by the FastAPI lifespan and by CLI commands that need the same parts
(doctor, sessions, memory). Nothing here runs at import time.
"""

from __future__ import annotations

from dataclasses import dataclass

from navi.config import Settings
from navi.llm.registry import BackendRegistry, build_backends
from navi.profiles.registry import ProfileRegistry, build_profiles


@dataclass
class Runtime:
    settings: Settings
    backends: BackendRegistry
    profiles: ProfileRegistry

    async def aclose(self) -> None:
        await self.backends.aclose()


def default_models(backends: BackendRegistry) -> dict[str, str]:
    return {name: backends.default_model(name) for name in backends.names()}


async def build_runtime(settings: Settings, *, backends: BackendRegistry | None = None) -> Runtime:
    backends = backends or build_backends(settings)
    profiles = build_profiles(settings, default_models(backends))
    return Runtime(settings=settings, backends=backends, profiles=profiles)
