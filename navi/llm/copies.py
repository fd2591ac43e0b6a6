"""Whether a text a model wrote copies the conversation it was asked about.

A summary that writes the conversation out again, or carries most of it back, is no summary; one
that quotes facts, names, numbers and identifiers word for word is a good one. So copying is judged
in runs of whole tokens over the whole text against the whole conversation (`copy_problem`), and a
speaker-labelled line counts as the transcript continued only when the answer reads as a dialogue
or the line is mostly copied (`transcript_lines`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

# Copying is judged in runs of whitespace-separated tokens: an identifier, path, address or number
# is one token however much punctuation it holds, so a summary that keeps `FACT:blue_door_42` or
# `/etc/cron.d/nas-backup` word for word copies nothing; six tokens in a row as the conversation
# has them are its prose written out again.
COPY_RUN = 6
# Below this many copied tokens, shares say nothing: a short summary is judged by the other checks.
MIN_TOKENS_FOR_COPY = 12
COPY_SHARE = 0.8  # of the summary in copied runs: the conversation written out again
CARRY_SHARE = 0.5  # of the conversation in the summary's copied runs: most of it carried back
_OUTER_PUNCTUATION = "".join(sorted(set(string.punctuation) | set("“”‘’«»…→←•–—")))
_TRANSCRIPT_LINE = re.compile(
    r"^(?:(user|assistant|person|plan)\s*:|earlier summary\s*:|[→←])", re.IGNORECASE
)


def prose_tokens(text: str) -> list[str | None]:
    """`text` as whitespace-separated tokens, lower-cased, outer punctuation trimmed. A token that
    is only punctuation (a bullet, a dash, an arrow) is None: a break no copied run crosses."""
    out: list[str | None] = []
    for raw in text.lower().split():
        token = raw.strip(_OUTER_PUNCTUATION)
        out.append(token or None)
    return out


def copied_runs(written: Sequence[str | None], conversation: str) -> list[bool]:
    """Which of the `written` tokens lie in a run of `COPY_RUN` or more that the conversation has
    word for word."""
    known = _runs(conversation)
    copied = [False] * len(written)
    for i in range(len(written) - COPY_RUN + 1):
        run = tuple(written[i : i + COPY_RUN])
        if None not in run and run in known:
            copied[i : i + COPY_RUN] = [True] * COPY_RUN
    return copied


def _runs(text: str) -> set[tuple[str | None, ...]]:
    said = [t for t in prose_tokens(text) if t is not None]  # an arrow or a dash joins what it joins
    return {tuple(said[i : i + COPY_RUN]) for i in range(len(said) - COPY_RUN + 1)}


def copy_problem(text: str, conversation: str) -> str | None:
    """Why `text` is a copy of `conversation` (None when it is not): mostly the conversation's
    prose written out again, or most of the conversation carried back. Judged on the whole text
    against the whole conversation: facts, names, numbers and identifiers quoted exactly are none."""
    written = prose_tokens(text)
    copied = sum(copied_runs(written, conversation))
    if copied < MIN_TOKENS_FOR_COPY:
        return None
    said = sum(t is not None for t in written)
    source = sum(t is not None for t in prose_tokens(conversation))
    if copied >= COPY_SHARE * said or copied >= CARRY_SHARE * source:
        return "copied the conversation"
    return None


def transcript_lines(lines: list[str], conversation: str) -> list[bool]:
    """Which lines continue the transcript rather than note something about it.

    A speaker-labelled line does when the answer reads as a dialogue (the model continuing the
    transcript, as SmolLM2-135M does), or when most of it is copied from the conversation. Lines
    without a label are judged with the whole answer (`copy_problem`), not one by one.
    """
    labelled = [_TRANSCRIPT_LINE.match(line) for line in lines]
    speakers = {m.group(1).lower() for m in labelled if m is not None and m.group(1)}
    dialogue = len(speakers) >= 2
    # Copied runs may span lines (consecutive messages written out again): judged on the whole.
    per_line = [prose_tokens(line) for line in lines]
    flags = copied_runs([t for line in per_line for t in line], conversation) if conversation else []
    out = []
    start = 0
    for line_tokens, label in zip(per_line, labelled, strict=True):
        mine = flags[start : start + len(line_tokens)]
        start += len(line_tokens)
        if label is None:
            out.append(False)
        else:
            out.append(dialogue or (bool(mine) and sum(mine) * 2 >= len(line_tokens)))
    return out
