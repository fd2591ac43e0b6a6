"""Profiles by id, and how a profile's backend and model are resolved (the defaults are handed in)."""

from __future__ import annotations

import dataclasses
from importlib import resources

from navi.profiles.base import BASE_TOOLS, AgentProfile


class UnknownProfile(KeyError):
    def __init__(self, profile_id: str, known: list[str]) -> None:
        super().__init__(profile_id)
        self.profile_id = profile_id
        self.known = known

    def __str__(self) -> str:
        return f"no profile '{self.profile_id}' (known: {', '.join(self.known)})"


class ProfileRegistry:
    def __init__(self, default_backend: str = "ollama", default_models: dict[str, str] | None = None) -> None:
        self._profiles: dict[str, AgentProfile] = {}
        self.default_backend = default_backend
        self.default_models = default_models or {}

    def register(self, profile: AgentProfile) -> None:
        self._profiles[profile.id] = profile

    def unregister(self, profile_id: str) -> None:
        self._profiles.pop(profile_id, None)

    def get(self, profile_id: str) -> AgentProfile:
        try:
            return self._profiles[profile_id]
        except KeyError:
            raise UnknownProfile(profile_id, self.ids()) from None

    def of_session(self, profile_id: str) -> AgentProfile:
        """A session's profile; the default one if the session's profile no longer exists."""
        return self._profiles.get(profile_id) or self._profiles[self.default_id]

    def __contains__(self, profile_id: object) -> bool:
        return profile_id in self._profiles

    def ids(self) -> list[str]:
        """Everyone's profiles (a profile a user made on the page is listed to that user only)."""
        return [p.id for p in self._profiles.values() if p.owner is None]

    def visible(self, owner: str) -> list[AgentProfile]:
        """The profiles `owner` may pick: everyone's and their own."""
        return [p for p in self._profiles.values() if p.visible_to(owner)]

    def usable(self, profile_id: str, owner: str) -> AgentProfile:
        """`profile_id` if `owner` may use it; else `UnknownProfile` (another's is no profile)."""
        profile = self._profiles.get(profile_id)
        if profile is None or not profile.visible_to(owner):
            raise UnknownProfile(profile_id, [p.id for p in self.visible(owner)])
        return profile

    def all(self) -> list[AgentProfile]:
        """Everyone's profiles (`visible` adds a user's own)."""
        return [p for p in self._profiles.values() if p.owner is None]

    @property
    def default_id(self) -> str:
        return next(iter(self._profiles))

    def backend_of(self, profile: AgentProfile) -> str:
        return profile.llm_backend or self.default_backend

    def model_of(self, profile: AgentProfile) -> str:
        return profile.model or self.default_models.get(self.backend_of(profile), "")


def _prompt(name: str) -> str:
    return (
        resources.files("navi.profiles").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8").strip()
    )


def builtin_profiles(sign_ins: dict[str, str] | None = None) -> list[AgentProfile]:
    """Navi's own profiles; `sign_ins` names the browser sign-in each opens pages with (by id)."""
    return [dataclasses.replace(p, browser_profile=(sign_ins or {}).get(p.id, "")) for p in _builtin()]


def _builtin() -> list[AgentProfile]:
    return [
        AgentProfile(
            id="secretary",
            name="Personal Secretary",
            description="Research, writing, planning and everyday errands.",
            system_prompt=_prompt("secretary"),
            # Finding what was said in other sessions is the everyday assistant's, not the admin's.
            enabled_tools=[*BASE_TOOLS, "search_conversations"],
            temperature=0.7,
            planning_enabled=True,
            scratchpad_sections=("findings", "sources", "drafts"),
            core_tools=(
                "todo",
                "scratchpad",
                "web_search",
                "web_view",
                "memory_search",
                "recall",
                "get_current_datetime",
                "user_notes",
            ),
        ),
        AgentProfile(
            id="server_admin",
            name="Server Administrator",
            description="Remote machines, services, logs and deployments over SSH and the terminal.",
            system_prompt=_prompt("server_admin"),
            temperature=0.2,
            planning_enabled=True,
            scratchpad_sections=("status", "logs", "errors", "plan"),
            core_tools=("todo", "scratchpad", "terminal", "ssh_exec", "filesystem", "recall"),
        ),
        AgentProfile(
            id="smart_home",
            name="Smart Home Assistant",
            description="Lights, climate, sensors and automations through the home's HTTP APIs.",
            system_prompt=_prompt("smart_home"),
            temperature=0.3,
            planning_enabled=True,
            scratchpad_sections=("state", "config", "errors"),
            core_tools=("todo", "scratchpad", "http_request", "schedule", "memory_search", "recall"),
        ),
    ]


def with_tools(profile: AgentProfile, extra: list[str]) -> AgentProfile:
    """A copy of `profile` whose tool list also holds `extra` (user tools from enabled.json)."""
    merged = list(dict.fromkeys([*profile.enabled_tools, *extra]))
    return dataclasses.replace(profile, enabled_tools=merged)


__all__ = [
    "BASE_TOOLS",
    "AgentProfile",
    "ProfileRegistry",
    "UnknownProfile",
    "builtin_profiles",
]
