"""Context compression: older turns become one summary message; recent turns stay verbatim.

`compress_context()` is a function from a context to a new context plus the model calls it needs.
The context is cut into turns (a user message and everything up to the next one); tool calls and
their results always stay in one piece (navi/agent/compression/transcript.py). Earlier summaries are folded
into the new one. When the text to summarise is larger than the summariser's input cap (in tokens,
as `navi.llm.tokens` estimates them) it is summarised in chunks, each chunk folded into the summary
so far — never truncated. Each call is capped by `max_tokens`.

Small models fail here in ways a status code does not show: they answer nothing, repeat the
instructions, copy the conversation, loop one line until the cap. A summary is therefore checked
before it replaces anything (`summary_problem`); a bad one is retried once with a nudge, and a
second bad one raises `SummaryRejected`. A failing model call propagates as it is. Either way the
caller keeps the old context: there is never a placeholder summary. A copy is judged on the whole
summary against the whole conversation (`copy_problem`, navi/llm/copies.py): quoting facts and
identifiers word for word is what a good summary does.

`shrank()` and `FutileCompressions` decide whether a compression helped: one that did not make the
context smaller is neither stored nor announced, nor tried again until the context has grown.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from navi import prompts
from navi.agent.compression.transcript import SUMMARY_PREFIX, format_messages, partition, take_chunk
from navi.agent.compression.transcript import split_turns as split_turns
from navi.llm import tokens
from navi.llm.answers import echo_problem, long_numbers, repeats_itself, trim_cut_off
from navi.llm.base import CallOptions, LLMBackend
from navi.llm.chunks import Completion, CompletionBuilder, StreamFinal, TextDelta, Usage
from navi.llm.copies import copy_problem
from navi.llm.errors import LLMError
from navi.llm.messages import Message, ToolSpec
from navi.llm.meta import MessageMeta
from navi.sessions.state import COMPRESSION, SessionState, SessionStateStore

SO_FAR_LABEL = "Summary so far (keep what still matters):"
CONVERSATION_LABEL = "Conversation to summarise:"
# Said on the retry, after the conversation, where even a small model still reads it.
NUDGES = {
    "was empty": "Write the notes now.",
    "was not shorter than the conversation": "Write fewer and shorter lines.",
    "was cut off by the token limit": "Write fewer and shorter lines.",
    "repeated the instructions": "Do not repeat the instructions: write notes about the conversation.",
    "had headings with nothing under them": "Write the facts themselves, not headings.",
    "copied the conversation": "Do not copy the conversation: write short notes in your own words.",
    "repeated the same line": "Write each note once.",
    "changed numbers from the conversation": "Copy every number exactly as it is written.",
    "called a tool": "Do not call tools: write the notes as text.",
}
RETRY_NOTE = "Your last answer could not be used: it {reason}. {nudge}"
SUMMARY_FLOOR = 128  # the least a summary call may write, however little it summarises
ECHO_SHARE = 0.5


class SummaryRejected(LLMError):
    """The model answered twice, but neither answer was a summary to trust. Nothing was replaced.

    Like every `LLMError` message, `str()` is meant for the user; it reads as the reason inside
    "The earlier conversation could not be summarised (…)".
    """

    kind = "summary_rejected"

    def __init__(self, reason: str, *, model: str = "", tries: int = 2) -> None:
        again = ", twice in a row" if tries == 2 else ""
        super().__init__(f"the model's summary {reason}{again}", model=model)
        self.reason = reason


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


def shrank(before: Sequence[Message], after: Sequence[Message]) -> bool:
    """Whether a compression made the context smaller: fewer messages, or fewer (estimated) tokens.

    Condensing a context that is only a summary and the latest request gives the same context
    back: that is no compression, and nothing may be stored or announced for it.
    """
    if len(after) < len(before):
        return True
    return tokens.estimate_messages_tokens(after) < tokens.estimate_messages_tokens(before)


class FutileCompressions:
    """Sessions whose context a compression pass could not make smaller, and its size then.

    A pass is not run on such a context again until it has grown past that size (a new message,
    an answer, a tool result): the same pass on the same context would only give it back again.
    The size is kept in the session's state (`COMPRESSION`), so the worker that runs its next turn
    knows it too; `persistent` says whether that is a stored session's (navi/sessions/state.py).
    """

    def __init__(self, state: SessionState | None = None) -> None:
        self.state = state if state is not None else SessionState()

    async def allows(self, session_id: str, context: Sequence[Message], persistent: bool = True) -> bool:
        size = (await self.state.of(persistent).get(session_id, COMPRESSION) or {}).get("futile")
        return size is None or tokens.estimate_messages_tokens(context) > size

    async def failed(self, session_id: str, context: Sequence[Message], persistent: bool = True) -> None:
        size = tokens.estimate_messages_tokens(context)
        await note(self.state.of(persistent), session_id, futile=size)

    async def forget(self, session_id: str, persistent: bool = True) -> None:
        """A pass helped: judge the next one afresh."""
        await note(self.state.of(persistent), session_id, futile=None)


async def note(store: SessionStateStore, session_id: str, **found: object) -> None:
    """Record what compression found about a session (`COMPRESSION`; a None value drops the key)."""

    def edit(record: dict[str, object] | None) -> tuple[dict[str, object] | None, None]:
        new = {**(record or {}), **found}
        new = {key: value for key, value in new.items() if value is not None}
        return new or None, None

    await store.change(session_id, COMPRESSION, edit)


def summary_problem(
    summary: str, source: str, conversation: str, instructions: str, *, numbers_from: str | None = None
) -> str | None:
    """Why `summary` must not replace `source` (None when it may).

    `source` is everything being summarised (summary so far and conversation), `conversation` the
    transcript part alone; `instructions` is what the model was told, to recognise an echo of it;
    `numbers_from` all the model saw, when that is more than `source` (a summary that extends the
    conversation's own prompt also sees the turns it keeps).
    """
    if not summary.strip():
        return "was empty"
    problem = echo_problem(summary, instructions, conversation)
    if problem is not None:
        return problem
    problem = copy_problem(summary, conversation)
    if problem is not None:
        return problem
    # "192.168.1.10" came back as "192.168.1.1.10"
    if long_numbers(summary) - long_numbers(source if numbers_from is None else numbers_from):
        return "changed numbers from the conversation"
    if tokens.estimate_tokens(summary) >= tokens.estimate_tokens(source):
        return "was not shorter than the conversation"
    return None


# --- Summarising ----------------------------------------------------------------------------------
SUMMARY_IMAGES = 3  # the newest images of the summarised messages a model that reads images sees


def summary_images(messages: Sequence[Message], limit: int = SUMMARY_IMAGES) -> list[str]:
    """The newest `limit` images attached to user messages among `messages`, oldest first: what a
    summary call shows a model that reads images (the transcript says `[n image(s)]` there)."""
    found = [image for m in messages if m.role == "user" and not m.is_summary for image in m.images]
    return found[-limit:] if limit > 0 else []


def summary_request(
    instructions: str, summary: str, chunk: str, note: str = "", images: Sequence[str] = ()
) -> list[Message]:
    parts = [f"{SO_FAR_LABEL}\n{summary}"] if summary else []
    parts.append(f"{CONVERSATION_LABEL}\n\n{chunk}")
    if note:
        parts.append(note)
    return [Message.system(instructions), Message.user("\n\n".join(parts), images=list(images))]


async def summarize_once(
    llm: LLMBackend,
    options: CallOptions,
    instructions: str,
    summary: str,
    chunk: str,
    images: Sequence[str] = (),
) -> tuple[str, int]:
    """Fold one chunk into `summary`: one call, a second one if the first answer was bad.

    Returns (new summary, calls). Raises `SummaryRejected` when both answers were bad. `images`
    go with the request; numbers the summary read off them are not "changed numbers".
    """

    async def call(note: str) -> Completion:
        return await summary_completion(
            llm, summary_request(instructions, summary, chunk, note, images), options
        )

    # The request's own wording counts as instructions: a model may echo the labels too.
    return await attempts(
        call,
        source=f"{summary}\n{chunk}" if summary else chunk,
        conversation=chunk,
        instructions=f"{instructions}\n{SO_FAR_LABEL}\n{CONVERSATION_LABEL}",
        model=options.model,
        images=bool(images),
    )


async def summary_completion(
    llm: LLMBackend,
    messages: Sequence[Message],
    options: CallOptions,
    tools: Sequence[ToolSpec] | None = None,
) -> Completion:
    """A summary call, read until it ends or until it goes round in a loop: then the stream is
    closed at once (the server stops writing; a small model on a CPU otherwise loops to the cap for
    tens of seconds) and the answer ends as cut off, which `attempts` judges a loop."""
    builder = CompletionBuilder()
    stream = llm.stream_complete(messages, options, tools)
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for chunk in stream:
            builder.add(chunk)
            if isinstance(chunk, TextDelta) and "\n" in chunk.text and repeats_itself("".join(builder.text)):
                builder.final = StreamFinal(finish_reason="length", usage=Usage(estimated=True))
                break
    return builder.build()


async def attempts(
    call: Callable[[str], Awaitable[Completion]],
    *,
    source: str,
    conversation: str,
    instructions: str,
    model: str,
    images: bool = False,
    numbers_from: str | None = None,
    tries: int = 2,
) -> tuple[str, int]:
    """A summary from `call(note)`: its first answer, or (`tries` 2) a second one asked for with a
    note saying what was wrong with the first. Returns (summary, calls); raises `SummaryRejected`
    when no answer was good. `source` is what is summarised, `conversation` its transcript part;
    `numbers_from` what the model saw, when more than `source` (numbers from there are its own)."""
    note = ""
    problem = "was empty"
    for attempt in range(1, tries + 1):
        result = await call(note)
        text = result.text.strip()
        if result.message.tool_calls:
            problem = "called a tool"
            note = RETRY_NOTE.format(reason=problem, nudge=NUDGES[problem])
            continue
        if result.finish_reason == "length":
            # Kept up to its last complete line, unless it ran into the cap going round in a loop.
            looping = repeats_itself(text)
            text = "" if looping else trim_cut_off(text)
            if not text:
                problem = "repeated the same line" if looping else "was cut off by the token limit"
                note = RETRY_NOTE.format(reason=problem, nudge=NUDGES[problem])
                continue
        echo_of = instructions + ("\n" + note if note else "")
        problem = summary_problem(text, source, conversation, echo_of, numbers_from=numbers_from) or ""
        if images and problem == "changed numbers from the conversation":
            problem = ""  # the numbers may be in the images, which the check cannot read
        if not problem:
            return text, attempt
        note = RETRY_NOTE.format(reason=problem, nudge=NUDGES[problem])
    raise SummaryRejected(problem, model=model, tries=tries)


@dataclass(frozen=True, kw_only=True)
class SummaryCall:
    """How a summary's model calls are made: the model and its temperature, the cap on each
    call's whole input (`max_input_tokens`: longer conversations are folded in chunks), the cap
    on each answer (None: none), and instructions replacing the compression prompt (archives'
    summaries; None: the compression prompt)."""

    model: str
    temperature: float
    max_input_tokens: int
    max_tokens: int | None
    instructions: str | None = None


async def summarize(
    lines: list[str], llm: LLMBackend, call: SummaryCall, *, summary: str = "", images: Sequence[str] = ()
) -> tuple[str, int]:
    """Fold `lines` into `summary` (an earlier one, or none), in chunks when they exceed the cap.

    Returns (summary, model calls). `images` go with the last chunk, which holds the newest lines
    (their room counts in every chunk's).
    """
    instructions = call.instructions or prompts.load("summary")
    max_input_tokens, max_tokens = call.max_input_tokens, call.max_tokens
    options = CallOptions(
        model=call.model, temperature=call.temperature, think=False, max_tokens=max_tokens, kind="summary"
    )
    longest_note = max((RETRY_NOTE.format(reason=r, nudge=n) for r, n in NUDGES.items()), key=len)
    calls = 0
    remaining = [line for line in lines if line]
    while remaining:
        # The cap bounds each call's whole input (instructions, summary so far, chunk, a retry's
        # note). A long running summary may squeeze the conversation part to half the cap, never
        # less, so the work always moves forward.
        fixed = tokens.estimate_messages_tokens(
            summary_request(instructions, summary, "", longest_note, images)
        )
        budget = max(max_input_tokens // 2, max_input_tokens - fixed - 2)
        chunk, remaining = take_chunk(remaining, budget)
        last = () if remaining else images
        # A summary shorter than half of what it folds in: a model that loops or copies stops there
        # instead of writing to the full cap (a small model on a CPU took 25 s a call for that).
        source = tokens.estimate_tokens(f"{summary}\n{chunk}")
        cap = None if max_tokens is None else min(max_tokens, max(SUMMARY_FLOOR, source // 2))
        options = dataclasses.replace(options, max_tokens=cap)
        summary, used = await summarize_once(llm, options, instructions, summary, chunk, last)
        calls += used
    return summary, calls


async def compress_context(
    context: Sequence[Message],
    llm: LLMBackend,
    model: str,
    *,
    keep_recent: int,
    temperature: float = 0.3,
    max_input_tokens: int = 3_000,
    max_tokens: int | None = 768,
    images: int = 0,
) -> CompressionResult | None:
    """Summarise all but the last `keep_recent` turns. None when there is nothing to summarise.

    `images`: how many of the newest images of the summarised user messages the summary call sees
    (0, for a model that reads no images: the transcript only says they were there).
    Raises `SummaryRejected` (or the model's `LLMError`); the caller then keeps `context` as it was.
    """
    to_summarize, to_keep = partition(context, keep_recent)
    if nothing_to_fold(to_summarize):
        return None
    # An earlier summary is the summary so far, not conversation: copying from it is no fault.
    earlier = 0
    while earlier < len(to_summarize) and to_summarize[earlier].is_summary:
        earlier += 1
    so_far = "\n".join((m.content or "").removeprefix(SUMMARY_PREFIX).strip() for m in to_summarize[:earlier])
    call = SummaryCall(
        model=model, temperature=temperature, max_input_tokens=max_input_tokens, max_tokens=max_tokens
    )
    text, calls = await summarize(
        format_messages(to_summarize[earlier:]),
        llm,
        call,
        summary=so_far.strip(),
        images=summary_images(to_summarize[earlier:], images),
    )
    return summarised(text, to_summarize, to_keep, calls)


def nothing_to_fold(to_summarize: Sequence[Message]) -> bool:
    """No turns to summarise: none, or only an earlier summary."""
    return not to_summarize or (len(to_summarize) == 1 and to_summarize[0].is_summary)


def summarised(
    text: str, to_summarize: Sequence[Message], to_keep: Sequence[Message], calls: int
) -> CompressionResult:
    """The context with `text` as the summary of `to_summarize`, then the turns kept."""
    summary = Message.user(
        f"{SUMMARY_PREFIX}\n{text}",
        is_summary=True,
        metadata=MessageMeta(
            messages_summarized=len(to_summarize),
            tokens_before=tokens.estimate_messages_tokens(to_summarize),
            summary_calls=calls,
        ),
    )
    return CompressionResult(
        context=[summary, *to_keep],
        summary=summary,
        summarized=len(to_summarize),
        kept=len(to_keep),
        calls=calls,
    )
