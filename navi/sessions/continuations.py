"""Answers left unfinished — the token cap cut them off (`finish_reason: "length"`) or the user
stopped them mid-text (`stopped`) — and their continuations.

The continuation is a new assistant message stored after the cut-off answer (its child on the same
branch), marked `continues` with that answer's id: no stored row is ever rewritten. Its model call
sends the session's context as it is plus, for that call only, a note asking the model to go on
where it stopped (`CONTINUE_NOTE`). Wherever a conversation is shown, a continuation is joined to
the answer it continues (`joined`): one answer on screen, whose `finish_reason` is that of its last
part. A continuation can itself be cut off and continued.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from navi.llm.messages import Message

CONTINUE_NOTE = (
    "Your previous answer was cut off before it was finished. Continue it exactly where it stopped, "
    "mid-sentence if need be, without repeating anything already written and without any preamble."
)
NOTHING_TO_CONTINUE = (
    "only the latest answer, when the length limit cut it off or it was stopped, can be continued"
)

M = TypeVar("M", bound=Message)


def capped(msg: Message) -> bool:
    """An answer the token cap cut off, or a continuation of one whose stream broke
    (`interrupted`; its text is kept, joined to the answer)."""
    meta = msg.metadata
    return (
        msg.role == "assistant"
        and not msg.tool_calls
        and meta.error is None
        and (meta.finish_reason == "length" or bool(meta.continues and meta.interrupted))
    )


def cut_off(msg: Message) -> bool:
    """An answer left unfinished: `capped`, or stopped by the user with some of its text written
    (a stop before any text leaves nothing to go on with)."""
    if capped(msg):
        return True
    return (
        msg.role == "assistant"
        and msg.stopped
        and bool(msg.content)
        and not msg.tool_calls
        and msg.metadata.error is None
    )


def continuable(path: Sequence[Message], message_id: str) -> Message | None:
    """The message a continuation of `message_id` goes after: the path's last message, when it is a
    cut-off answer and `message_id` names it or an earlier part of the same joined answer."""
    last = path[-1] if path else None
    if last is None or not cut_off(last):
        return None
    by_id = {m.id: m for m in path}
    part: Message | None = last
    while part is not None:
        if part.id == message_id:
            return last
        continued = part.metadata.continues
        part = by_id.get(continued) if continued else None
    return None


def joined(path: Sequence[M]) -> list[M]:
    """`path` as shown: each continuation folded into the answer it continues (the first part's
    id, siblings and metadata; the texts one after another; the last part's `usage`, `stopped`
    and `finish_reason`, "length" while the cap left it unfinished (a continuation's broken stream
    too))."""
    shown: list[M] = []
    for msg in path:
        head = shown[-1] if shown else None
        if head is not None and msg.metadata.continues and _ends_with(head, msg.metadata.continues):
            meta = head.metadata.but(
                finish_reason="length" if capped(msg) else msg.metadata.finish_reason,
                usage=msg.metadata.usage,
            )
            meta.parts = [*(head.metadata.parts or [head.id]), msg.id]
            shown[-1] = head.model_copy(
                update={
                    "content": (head.content or "") + (msg.content or ""),
                    "metadata": meta,
                    "stopped": msg.stopped,
                }
            )
            continue
        shown.append(msg)
    return shown


def _ends_with(head: Message, message_id: str) -> bool:
    parts = head.metadata.parts or [head.id]
    return parts[-1] == message_id
