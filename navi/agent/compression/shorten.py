"""Long messages kept short: what a model call reads of long messages older than the recent turns.

A user message, answer or tool result that is older than the last `keep_recent` turns (the turns
compression keeps verbatim, `CONTEXT_KEEP_RECENT`) and longer than `max_tokens`
(`CONTEXT_LONG_MESSAGE_TOKENS`) is sent as its head and its tail around a note naming its recall key
(`msg_<id>`, see `navi.sessions.keys`); the `recall` tool reads the whole text back from the stored
history. An old 20-page paste then costs a few hundred tokens on every later call instead of
thousands, and nothing is lost.

This is a view, built for each call (`navi.agent.context.build_context`): the stored context and
the display history keep every message whole, so compression still summarises the full texts. The
view changes only when a turn ages out of the recent ones, which happens when the user sends a
message, so within a turn every call sends the same prefix and a server's prompt cache holds.
"Recent" is what compression keeps verbatim, so a compressed context has nothing to shorten and
compression's estimate of it is already the estimate of what is sent.
Summaries, plans and the images Navi injects are never shortened; images of a shortened message stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from navi.agent.compression.transcript import partition
from navi.llm.messages import Message
from navi.llm.tokens import CHARS_PER_TOKEN, estimate_message_tokens, estimate_tokens
from navi.sessions.keys import recall_key

HEAD_SHARE = 0.6  # of the budget kept from the start of a shortened text; TAIL_SHARE from its end
TAIL_SHARE = 0.3


@dataclass(frozen=True)
class LongMessages:
    """Which messages a model call gets shortened: older than `keep_recent` turns and longer than
    `max_tokens` (estimated). `max_tokens=0` sends every message whole."""

    max_tokens: int = 1500
    keep_recent: int = 10


def omitted_note(omitted: int, key: str) -> str:
    """The line that stands for the middle of a shortened text: how much is missing, and its key."""
    return (
        f"[… {omitted} characters omitted. The full text is kept: call recall with key "
        f'"{key}" (and optionally offset/length) to read it …]'
    )


def head_and_tail(text: str, budget_chars: int, key: str, full_length: int | None = None) -> str:
    """`text` as its head and tail within about `budget_chars`, with the note between them.

    `full_length` is the length of the original when `text` is already a shortened copy of it
    (a long tool result is clipped in the stored context too): the note counts from the original.
    """
    head, tail = text[: int(budget_chars * HEAD_SHARE)], text[len(text) - int(budget_chars * TAIL_SHARE) :]
    omitted = (full_length or len(text)) - len(head) - len(tail)
    return f"{head}\n\n{omitted_note(omitted, key)}\n\n{tail}"


def _can_shorten(msg: Message) -> bool:
    return (
        msg.role in ("user", "assistant", "tool")
        and not msg.is_summary
        and not msg.is_plan
        and not msg.metadata.synthetic
    )


def shortened(msg: Message, max_tokens: int) -> Message | None:
    """The short copy of `msg` a model call gets, or None when it goes whole."""
    text = msg.content or ""
    if max_tokens <= 0 or estimate_tokens(text) <= max_tokens or not _can_shorten(msg):
        return None
    key = recall_key(msg.id)
    full_length = msg.metadata.truncated_from or len(text)
    short = head_and_tail(text, int(max_tokens * CHARS_PER_TOKEN), key, full_length)
    if len(short) >= len(text):  # a tiny limit: the note alone would be longer than what it replaces
        return None
    metadata = msg.metadata.but(recall_key=key, truncated_from=full_length)
    return msg.model_copy(update={"content": short, "metadata": metadata})


def _old(messages: Sequence[Message], policy: LongMessages) -> set[int]:
    """Identities of the messages older than the recent turns (those are never shortened)."""
    if policy.max_tokens <= 0:
        return set()
    return {id(m) for m in partition(messages, max(1, policy.keep_recent))[0]}


def shorten_old(
    messages: Sequence[Message], policy: LongMessages, texts: dict[str, str] | None = None
) -> list[Message]:
    """`messages` with the long old ones shortened. `texts`, when given, receives the full text of
    each shortened message by id: for a run whose messages are stored nowhere (a subagent's)."""
    old = _old(messages, policy)
    if not old:
        return list(messages)
    out: list[Message] = []
    for msg in messages:
        short = shortened(msg, policy.max_tokens) if id(msg) in old else None
        if short is not None and texts is not None:
            texts.setdefault(msg.id, msg.content or "")
        out.append(msg if short is None else short)
    return out


def saving(messages: Sequence[Message], policy: LongMessages) -> int:
    """Estimated tokens the view of `messages` saves on the messages as stored."""
    total = 0
    old = _old(messages, policy)
    for msg in messages:
        if id(msg) in old and (short := shortened(msg, policy.max_tokens)) is not None:
            total += estimate_message_tokens(msg) - estimate_message_tokens(short)
    return total
