"""The conversation as turns, and as the plain text a summary call reads.

A turn is a user message and everything up to the next one; an earlier summary is a turn of its
own, and tool calls stay with their results. `partition` cuts a context into what is summarised and
the recent turns kept as they are (compression, condensing and the shortened view of old long
messages all use it). `format_messages` writes messages as one plain-text entry each, tool traffic
as compact previews; `take_chunk` cuts those entries to a summariser's input cap, never dropping
any.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from navi.llm import tokens
from navi.llm.messages import Message

ARGS_PREVIEW = 120
RESULT_PREVIEW = 300
SUMMARY_PREFIX = "[Summary of the earlier conversation]"


def _starts_turn(msg: Message) -> bool:
    return msg.role == "user" and not msg.is_summary and not msg.metadata.synthetic


def split_turns(context: Sequence[Message]) -> list[list[Message]]:
    """Group messages into turns. Leading summaries or stray messages form a turn of their own."""
    turns: list[list[Message]] = []
    for msg in context:
        if msg.role == "system":
            continue
        if not turns or _starts_turn(msg) or msg.is_summary:
            turns.append([msg])
        else:
            turns[-1].append(msg)
    return turns


def _split_current(turns: list[list[Message]]) -> tuple[list[Message], list[Message]]:
    """Inside the latest turn: keep the user's instruction and the newest tool group only."""
    current = turns[-1]
    groups: list[list[Message]] = []
    for msg in current[1:]:
        if msg.role == "assistant" or not groups:
            groups.append([msg])
        else:
            groups[-1].append(msg)
    last = groups[-1] if groups else []
    middle = [m for group in groups[:-1] for m in group]
    to_summarize = [m for turn in turns[:-1] for m in turn] + middle
    return to_summarize, [current[0], *last]


def partition(context: Sequence[Message], keep_recent: int) -> tuple[list[Message], list[Message]]:
    """(to_summarize, to_keep): the last `keep_recent` real turns are kept whole.

    A turn that is only an earlier summary never counts as a kept turn: it is folded in.
    `keep_recent=0` is the last resort when the current turn alone is too big: its instruction
    and its newest tool group stay verbatim, the work in between is summarised.
    """
    turns = split_turns(context)
    if keep_recent == 0:
        if not turns or not _starts_turn(turns[-1][0]):
            return [], list(context)
        return _split_current(turns)
    kept_turns: list[list[Message]] = []
    for turn in reversed(turns):
        if len(kept_turns) >= keep_recent or (len(turn) == 1 and turn[0].is_summary):
            break
        kept_turns.insert(0, turn)
    cut = len(turns) - len(kept_turns)
    to_summarize = [m for turn in turns[:cut] for m in turn]
    to_keep = [m for turn in kept_turns for m in turn]
    return to_summarize, to_keep


def clip(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks a cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_messages(messages: Sequence[Message]) -> list[str]:
    """One plain-text entry per message; tool traffic shown as compact previews."""
    lines: list[str] = []
    for msg in messages:
        if msg.is_summary:
            lines.append(f"Earlier summary:\n{(msg.content or '').removeprefix(SUMMARY_PREFIX).strip()}")
        elif msg.role == "user":
            suffix = f" [{len(msg.images)} image(s)]" if msg.images else ""
            lines.append(f"User: {msg.content or ''}{suffix}")
        elif msg.role == "assistant":
            if msg.content:
                lines.append(f"{'Plan' if msg.is_plan else 'Assistant'}: {msg.content}")
            for call in msg.tool_calls:
                args = (
                    json.dumps(call.arguments, ensure_ascii=False)
                    if call.raw_arguments is None
                    else call.raw_arguments
                )
                lines.append(f"→ {call.name}({clip(args, ARGS_PREVIEW)})")
        elif msg.role == "tool":
            status = "failed" if msg.metadata.status == "error" else "returned"
            lines.append(f"← {msg.name or 'tool'} {status}: {clip(msg.content or '', RESULT_PREVIEW)}")
    return lines


def _fit_prefix(text: str, budget: int) -> int:
    """Length of the longest prefix of `text` within `budget` tokens, ended at a space if one is near."""
    low, high = 1, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if tokens.estimate_tokens(text[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    space = text.rfind(" ", 0, low)
    return space + 1 if space > low // 2 else low


def take_chunk(lines: list[str], budget: int) -> tuple[str, list[str]]:
    """The longest run of whole lines that fits `budget` tokens, and what is left.

    A single line larger than the budget is split: its first part now, the rest next time.
    """
    if tokens.estimate_tokens(lines[0]) > budget:
        cut = _fit_prefix(lines[0], budget)
        return lines[0][:cut], [lines[0][cut:], *lines[1:]]
    chunk = lines[0]
    count = 1
    for line in lines[1:]:
        longer = f"{chunk}\n{line}"
        if tokens.estimate_tokens(longer) > budget:
            break
        chunk = longer
        count += 1
    return chunk, lines[count:]
