"""The persona layer and how it combines with a profile into the system prompt."""

from __future__ import annotations

from navi import prompts
from navi.profiles.base import AgentProfile


def default_persona() -> str:
    """Navi's built-in persona, used when neither NAVI_PERSONA nor NAVI_PERSONA_FILE is set."""
    return prompts.load("persona")


def system_prompt(persona: str, profile: AgentProfile) -> str:
    """`persona`, a `---` rule, then the profile's own prompt — built fresh for every model call."""
    persona = persona.strip() or default_persona()
    return f"{persona}\n\n---\n\n{profile.system_prompt.strip()}"
