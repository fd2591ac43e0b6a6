"""When the model cannot summarise, Navi condenses the earlier conversation itself.

A small model may never write a summary Navi can trust: it copies the conversation, loops, changes
numbers. The context is then left as it was (the user is told); but once the conversation no longer
fits the window, refusing every further message would end the session. Instead Navi keeps what the
person said earlier — their own messages, clipped — and the gist of each answer, newest first
within a budget, as the summary. It is lossy but exact: nothing in it was invented, and the
display history still holds every message.
"""

from __future__ import annotations

from collections.abc import Sequence

from navi.agent.compression.summary import CompressionResult
from navi.agent.compression.transcript import SUMMARY_PREFIX, clip, partition
from navi.llm.messages import Message
from navi.llm.meta import MessageMeta
from navi.llm.tokens import CHARS_PER_TOKEN, estimate_messages_tokens

CONDENSED_PREFIX = "[Earlier conversation, condensed by Navi because the model could not summarise it]"
USER_CHARS = 400
ANSWER_CHARS = 160


def digest_lines(messages: Sequence[Message]) -> list[str]:
    """One line per earlier summary, request and answer; tool traffic is left out."""
    lines: list[str] = []
    for msg in messages:
        text = (msg.content or "").strip()
        if msg.is_summary:
            body = text.removeprefix(SUMMARY_PREFIX).removeprefix(CONDENSED_PREFIX).strip()
            if body:
                lines.append(body)
        elif msg.role == "user" and text and not msg.metadata.synthetic:
            lines.append(f"- The user said: {clip(text, USER_CHARS)}")
        elif msg.role == "assistant" and text and not msg.tool_calls and not msg.is_plan:
            lines.append(f"- You answered: {clip(text, ANSWER_CHARS)}")
    return lines


def condense_context(
    context: Sequence[Message], *, keep_recent: int, budget_tokens: int
) -> CompressionResult | None:
    """All but the last `keep_recent` turns as one condensed summary; None if nothing to condense.

    When the lines exceed the budget the oldest go first: the newest requests matter most.
    """
    to_condense, to_keep = partition(context, keep_recent)
    if not to_condense:
        return None
    budget = int(budget_tokens * CHARS_PER_TOKEN)
    kept: list[str] = []
    size = len(CONDENSED_PREFIX)
    for line in reversed(digest_lines(to_condense)):
        if size + len(line) + 1 > budget:
            if not kept:
                kept.append(line[: max(0, budget - size - 2)] + "…")
            break
        kept.insert(0, line)
        size += len(line) + 1
    summary = Message.user(
        "\n".join([CONDENSED_PREFIX, *kept]),
        is_summary=True,
        metadata=MessageMeta(
            condensed=True,
            messages_summarized=len(to_condense),
            tokens_before=estimate_messages_tokens(to_condense),
        ),
    )
    return CompressionResult(
        context=[summary, *to_keep],
        summary=summary,
        summarized=len(to_condense),
        kept=len(to_keep),
        calls=0,
    )
