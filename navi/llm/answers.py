"""What a model's answer is worth: loops, echoes of the request, copies of the conversation, cuts.

Small models fail in ways a status code does not show: they repeat the instructions, copy the
conversation out again, loop one line until the token cap, write headings with nothing under them.
Every part that asks a model for text it keeps (summaries, session names, the memory profile) judges
the answer with these before using it. Words are compared case-folded, bullets and numbering aside.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from navi.llm.copies import transcript_lines

ECHO_SHARE = 0.5  # an answer sharing this much with the instructions plays them back

_WORD = re.compile(r"[^\W_]+")
_BULLET = re.compile(r"^\s*(?:[-*•+]\s*|\d+[.)]\s+)+")
_HEADING = re.compile(r"^(?:#{1,6}\s*.*|\*\*[^*]+\*\*\s*:?|__[^_]+__\s*:?|[^:]{1,60}:)$")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _grams(ws: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)]


def overlap_share(text: str, reference: str, n: int = 3) -> float:
    """Which share of `text`'s word n-grams also occur in `reference` (0.0 for a text under n words)."""
    grams = _grams(words(text), n)
    if not grams:
        return 0.0
    known = set(_grams(words(reference), n))
    return sum(gram in known for gram in grams) / len(grams)


def repeats_itself(text: str) -> bool:
    """A model stuck in a loop: one line again and again, or the same phrase going round."""
    lines = [" ".join(words(_BULLET.sub("", line))) for line in text.splitlines()]  # "1." ≠ "2." aside
    lines = [line for line in lines if line.count(" ") >= 1]
    counts = Counter(lines)
    if counts and (max(counts.values()) >= 3 or (len(lines) >= 4 and len(counts) * 2 <= len(lines))):
        return True
    grams = _grams(words(text), 4)
    return len(grams) >= 20 and len(set(grams)) * 2 < len(grams)


def echo_problem(text: str, instructions: str, conversation: str = "") -> str | None:
    """Why `text` is no answer but a reflection of the request (None when it says something).

    Catches loops, the instructions repeated (whole, or line by line), the transcript of the
    `conversation` continued, and headings with nothing under them. What counts as an instruction
    line is judged against `instructions` itself, so it keeps working when a prompt is reworded.
    """
    if repeats_itself(text):
        return "repeated the same line"
    reference_lines = {" ".join(words(line)) for line in instructions.splitlines()} - {""}
    lines = [_BULLET.sub("", raw.strip()).strip() for raw in text.splitlines()]
    lines = [line for line in lines if words(line)]
    echoed = copied = content = 0
    for line, is_copy in zip(lines, transcript_lines(lines, conversation), strict=True):
        count = len(words(line))
        instruction = " ".join(words(line)) in reference_lines
        if instruction or (count >= 3 and overlap_share(line, instructions) >= 0.6):
            echoed += count
        elif is_copy:
            copied += count
        elif not _HEADING.match(line):
            content += count
    if echoed + copied and echoed + copied >= content:  # at least half of what it says
        return "repeated the instructions" if echoed >= copied else "copied the conversation"
    if overlap_share(text, instructions) >= ECHO_SHARE:
        return "repeated the instructions"
    if content < 2:
        return "had headings with nothing under them"
    return None


def long_numbers(text: str) -> set[str]:
    """Numbers that are identifiers rather than counts: addresses, versions, times, dates, codes."""
    return set(re.findall(r"\d+(?:[.:/-]\d+)+|\d{3,}", text))


def trim_cut_off(text: str) -> str:
    """What is left of an answer cut by the token cap: its complete lines, else complete sentences."""
    text = text.rstrip()
    if "\n" in text:
        return text.rsplit("\n", 1)[0].rstrip()
    end = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
    return text[: end + 1] if end > 0 else ""
