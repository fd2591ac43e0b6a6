"""PDF, through PDFium (pypdfium2): each page's text layer is a Section at its page number, under
the bookmarks (the outline) that start on or before it. Navi does no OCR: a page without a text
layer is named in a warning, and a PDF with none is refused."""

from __future__ import annotations

import re

from navi.documents.base import Extracted, ExtractionError, Place, Section
from navi.documents.extract.common import Budget, clean

# A table of contents' dot leaders (". . . . . 7"): one ellipsis, not a hundred dots to index.
_LEADER = re.compile(r"(?:\. ?){4,}")


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        code = getattr(error, "err_code", None)
        if code == 4:  # FPDF_ERR_PASSWORD
            raise ExtractionError(
                "encrypted", "the PDF is protected by a password; remove the password and send it again"
            ) from None
        if code == 5:  # FPDF_ERR_SECURITY
            raise ExtractionError("encrypted", "the PDF uses an encryption PDFium cannot open") from None
        raise ExtractionError(
            "corrupt", "the PDF is damaged or cut short; PDFium could not open it"
        ) from None
    try:
        pages = len(document)
        budget.check_pages(pages)
        outline = _outline(document, pages)
        title = (document.get_metadata_value("Title") or "").strip() or None
        sections: list[Section] = []
        empty: list[int] = []
        for index in range(pages):
            if budget.full:
                break
            page = document[index]
            textpage = page.get_textpage()
            # PDFium marks a hyphen it joined at a line's end with \x02.
            text = clean(_LEADER.sub(" … ", textpage.get_text_bounded().replace("\x02", "")))
            textpage.close()
            page.close()
            if text:
                place = Place(page=index + 1, headings=outline.get(index, ()))
                sections.append(Section(budget.take(text), place))
            else:
                empty.append(index + 1)
            budget.progress(index + 1, pages)
    finally:
        document.close()
    warnings: list[str] = []
    if pages and len(empty) == pages:
        raise ExtractionError(
            "no_text",
            "the PDF has no text layer (a scanned PDF without a text layer; Navi does no OCR): "
            "run it through OCR first (e.g. ocrmypdf) and send it again",
        )
    if empty:
        warnings.append(
            f"{_pages(empty)} {'has' if len(empty) == 1 else 'have'} no text layer "
            "(scanned? Navi does no OCR)"
        )
    if b"%%EOF" not in data[-2048:]:
        warnings.append("the PDF looks cut short (no %%EOF at its end): pages may be missing")
    return Extracted("pdf", sections, pages=pages, title=title, warnings=warnings)


def _outline(document: object, pages: int) -> dict[int, tuple[str, ...]]:
    """page index → the heading path of the last bookmark starting on or before it."""
    starts: list[tuple[int, tuple[str, ...]]] = []
    path: list[str] = []
    try:
        for bookmark in document.get_toc(max_depth=8):  # type: ignore[attr-defined]
            level = bookmark.level
            path = [*path[:level], " ".join((bookmark.get_title() or "").split())]
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            if index is not None and 0 <= index < pages:
                starts.append((index, tuple(p for p in path if p)))
    except Exception:  # a damaged outline is no reason to lose the text
        return {}
    starts.sort(key=lambda s: s[0])  # stable: bookmarks of one page keep their order
    result: dict[int, tuple[str, ...]] = {}
    current: tuple[str, ...] = ()
    position = 0
    for index in range(pages):
        while position < len(starts) and starts[position][0] <= index:
            current = starts[position][1]
            position += 1
        if current:
            result[index] = current
    return result


def _pages(numbers: list[int]) -> str:
    """[1, 2, 3, 7] → "pages 1-3, 7"."""
    runs: list[str] = []
    start = previous = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == previous + 1:
            previous = n
            continue
        runs.append(f"{start}" if start == previous else f"{start}-{previous}")
        if n is not None:
            start = previous = n
    return ("page " if len(numbers) == 1 else "pages ") + ", ".join(runs)
