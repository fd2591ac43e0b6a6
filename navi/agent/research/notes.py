"""Research notes: lines of facts, each ending with the numbers of the sources that say it.

A notes call answers for one source; its lines are tagged with that source's number whatever
numbers the model wrote (it saw one source). When the notes outgrow their budget they are
condensed by a model call, whose lines keep only numbers of sources read; when that answer is
unusable (empty, no valid number, not shorter) the notes are cut mechanically instead — each
source keeps its first lines, in turn — so the notes never outgrow the window."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from navi.llm.tokens import estimate_tokens

_TAG = re.compile(r"\[(\d{1,3})\]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
LINE_MAX = 400  # characters of one note line


def tags(text: str) -> list[int]:
    return [int(n) for n in _TAG.findall(text)]


def untagged(text: str) -> str:
    return " ".join(_TAG.sub("", text).split())


def of_source(reply: str, n: int, most: int) -> list[str]:
    """A notes call's answer as note lines of source `n` (none for NONE)."""
    if reply.strip().upper().startswith("NONE"):
        return []
    lines: list[str] = []
    for raw in reply.splitlines():
        text = untagged(_BULLET.sub("", raw))
        if len(text) < 3 or text.upper() == "NONE":
            continue
        lines.append(f"- {text[:LINE_MAX]} [{n}]")
        if len(lines) >= most:
            break
    return lines


def condensed(reply: str, known: Collection[int]) -> list[str]:
    """A condensing call's answer: its lines that keep at least one number of a source read, the
    other numbers taken out."""
    lines: list[str] = []
    for raw in reply.splitlines():
        valid = list(dict.fromkeys(n for n in tags(raw) if n in known))
        text = untagged(_BULLET.sub("", raw))
        if valid and len(text) >= 3:
            lines.append(f"- {text[:LINE_MAX]} " + "".join(f"[{n}]" for n in valid))
    return lines


def size(lines: Sequence[str]) -> int:
    return estimate_tokens("\n".join(lines))


def trimmed(lines: Sequence[str], budget: int) -> list[str]:
    """The notes within `budget` tokens, cut without a model: each source's lines in turn, first
    lines first, in the original order."""
    by_source: dict[int, list[int]] = {}
    for i, line in enumerate(lines):
        found = tags(line)
        by_source.setdefault(found[-1] if found else 0, []).append(i)
    kept: set[int] = set()
    used = 0
    depth = 0
    while True:
        added = False
        for indexes in by_source.values():
            if depth < len(indexes):
                cost = estimate_tokens(lines[indexes[depth]]) + 1
                if used + cost <= budget:
                    kept.add(indexes[depth])
                    used += cost
                    added = True
        if not added:
            return [line for i, line in enumerate(lines) if i in kept]
        depth += 1
