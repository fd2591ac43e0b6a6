"""What a model call sees: the system prompt, the memory summary, then the stored context.

Built fresh for every call, so a profile switch or a new persona applies at once. The stored context
is also checked for consistency here: every tool call an assistant message made gets a result (a
crash between a call and its result would otherwise make the next request invalid for APIs that
insist on pairs), and stored system messages are left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from navi.llm.messages import Message
from navi.profiles.base import AgentProfile
from navi.profiles.persona import system_prompt

MEMORY_HEADING = "## What I remember about the user"
INTERRUPTED = "(no result: the run was interrupted before this tool finished)"


def memory_message(summary: str | None) -> Message | None:
    if not summary or not summary.strip():
        return None
    return Message.system(f"{MEMORY_HEADING}\n\n{summary.strip()}")


def repair(context: Sequence[Message]) -> list[Message]:
    """Drop system messages; give every tool call a result; drop results whose call is gone.

    Runs on every model call over the whole context, so it is kept to one cheap pass.
    """
    out: list[Message] = []
    append = out.append
    open_calls: dict[str, str] = {}
    for msg in context:
        role = msg.role
        if role == "tool":
            if msg.tool_call_id in open_calls:
                del open_calls[msg.tool_call_id]
                append(msg)
            continue
        if role == "system":
            continue
        if open_calls:
            if role == "user" and msg.metadata.get("synthetic"):
                append(msg)  # an image injected after a tool result belongs to the tool group
                continue
            for call_id, name in open_calls.items():
                append(
                    Message.tool(INTERRUPTED, tool_call_id=call_id, name=name, metadata={"status": "error"})
                )
            open_calls = {}
        append(msg)
        if role == "assistant" and msg.tool_calls:
            open_calls = {c.id: c.name for c in msg.tool_calls}
    for call_id, name in open_calls.items():
        append(Message.tool(INTERRUPTED, tool_call_id=call_id, name=name, metadata={"status": "error"}))
    return out


def build_context(
    persona: str,
    profile: AgentProfile,
    context: Sequence[Message],
    memory_summary: str | None = None,
) -> list[Message]:
    messages = [Message.system(system_prompt(persona, profile))]
    memory = memory_message(memory_summary)
    if memory is not None:
        messages.append(memory)
    messages.extend(repair(context))
    return messages
