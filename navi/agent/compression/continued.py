"""A summary asked for at the end of the conversation's own prompt, where a model server cached it.

After an answer, the server that wrote it holds the whole prompt (system message, tools,
conversation, the answer) in its cache. A summary request of its own (navi/agent/compression/summary.py)
makes the server read every turn it folds again, in another slot: about a thousand tokens, tens of
seconds on a CPU. This one sends that same prompt, the same tools and options, with one more user
message: the summary instructions and where to stop. The server reads only that message.

Used after the answer (`CompressionWorker`) on servers that keep a prompt cached here, when the
window has room for the instruction and the summary; otherwise the separate request is used. The
answer is checked exactly like a separate summary's; a tool call instead of notes counts as a bad
answer. There is one attempt: a model that fails here (a very small one loses the instruction
after a long conversation and chats on) is asked in a request of its own, and is not asked here
again while the server runs (`ContextCompressor.no_continuing`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from navi import prompts
from navi.agent.compression.summary import (
    SUMMARY_FLOOR,
    CompressionResult,
    attempts,
    nothing_to_fold,
    summarised,
    summary_completion,
)
from navi.agent.compression.transcript import format_messages, partition
from navi.llm import tokens
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.chunks import Completion
from navi.llm.messages import Message, ToolSpec

STOP_BEFORE = (
    "Summarise the conversation above (with its earlier summary, if there is one) up to the "
    'user\'s message that begins "{start}", and not that message or anything after it.'
)
WHOLE = "Summarise the whole conversation above (with its earlier summary, if there is one)."
QUOTED = 60  # characters of the first kept message the instruction quotes


@dataclass(frozen=True)
class ConversationPrompt:
    """The conversation's next request as the model server has it cached after an answer: the
    messages (the answer's, then the answer), the tools and the options it was sent with, and
    the tokens the window has left after it."""

    messages: list[Message]
    tools: list[ToolSpec]
    options: CallOptions
    room: int


def instruction(to_keep: Sequence[Message]) -> str:
    """The summary instructions and where the summary stops: before the first message kept."""
    first = next((m for m in to_keep if m.role == "user" and not m.is_summary), None)
    if first is None:
        where = WHOLE
    else:
        start = " ".join((first.content or "").split())[:QUOTED]
        where = STOP_BEFORE.format(start=start)
    return f"{prompts.load('summary')}\n\n{where}"


async def compress_continuing(
    context: Sequence[Message],
    prompt: ConversationPrompt,
    llm: LLMBackend,
    *,
    keep_recent: int,
    temperature: float,
    max_tokens: int | None,
) -> CompressionResult | None:
    """Summarise all but the last `keep_recent` turns of `context` by extending `prompt`. None when
    there is nothing to summarise, or when the window has no room for the instruction and a
    summary (the caller then asks in a request of its own).

    `context` is the conversation `prompt` holds, or a compression of it whose last turns are the
    same. Raises `SummaryRejected` (or the model's `LLMError`); the caller keeps `context` then.
    """
    to_summarize, to_keep = partition(context, keep_recent)
    if nothing_to_fold(to_summarize):
        return None
    text = instruction(to_keep)
    lines = format_messages(to_summarize)
    source = "\n".join(lines)
    # A summary shorter than half of what it folds in (as a separate request's), and what fits.
    cap = max(SUMMARY_FLOOR, tokens.estimate_tokens(source) // 2)
    cap = min(cap, max_tokens or cap, prompt.room - tokens.estimate_messages_tokens([Message.user(text)]))
    if cap < SUMMARY_FLOOR:
        return None
    options = dataclasses.replace(
        prompt.options, temperature=temperature, max_tokens=cap, kind="summary", extends_conversation=True
    )

    async def call(note: str) -> Completion:
        said = f"{text}\n\n{note}" if note else text
        return await summary_completion(llm, [*prompt.messages, Message.user(said)], options, prompt.tools)

    conversation = "\n".join(format_messages([m for m in to_summarize if not m.is_summary]))
    summary, calls = await attempts(
        call,
        source=source,
        conversation=conversation,
        instructions=text,
        model=options.model,
        # The kept turns and the system message are in front of the model too.
        numbers_from="\n".join(m.content or "" for m in prompt.messages),
        images=any(m.images for m in prompt.messages),
        tries=1,  # a model that cannot summarise here gets its own request next (the caller's)
    )
    return summarised(summary, to_summarize, to_keep, calls)
