"""PPTX, through python-pptx: a Section per slide at its number, its title as the heading; the
text of its shapes (groups and tables included) in order, then the speaker notes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from navi.documents.base import Extracted, Place, Section
from navi.documents.extract.common import Budget, clean, open_zip


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    import io

    import pptx

    open_zip(data, budget.limits, "PPTX").close()
    presentation = pptx.Presentation(io.BytesIO(data))
    slides = list(presentation.slides)
    budget.check_pages(len(slides), "slides")
    sections: list[Section] = []
    first_title: str | None = None
    for number, slide in enumerate(slides, start=1):
        title_shape = slide.shapes.title
        title = (
            " ".join(title_shape.text_frame.text.split())
            if title_shape is not None and title_shape.has_text_frame
            else ""
        )
        parts = [t for t in (clean(text) for text in _texts(slide.shapes)) if t]
        if slide.has_notes_slide:
            notes = clean(
                slide.notes_slide.notes_text_frame.text if slide.notes_slide.notes_text_frame else ""
            )
            if notes:
                parts.append(f"Notes: {notes}")
        text = budget.take("\n\n".join(parts))
        if text:
            sections.append(Section(text, Place(slide=number, headings=(title,) if title else ())))
        first_title = first_title or title or None
        budget.progress(number, len(slides))
    doc_title = (presentation.core_properties.title or "").strip() or first_title
    return Extracted("pptx", sections, pages=len(slides), title=doc_title)


def _texts(shapes: Any, depth: int = 0) -> Iterator[str]:
    for shape in shapes:
        if depth < 20 and getattr(shape, "shape_type", None) == 6:  # MSO_SHAPE_TYPE.GROUP
            yield from _texts(shape.shapes, depth + 1)
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                yield " | ".join(" ".join(c.text.split()) for c in row.cells if c.text.strip())
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield shape.text_frame.text
