"""Navi's built-in persona states what the reference's persona layer states, in Navi's own words.

The reference (navi-docs/profiles.md, memory.md, tools.md and its visual page) gives the persona:
who Navi is (Navi, a female personal assistant), self-extension (write_tool after reading its
manual, reload_tools), planning and scratchpad, delegation (spawn_agent), the memory rules
(memory_search when warranted and not by habit; memory_forget only when asked or a fact is wrong
or outdated) and the profile-switching rules. Each is checked by the rule's words, in every
profile's system prompt as the model reads it.
"""

from __future__ import annotations

import re

from bench.prompt_tokens import fixed_prompts
from navi.profiles.persona import default_persona


def rule(text: str, *words: str) -> str:
    """The persona's bullet (or opening paragraph) that holds every one of `words`."""
    parts = re.split(r"\n(?=- )", text)
    found = [" ".join(p.split()) for p in parts if all(w.lower() in p.lower() for w in words)]
    assert found, f"no rule of the persona says {words}"
    return found[0]


def test_the_persona_states_the_references_rules() -> None:
    persona = default_persona()
    assert persona.startswith("You are Navi") and "personal assistant" in persona
    assert "she/her" in rule(persona, "You are Navi")
    assert "tool_manual" in rule(persona, "write_tool") and "reload_tools" in rule(persona, "write_tool")
    assert "scratchpad" in rule(persona, "todo") and "plan" in rule(persona, "todo")
    assert "sub-task" in rule(persona, "spawn_agent")
    search = rule(persona, "memory_search")
    assert "personal" in search and "not by habit at the start" in search
    forget = rule(persona, "memory_forget")
    assert "only when asked" in forget and "wrong or outdated" in forget
    assert "forget`" not in persona.replace("memory_forget`", "")  # the tool's one name
    switch = rule(persona, "switch_profile")
    assert "clearly changed" in switch and "one" in switch and "back and forth" in switch


def test_every_profile_prompt_begins_with_the_persona() -> None:
    persona = default_persona().strip()
    for profile_id, (system, _specs) in fixed_prompts().items():
        assert system.startswith(f"{persona}\n\n---\n\n"), profile_id
