"""Context compression: older turns become one summary message; recent turns stay verbatim.

`compress_context()` is a function from a context to a new context plus the model calls it needs.
The context is cut into turns (a user message and everything up to the next one); tool calls and
their results always stay in one piece. Earlier summaries are folded into the new one. When the
text to summarise is longer than the summariser's input cap it is summarised in chunks, each chunk
folded into the summary so far — never truncated. If the model fails, the exception propagates and
the caller keeps the old context: there is never a placeholder summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from navi import prompts
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.messages import Message
from navi.llm.tokens import estimate_messages_tokens

ARGS_PREVIEW = 120
RESULT_PREVIEW = 300
SUMMARY_PREFIX = "[Summary of the earlier conversation]"


@dataclass
class CompressionResult:
    context: list[Message]
    summary: Message
    summarized: int
    kept: int
    calls: int

    @property
    def messages_before(self) -> int:
        return self.summarized + self.kept

    @property
    def messages_after(self) -> int:
        return len(self.context)


def _starts_turn(msg: Message) -> bool:
    return msg.role == "user" and not msg.is_summary and not msg.metadata.get("synthetic")


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


def _clip(text: str, limit: int) -> str:
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
                lines.append(f"→ {call.name}({_clip(args, ARGS_PREVIEW)})")
        elif msg.role == "tool":
            status = "failed" if msg.metadata.get("status") == "error" else "returned"
            lines.append(f"← {msg.name or 'tool'} {status}: {_clip(msg.content or '', RESULT_PREVIEW)}")
    return lines


def take_chunk(lines: list[str], budget: int) -> tuple[str, list[str]]:
    """The longest run of whole lines that fits `budget` characters, and what is left.

    A single line longer than the budget is split: its first part now, the rest next time.
    """
    if len(lines[0]) > budget:
        return lines[0][:budget], [lines[0][budget:], *lines[1:]]
    size = 0
    count = 0
    for line in lines:
        if size + len(line) + (1 if count else 0) > budget:
            break
        size += len(line) + (1 if count else 0)
        count += 1
    return "\n".join(lines[:count]), lines[count:]


async def summarize(
    lines: list[str],
    llm: LLMBackend,
    model: str,
    *,
    temperature: float,
    max_input_chars: int,
) -> tuple[str, int]:
    """Summarise `lines`, in chunks when they exceed the cap. Returns (summary, model calls)."""
    instructions = prompts.load("summary")
    summary = ""
    calls = 0
    remaining = [line for line in lines if line]
    while remaining:
        head = f"Summary so far (merge it into your answer):\n{summary}\n\n" if summary else ""
        # The cap bounds each call's input; a long running summary may squeeze the history part to
        # half the cap, never less, so the work always moves forward.
        chunk, remaining = take_chunk(remaining, max(max_input_chars // 2, max_input_chars - len(head)))
        result = await llm.complete(
            [Message.system(instructions), Message.user(f"{head}Conversation to summarise:\n\n{chunk}")],
            CallOptions(model=model, temperature=temperature, think=False),
        )
        calls += 1
        text = result.text.strip()
        if not text:
            raise ValueError("the model returned an empty summary")
        summary = text
    return summary, calls


async def compress_context(
    context: Sequence[Message],
    llm: LLMBackend,
    model: str,
    *,
    keep_recent: int,
    temperature: float = 0.3,
    max_input_chars: int = 12_000,
) -> CompressionResult | None:
    """Summarise all but the last `keep_recent` turns. None when there is nothing to summarise."""
    to_summarize, to_keep = partition(context, keep_recent)
    if not to_summarize or (len(to_summarize) == 1 and to_summarize[0].is_summary):
        return None
    text, calls = await summarize(
        format_messages(to_summarize), llm, model, temperature=temperature, max_input_chars=max_input_chars
    )
    summary = Message.user(
        f"{SUMMARY_PREFIX}\n{text}",
        is_summary=True,
        metadata={
            "messages_summarized": len(to_summarize),
            "tokens_before": estimate_messages_tokens(to_summarize),
            "summary_calls": calls,
        },
    )
    return CompressionResult(
        context=[summary, *to_keep],
        summary=summary,
        summarized=len(to_summarize),
        kept=len(to_keep),
        calls=calls,
    )
