"""The research report: the model's text with its citations checked, the numbered list of the
sources read, and the files kept in the session's folder: the Markdown, and its PDF
(navi/files/pdf.py) beside it.

Every `[n]` of the model's text must name a source that was read and gave notes; any other is
taken out, and the report says how many were. Sources are listed in the order they were read,
each with its number, title and address; a source read that gave nothing is listed as such."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from navi.agent.research.sources import Source
from navi.files.pdf import markdown_pdf
from navi.sessions.files import claim

_CITE = re.compile(r"\[(\d{1,3})\]")
NAME_CHARS = re.compile(r"[^A-Za-z0-9._ -]+")


@dataclass(frozen=True)
class Checked:
    text: str
    cited: list[int]  # source numbers cited, in order of first citation
    dropped: int  # citations taken out: they named no source read with notes


def checked(text: str, sources: Sequence[Source]) -> Checked:
    """`text` with every citation of a source not read (or read without notes) taken out."""
    usable = {s.n for s in sources if s.notes}
    cited: list[int] = []
    dropped = 0

    def keep(match: re.Match[str]) -> str:
        nonlocal dropped
        n = int(match.group(1))
        if n in usable:
            if n not in cited:
                cited.append(n)
            return match.group(0)
        dropped += 1
        return ""

    return Checked(_CITE.sub(keep, text).strip(), cited, dropped)


def document(question: str, body: Checked, sources: Sequence[Source], plan: Sequence[str]) -> str:
    """The whole report in Markdown: the question, the model's text, the plan, the sources."""
    parts = [f"# Research: {' '.join(question.split())[:200]}", "", body.text or "(no report was written)"]
    if body.dropped:
        parts += ["", f"_{body.dropped} citation(s) naming no source read were taken out._"]
    parts += ["", "## Sub-questions", "", *(f"{i}. {q}" for i, q in enumerate(plan, 1))]
    parts += ["", "## Sources", ""]
    if not sources:
        parts.append("No source could be read.")
    for s in sources:
        parts.append(f"[{s.n}] {s.label}" + ("" if s.notes else " (read; nothing in it was used)"))
    return "\n".join(parts) + "\n"


def file_name(question: str) -> str:
    words = NAME_CHARS.sub(" ", question).split()[:6]
    return ("research " + " ".join(words)).strip()[:80].replace(" ", "-") + ".md"


def _write(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = claim(folder, name)
    if path is None:
        raise OSError(f"no free name for {name} in {folder}")
    path.write_bytes(data)
    return path


async def save(folder: Path, name: str, text: str) -> Path:
    """The report written into the session's folder under a free name (0600)."""
    return await asyncio.to_thread(_write, folder, name, text.encode("utf-8"))


async def save_pdf(folder: Path, markdown: Path, text: str, title: str) -> Path:
    """The report's PDF beside its Markdown file `markdown` (same name, `.pdf`; a free one)."""

    def make() -> Path:
        return _write(folder, markdown.with_suffix(".pdf").name, markdown_pdf(text, title=title))

    return await asyncio.to_thread(make)
