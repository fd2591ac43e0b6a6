"""Messages in the one shape every chat template accepts.

Strict templates (Gemma 3's, many Llama and Mistral ones) raise "Conversation roles must alternate"
for shapes Navi used to send: a second system message (the memory summary), a summary user message
followed by the next user message, a note appended as a trailing system message. Others silently
drop all but the first system message. The adapters normalise what they send so the agent never
has to care:

- exactly one system message, first: every system text, in order, joined by a blank line;
- the first message after it is a user message (a short neutral one is inserted if not);
- consecutive user messages are merged (texts joined by a blank line, images kept), and so are
  consecutive assistant messages (texts joined, tool calls kept);
- an assistant message with neither text nor tool calls is dropped: it says nothing and would
  split two user turns;
- a tool result stays right after the assistant call it answers; one with no call before it
  (its call was cut away) becomes user text, since servers reject an unpaired result.

A trailing assistant message is left alone: whether it is a prefill is the caller's decision.
Messages that need no change are passed through as the same objects, so per-message wire
encodings cached by identity (the Ollama adapter) stay valid.
"""

from __future__ import annotations

from collections.abc import Sequence

from navi.llm.messages import Message

OPENING_TEXT = "(continuing our conversation)"


def _join(*texts: str | None) -> str:
    return "\n\n".join(t for t in texts if t and t.strip())


def _merge(first: Message, second: Message) -> Message:
    """One message holding both (same role), in order."""
    if first.role == "user":
        return Message(
            role="user",
            content=_join(first.content, second.content),
            images=[*first.images, *second.images],
            created_at=first.created_at,
        )
    return Message(
        role="assistant",
        content=_join(first.content, second.content) or None,
        tool_calls=[*first.tool_calls, *second.tool_calls],
        thinking=_join(first.thinking, second.thinking) or None,
        created_at=first.created_at,
    )


def _orphan_result(msg: Message) -> Message:
    label = f"Result of the {msg.name} tool" if msg.name else "A tool result"
    return Message.user(f"{label} (its call is no longer shown):\n{msg.content or ''}", images=msg.images)


def system_text(messages: Sequence[Message]) -> str:
    """Every system message's text, in order, as the single system message carries it."""
    return _join(*(m.content for m in messages if m.role == "system"))


def normalize_messages(messages: Sequence[Message]) -> list[Message]:
    """The conversation in the shape described above; the input is not changed.

    One pass, cheap enough to run on every call of a 5,000-message conversation.
    """
    systems = [m for m in messages if m.role == "system" and m.content and not m.content.isspace()]
    out: list[Message] = []
    if len(systems) == 1 and messages and messages[0] is systems[0]:
        out.append(systems[0])
    elif systems:
        out.append(Message.system(system_text(systems), created_at=systems[0].created_at))
    start = len(out)
    last_role = ""  # role of out[-1] among the turns after the system message
    for msg in messages:
        role = msg.role
        if role == "system":
            continue
        if role == "assistant" and not msg.tool_calls and (not msg.content or msg.content.isspace()):
            continue
        if role == "tool":
            if last_role == "tool" or (last_role == "assistant" and out[-1].tool_calls):
                out.append(msg)
                last_role = role
                continue
            msg, role = _orphan_result(msg), "user"
        if role == last_role:
            out[-1] = _merge(out[-1], msg)
        else:
            out.append(msg)
            last_role = role
    if len(out) == start or out[start].role != "user":
        out.insert(start, Message.user(OPENING_TEXT))
    return out


def alternation_problems(messages: Sequence[Message]) -> list[str]:
    """What a strict template would reject in `messages` (empty when it would accept them).

    Tool results count as part of the assistant turn they answer, as tool-aware templates render
    them; used by tests and by the real-model suite to assert every call Navi made was valid.
    """
    problems: list[str] = []
    roles = [m.role for m in messages]
    if roles.count("system") > 1 or ("system" in roles and roles[0] != "system"):
        problems.append("more than one system message, or one that is not first")
    turns = [r for r in roles if r != "system"]
    if turns and turns[0] != "user":
        problems.append(f"the first message is {turns[0]}, not user")
    for i in range(1, len(turns)):
        role, before = turns[i], turns[i - 1]
        if role == "tool":
            if before not in ("assistant", "tool"):
                problems.append(f"tool result at {i} does not follow a tool call")
        elif role == before:
            problems.append(f"messages {i - 1} and {i} are both {role}")
    return problems
