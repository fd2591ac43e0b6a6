"""What a person sets for themselves: custom instructions, and profiles made on the page.

`Instructions` ("about me", "how to answer") are one user's, placed in the system message after
the profile's prompt (navi/profiles/persona.py): the same text on every call, so a model server's
prompt cache keeps its prefix. A `CustomProfile` is a profile one user made (name, instructions,
tools, model); it is registered with the built-in ones under an id of its own, and only its owner
sees or uses it. A user may also pick the model a built-in profile uses for them (`profile_models`:
profile id → "backend:model"), kept per user; a conversation's own model still wins over it. The
stores: in memory here, SQL in navi/storage/preferences.py.
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod

from pydantic import BaseModel, Field

from navi.profiles.base import AgentProfile

MAX_INSTRUCTIONS = 4000  # characters of each custom instruction: sent with every model call
MAX_PROFILE_PROMPT = 20_000
ABOUT_HEADING = "## About the user (written by the user)"
ANSWER_HEADING = "## How the user wants answers (written by the user)"


class Instructions(BaseModel):
    about_me: str = Field(default="", max_length=MAX_INSTRUCTIONS)
    how_to_answer: str = Field(default="", max_length=MAX_INSTRUCTIONS)

    def text(self) -> str:
        """The layer of the system prompt these make (empty: none)."""
        parts = [
            f"{ABOUT_HEADING}\n\n{self.about_me.strip()}" if self.about_me.strip() else "",
            f"{ANSWER_HEADING}\n\n{self.how_to_answer.strip()}" if self.how_to_answer.strip() else "",
        ]
        return "\n\n".join(p for p in parts if p)


class ProfileSpec(BaseModel):
    """What a person writes for a profile. `model` is "backend:model" (empty: Navi's default)."""

    name: str = Field(min_length=1, max_length=80)
    description: str = Field(default="", max_length=300)
    instructions: str = Field(default="", max_length=MAX_PROFILE_PROMPT)
    tools: list[str] = Field(default_factory=list, max_length=200)
    model: str = Field(default="", max_length=300)
    # A saved browser sign-in of this user the `browser` tool opens pages with (empty: none).
    browser_profile: str = Field(default="", max_length=40, pattern=r"^(|[a-z0-9][a-z0-9_-]{0,39})$")


class CustomProfile(BaseModel):
    id: str
    owner: str
    spec: ProfileSpec


def new_profile_id() -> str:
    return f"custom-{secrets.token_hex(6)}"


def split_model(choice: str) -> tuple[str, str]:
    """("backend", "model") of a "backend:model" choice; ("", "") for none."""
    backend, _, model = choice.partition(":")
    return (backend, model) if model else ("", "")


def as_profile(custom: CustomProfile) -> AgentProfile:
    spec = custom.spec
    backend, model = split_model(spec.model)
    return AgentProfile(
        id=custom.id,
        name=spec.name,
        description=spec.description,
        system_prompt=spec.instructions,
        enabled_tools=list(spec.tools),
        model=model,
        llm_backend=backend,
        owner=custom.owner,
        browser_profile=spec.browser_profile,
        # Every listed tool is sent with its schema: a person's own short list, no disclosure.
        core_tools=tuple(spec.tools),
    )


class PreferenceStore(ABC):
    @abstractmethod
    async def instructions(self, owner: str) -> Instructions: ...

    @abstractmethod
    async def set_instructions(self, owner: str, instructions: Instructions) -> None: ...

    @abstractmethod
    async def profiles(self) -> list[CustomProfile]:
        """Every user's profiles (the registry holds them all; each is shown to its owner only)."""

    @abstractmethod
    async def put_profile(self, profile: CustomProfile) -> None: ...

    @abstractmethod
    async def delete_profile(self, profile_id: str, owner: str) -> bool: ...

    @abstractmethod
    async def profile_models(self, owner: str) -> dict[str, str]:
        """The models `owner` picked for built-in profiles: profile id → "backend:model"."""

    @abstractmethod
    async def set_profile_model(self, owner: str, profile_id: str, model: str | None) -> None:
        """Pick `model` ("backend:model") for `owner` in `profile_id`; None: the profile's own again."""


class InMemoryPreferenceStore(PreferenceStore):
    def __init__(self) -> None:
        self._instructions: dict[str, Instructions] = {}
        self._profiles: dict[str, CustomProfile] = {}
        self._models: dict[str, dict[str, str]] = {}

    async def instructions(self, owner: str) -> Instructions:
        return self._instructions.get(owner, Instructions())

    async def set_instructions(self, owner: str, instructions: Instructions) -> None:
        self._instructions[owner] = instructions

    async def profiles(self) -> list[CustomProfile]:
        return list(self._profiles.values())

    async def put_profile(self, profile: CustomProfile) -> None:
        self._profiles[profile.id] = profile

    async def delete_profile(self, profile_id: str, owner: str) -> bool:
        kept = self._profiles.get(profile_id)
        if kept is None or kept.owner != owner:
            return False
        del self._profiles[profile_id]
        return True

    async def profile_models(self, owner: str) -> dict[str, str]:
        return dict(self._models.get(owner, {}))

    async def set_profile_model(self, owner: str, profile_id: str, model: str | None) -> None:
        picks = self._models.setdefault(owner, {})
        if model:
            picks[profile_id] = model
        else:
            picks.pop(profile_id, None)
