"""The persona layer and how it combines with a profile into the system prompt."""

from __future__ import annotations

from navi import prompts
from navi.profiles.base import AgentProfile


def default_persona() -> str:
    """Navi's built-in persona, used when neither NAVI_PERSONA nor NAVI_PERSONA_FILE is set."""
    return prompts.load("persona")


SESSION_HEADING = "## This conversation's own instructions"


def system_prompt(persona: str, profile: AgentProfile) -> str:
    """`persona`, a `---` rule, then the profile's own prompt — built fresh for every model call —
    then the user's custom instructions, and, for a session that has one (its own instructions, or
    an imported archive's), its own layer, each after another rule. Every layer changes only when
    someone edits it, so the system message stays the prompt cache's prefix."""
    persona = persona.strip() or default_persona()
    text = f"{persona}\n\n---\n\n{profile.system_prompt.strip()}"
    if profile.user_prompt:  # the user's custom instructions: the same on every call of theirs
        text += f"\n\n---\n\n{profile.user_prompt}"
    if profile.session_prompt:
        text += f"\n\n---\n\n{SESSION_HEADING}\n\n{profile.session_prompt}"
    return text
