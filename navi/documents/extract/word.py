"""DOCX, through python-docx: paragraphs and tables in body order; a paragraph styled as a
heading ("Heading 1"…, "Title", or any style with an outline level, which is how localized heading
styles say it) opens a section whose place carries the heading path."""

from __future__ import annotations

import re
from typing import Any

from navi.documents.base import Extracted
from navi.documents.extract.common import Budget, HeadingSections, open_zip

_HEADING = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    import io

    import docx

    open_zip(data, budget.limits, "DOCX").close()
    document = docx.Document(io.BytesIO(data))
    out = HeadingSections(budget)
    first_title: str | None = None
    for count, block in enumerate(document.iter_inner_content()):
        if count % 500 == 499:
            budget.check_time()
        if budget.full:
            break
        if hasattr(block, "rows"):  # a table: a row a line, cells joined by " | "
            out.paragraph("\n".join(_row_text(row) for row in block.rows))
            continue
        text = block.text
        level = _level(block)
        if level is None:
            out.paragraph(text)
        else:
            out.heading(level, text)
            if level == 0 and first_title is None:
                first_title = " ".join(text.split()) or None
    sections = out.done()
    title = (document.core_properties.title or "").strip() or first_title
    return Extracted("docx", sections, pages=0, title=title)


def _level(paragraph: Any) -> int | None:
    """0 for a Title, n for "Heading n" (or outline level n-1), None for body text."""
    style = paragraph.style
    seen = 0
    while style is not None and seen < 10:
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 0
        match = _HEADING.match(name)
        if match:
            return int(match.group(1))
        outline = style.element.find(f"{_W}pPr/{_W}outlineLvl")
        if outline is not None:
            value = outline.get(f"{_W}val")
            if value is not None and value.isdigit() and int(value) < 9:
                return int(value) + 1
        style = style.base_style
        seen += 1
    direct = paragraph._p.find(f"{_W}pPr/{_W}outlineLvl")
    if direct is not None:
        value = direct.get(f"{_W}val")
        if value is not None and value.isdigit() and int(value) < 9:
            return int(value) + 1
    return None


def _row_text(row: Any) -> str:
    cells: list[str] = []
    previous = None
    for cell in row.cells:
        if cell._tc is previous:  # a merged cell is listed once per column it spans
            continue
        previous = cell._tc
        text = " ".join(cell.text.split())
        if text:
            cells.append(text)
    return " | ".join(cells)
