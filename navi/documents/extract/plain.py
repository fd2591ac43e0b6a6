"""Text kinds: plain text (one section; the chunker cuts it at paragraphs), Markdown (sections
under the heading path of its # and underlined headings, fenced code left alone) and CSV/TSV
(rows at their cell ranges, like a sheet)."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator

from navi.documents.base import Extracted, Section
from navi.documents.extract.common import Budget, HeadingSections, Row, clean, decode_text, row_sections
from navi.documents.extract.sniff import extension

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    text = decode_text(data)
    if kind == "markdown":
        return _markdown(text, budget)
    if kind == "csv":
        return _csv(text, name, budget)
    body = budget.take(clean(text))
    return Extracted("text", [Section(body)] if body else [], pages=0)


def _markdown(text: str, budget: Budget) -> Extracted:
    out = HeadingSections(budget)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    paragraph: list[str] = []
    fence: str | None = None
    title: str | None = None

    def flush() -> None:
        if paragraph:
            out.paragraph("\n".join(paragraph))
            paragraph.clear()

    for count, line in enumerate(lines):
        if count % 5000 == 4999:
            budget.check_time()
        match = _FENCE.match(line)
        if fence is not None:  # a fenced code block is one paragraph, its # lines no headings
            paragraph.append(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
                flush()
            continue
        if match:
            flush()
            fence = match.group(1)
            paragraph.append(line)
            continue
        heading = _ATX.match(line)
        if heading:
            flush()
            out.heading(len(heading.group(1)), heading.group(2) or "")
            title = title or (heading.group(2) if len(heading.group(1)) == 1 else None)
            continue
        setext = _SETEXT.match(line)
        if setext and len(paragraph) == 1 and paragraph[0].strip():
            level = 1 if setext.group(1)[0] == "=" else 2
            line_text = paragraph.pop()
            out.heading(level, line_text)
            title = title or (line_text.strip() if level == 1 else None)
            continue
        if not line.strip():
            flush()
        else:
            paragraph.append(line)
    flush()
    return Extracted("markdown", out.done(), pages=0, title=title)


def _csv(text: str, name: str, budget: Budget) -> Extracted:
    if extension(name) == "tsv":
        delimiter = "\t"
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    csv.field_size_limit(max(budget.limits.max_chars, 131072))
    sections = list(row_sections(_rows(text, delimiter), budget, None))
    return Extracted("csv", sections, pages=0)


def _rows(text: str, delimiter: str) -> Iterator[Row]:
    for number, row in enumerate(csv.reader(text.splitlines(), delimiter=delimiter), start=1):
        cells = [(column, value.strip()) for column, value in enumerate(row, start=1) if value.strip()]
        if cells:
            yield number, cells
