"""The demo script behind `navi fake-model`: enough behaviour to click through Navi by hand.

- Every answer thinks briefly, then streams.
- A message containing "plan" gets a plan from the planning step.
- "todo" (or "tool") makes the model call the `todo` tool before answering.
- "slow" streams slowly (try the stop button or reload mid-stream).
- Summaries keep the lines with digits; titles are the first words of the message.
"""

from __future__ import annotations

from navi.testing.agent_script import echo_facts_summary, kind_of
from navi.testing.script import Reply, Script, ScriptedCall, ScriptRequest


def demo_responder(request: ScriptRequest) -> Reply:
    kind = kind_of(request)
    said = request.last_user_text.strip()
    if kind == "planning":
        if "plan" in said.lower():
            return Reply(text="1. Write a checklist with todo\n2. Answer the user")
        return Reply(text="DIRECT")
    if kind == "summary":
        return echo_facts_summary(request)
    if kind == "naming":
        first_user = next((m.content or "" for m in request.messages if m.role == "user"), "")
        words = first_user.replace("User:", "").split()[:5]
        return Reply(text=" ".join(words) or "Demo conversation")
    last = request.last
    if last is not None and last.role == "tool":
        return Reply(
            thinking="The tool answered; I will report it.",
            text=f"The tool `{last.name or 'tool'}` answered:\n\n```\n{(last.content or '')[:500]}\n```",
            delay=0.02,
        )
    lowered = said.lower()
    if ("todo" in lowered or "tool" in lowered) and "todo" in request.tools:
        return Reply(
            thinking="A checklist will help.",
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Read the request", "Answer it"]})],
        )
    slow = "slow" in lowered
    return Reply(
        thinking=f"The user wrote {len(said)} characters. I will answer briefly.",
        text=f"You said: **{said}**\n\n(Navi's fake model: point OLLAMA_HOST at a real Ollama to chat.)"
        + (" This answer streams slowly so you can stop it or reload the page." * 3 if slow else ""),
        chunk_chars=4 if slow else 8,
        delay=0.15 if slow else 0.02,
    )


def demo_script() -> Script:
    return Script(responder=demo_responder)
