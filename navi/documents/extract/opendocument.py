"""OpenDocument (ODT, ODS, ODP), read from the zip's content.xml with lxml — the format is plain
XML, so no library is needed (odfpy is GPL/LGPL/Apache-licensed and larger than this).

ODT: text:h (with its outline level) opens a section; paragraphs, lists and tables follow in
order. ODS: each table (sheet) as rows at their cell ranges; repeated rows and cells are expanded
only when they hold text (an empty row repeated a million times costs nothing). ODP: a section
per draw:page, its title frame as the heading."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from navi.documents.base import Extracted, ExtractionError, Place, Section
from navi.documents.extract.common import (
    Budget,
    HeadingSections,
    Row,
    clean,
    open_zip,
    read_member,
    row_sections,
)

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
}
T, TABLE, DRAW, OFFICE = (f"{{{NS[k]}}}" for k in ("text", "table", "draw", "office"))
MAX_REPEAT = 1000  # repeated rows/cells with text are expanded at most this many times


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    import lxml.etree

    archive = open_zip(data, budget.limits, kind.upper())
    what = kind.upper()
    if "META-INF/manifest.xml" in archive.namelist():
        manifest = read_member(archive, "META-INF/manifest.xml", what)
        if b"encryption-data" in manifest:
            raise ExtractionError(
                "encrypted", "the OpenDocument file is protected by a password; remove it and send it again"
            )
    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    content = lxml.etree.fromstring(read_member(archive, "content.xml", what), parser)
    title = None
    if "meta.xml" in archive.namelist():
        meta = lxml.etree.fromstring(read_member(archive, "meta.xml", what), parser)
        found = meta.find(".//dc:title", NS)
        title = " ".join((found.text or "").split()) or None if found is not None else None
    body = content.find("office:body", NS)
    if body is None:
        return Extracted(kind, [], title=title)
    if kind == "odt":
        sections, pages = _text(body, budget), 0
    elif kind == "ods":
        sections, pages = _sheets(body, budget)
    else:
        sections, pages = _slides(body, budget)
    return Extracted(kind, sections, pages=pages, title=title)


def text_of(element: Any) -> str:
    """An element's text, with ODF's spaces (text:s), tabs and line breaks; notes and annotations
    left out. (libxml2 refuses nesting deeper than 256, so the recursion is bounded.)"""
    parts: list[str] = []

    def visit(node: Any) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag == f"{T}s":
            parts.append(" " * min(int(node.get(f"{T}c", "1") or 1), 100))
        elif tag == f"{T}tab":
            parts.append("\t")
        elif tag == f"{T}line-break":
            parts.append("\n")
        elif tag not in (f"{T}note", f"{OFFICE}annotation", f"{T}tracked-changes"):
            if node.text:
                parts.append(node.text)
            for child in node:
                visit(child)
                if child.tail:
                    parts.append(child.tail)

    visit(element)
    return "".join(parts)


def _text(body: Any, budget: Budget) -> list[Section]:
    out = HeadingSections(budget)
    for count, element in enumerate(body.iter(f"{T}h", f"{T}p", f"{TABLE}table-row")):
        if count % 1000 == 999:
            budget.check_time()
        if element.tag == f"{T}h":
            out.heading(int(element.get(f"{T}outline-level", "1") or 1), text_of(element))
        elif element.tag == f"{TABLE}table-row":
            cells = [" ".join(text_of(c).split()) for c in element.findall(f"{TABLE}table-cell")]
            out.paragraph(" | ".join(c for c in cells if c))
        elif not _inside(element, (f"{TABLE}table-cell", f"{T}note", f"{OFFICE}annotation")):
            out.paragraph(text_of(element))
    return out.done()


def _inside(element: Any, tags: tuple[str, ...]) -> bool:
    parent = element.getparent()
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.getparent()
    return False


def _sheets(body: Any, budget: Budget) -> tuple[list[Section], int]:
    tables = body.findall("office:spreadsheet/table:table", NS)
    budget.check_pages(len(tables), "sheets")
    sections: list[Section] = []
    for index, table in enumerate(tables):
        sections.extend(row_sections(_rows(table), budget, table.get(f"{TABLE}name")))
        budget.progress(index + 1, len(tables))
    return sections, len(tables)


def _rows(table: Any) -> Iterator[Row]:
    number = 0
    for row in table.iter(f"{TABLE}table-row"):
        repeat = int(row.get(f"{TABLE}number-rows-repeated", "1") or 1)
        cells: list[tuple[int, str]] = []
        column = 0
        for cell in row:
            if cell.tag not in (f"{TABLE}table-cell", f"{TABLE}covered-table-cell"):
                continue
            span = int(cell.get(f"{TABLE}number-columns-repeated", "1") or 1)
            text = " ".join(clean(text_of(p)) for p in cell.findall(f"{T}p")).strip()
            if text:
                for k in range(min(span, MAX_REPEAT)):
                    cells.append((column + k + 1, text))
            column += span
        if cells:
            for k in range(min(repeat, MAX_REPEAT)):
                yield number + k + 1, cells
        number += repeat


def _slides(body: Any, budget: Budget) -> tuple[list[Section], int]:
    pages = body.findall("office:presentation/draw:page", NS)
    budget.check_pages(len(pages), "slides")
    sections: list[Section] = []
    for number, page in enumerate(pages, start=1):
        title = ""
        parts: list[str] = []
        for frame in page.iter(f"{DRAW}frame", f"{DRAW}custom-shape"):
            text = "\n".join(clean(text_of(p)) for p in frame.iter(f"{T}p", f"{T}h"))
            text = clean(text)
            if not text:
                continue
            if not title and frame.get(f"{{{NS['presentation']}}}class") == "title":
                title = " ".join(text.split())
            parts.append(text)
        text = budget.take("\n\n".join(parts))
        if text:
            sections.append(Section(text, Place(slide=number, headings=(title,) if title else ())))
        budget.progress(number, len(pages))
    return sections, len(pages)
