"""Markdown → PDF: a file a person keeps or sends on (a research report, a conversation).

The Markdown is parsed with markdown-it-py (CommonMark, with tables and strikethrough; raw HTML is
shown as text, never interpreted) and laid out with ReportLab's Platypus (BSD): headings,
paragraphs with bold, italic, code and links, nested lists, block quotes, code blocks, rules and
tables, on A4 pages that are numbered. Links are kept only for http(s) and mailto addresses.

The text font is DejaVu Sans where the system has it (Debian's `fonts-dejavu-core`: Latin, Greek,
Cyrillic and more), else the Bitstream Vera that ReportLab ships (Latin); a character the font
lacks shows as an empty box, never an error. Everything is imported when a PDF is made, not at
import, and a PDF is made in the caller's thread: call it through `asyncio.to_thread`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
SAFE_LINKS = ("http://", "https://", "mailto:")
HEADING_SIZES = {1: 18, 2: 15, 3: 13, 4: 12, 5: 11, 6: 11}
MAX_CHARS = 2_000_000  # of Markdown: a larger text is cut, with a line that says so

_fonts: tuple[str, str] | None = None


def _register_fonts() -> tuple[str, str]:
    """The text and code font families, registered once per process."""
    global _fonts
    if _fonts is not None:
        return _fonts
    import reportlab
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    shipped = Path(reportlab.__file__).parent / "fonts"
    dejavu = [DEJAVU / f"DejaVuSans{s}.ttf" for s in ("", "-Bold", "-Oblique", "-BoldOblique")]
    vera = [shipped / f"Vera{s}.ttf" for s in ("", "Bd", "It", "BI")]
    files = dejavu if all(p.is_file() for p in dejavu) else vera
    faces = ("NaviSans", "NaviSans-Bold", "NaviSans-Italic", "NaviSans-BoldItalic")
    for face, path in zip(faces, files, strict=True):
        pdfmetrics.registerFont(TTFont(face, str(path)))
    for (bold, italic), face in zip(((0, 0), (1, 0), (0, 1), (1, 1)), faces, strict=True):
        addMapping("NaviSans", bold, italic, face)
    mono = "NaviSans"
    if (DEJAVU / "DejaVuSansMono.ttf").is_file():
        pdfmetrics.registerFont(TTFont("NaviMono", str(DEJAVU / "DejaVuSansMono.ttf")))
        for bold, italic in ((0, 0), (1, 0), (0, 1), (1, 1)):
            addMapping("NaviMono", bold, italic, "NaviMono")
        mono = "NaviMono"
    _fonts = ("NaviSans", mono)
    return _fonts


def _inline(children: Sequence[Any], mono: str) -> str:
    """An inline token's children as Platypus paragraph markup (the text escaped)."""
    out: list[str] = []
    links: list[bool] = []
    for t in children:
        match t.type:
            case "text":
                out.append(escape(t.content))
            case "softbreak":
                out.append(" ")
            case "hardbreak":
                out.append("<br/>")
            case "code_inline":
                out.append(f'<font face="{mono}">{escape(t.content)}</font>')
            case "strong_open":
                out.append("<b>")
            case "strong_close":
                out.append("</b>")
            case "em_open":
                out.append("<i>")
            case "em_close":
                out.append("</i>")
            case "s_open":
                out.append("<strike>")
            case "s_close":
                out.append("</strike>")
            case "link_open":
                href = str(t.attrGet("href") or "")
                safe = href.lower().startswith(SAFE_LINKS)
                links.append(safe)
                if safe:
                    out.append(f'<link href="{escape(href, {chr(34): "&quot;"})}" color="#1a56b0">')
            case "link_close":
                if links and links.pop():
                    out.append("</link>")
            case "image":
                out.append(escape(t.content or str(t.attrGet("alt") or "")))
            case "html_inline":
                out.append(escape(t.content))
    return "".join(out)


@dataclass
class _Layout:
    """The flowables made from the token stream, and where the walk is (lists, quotes)."""

    sans: str
    mono: str
    styles: dict[str, Any]
    story: list[Any] = field(default_factory=list)
    lists: list[list[int]] = field(default_factory=list)  # per open list: [ordered, next number]
    item_first: bool = False  # the next paragraph starts a list item (it gets the bullet)
    quotes: int = 0
    table: list[list[str]] | None = None
    row: list[str] | None = None

    def style(self, base: str, indent: int = 0) -> Any:
        from reportlab.lib.styles import ParagraphStyle

        depth = len(self.lists) + self.quotes
        return ParagraphStyle(
            f"{base}-{depth}-{indent}",
            parent=self.styles[base],
            leftIndent=18 * depth + indent,
            bulletIndent=18 * depth - 12 if self.lists else 0,
            textColor="#444444" if self.quotes and base == "body" else self.styles[base].textColor,
        )

    def paragraph(self, markup: str, base: str = "body") -> None:
        from reportlab.platypus import Paragraph

        bullet = None
        if self.item_first and self.lists:
            ordered, number = self.lists[-1]
            bullet = f"{number}." if ordered else "•"
            self.lists[-1][1] += 1
            self.item_first = False
        self.story.append(Paragraph(markup or "&nbsp;", self.style(base), bulletText=bullet))


def _styles(sans: str, mono: str) -> dict[str, Any]:
    from reportlab.lib.styles import ParagraphStyle

    body = ParagraphStyle("body", fontName=sans, fontSize=10.5, leading=14.5, spaceAfter=6)
    styles: dict[str, Any] = {"body": body}
    for level, size in HEADING_SIZES.items():
        styles[f"h{level}"] = ParagraphStyle(
            f"h{level}",
            parent=body,
            fontName=f"{sans}-Bold",
            fontSize=size,
            leading=size * 1.3,
            spaceBefore=10 if level > 1 else 0,
            spaceAfter=6,
        )
    styles["code"] = ParagraphStyle(
        "code", parent=body, fontName=mono, fontSize=9, leading=12, backColor="#f2f2f2", borderPadding=4
    )
    return styles


def _table(layout: _Layout, rows: list[list[str]], width: float) -> None:
    from reportlab.platypus import Paragraph, Table, TableStyle

    columns = max((len(r) for r in rows), default=0)
    if not columns:
        return
    cell = layout.styles["body"]
    data = [[Paragraph(c or "", cell) for c in r + [""] * (columns - len(r))] for r in rows]
    table = Table(data, colWidths=[width / columns] * columns, repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.5, "#999999"),
                ("BACKGROUND", (0, 0), (-1, 0), "#eeeeee"),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    layout.story.append(table)


def _walk(tokens: Sequence[Any], layout: _Layout, width: float) -> None:
    from reportlab.platypus import HRFlowable, Preformatted

    heading = 0
    for t in tokens:
        match t.type:
            case "heading_open":
                heading = int(t.tag[1:])
            case "heading_close":
                heading = 0
            case "bullet_list_open" | "ordered_list_open":
                start = int(t.attrGet("start") or 1) if t.type == "ordered_list_open" else 0
                layout.lists.append([int(t.type == "ordered_list_open"), start])
            case "bullet_list_close" | "ordered_list_close":
                layout.lists.pop()
            case "list_item_open":
                layout.item_first = True
            case "blockquote_open":
                layout.quotes += 1
            case "blockquote_close":
                layout.quotes -= 1
            case "inline" if layout.row is not None:
                layout.row.append(_inline(t.children or [], layout.mono))
            case "inline":
                markup = _inline(t.children or [], layout.mono)
                layout.paragraph(markup, f"h{heading}" if heading else "body")
            case "fence" | "code_block":
                layout.story.append(Preformatted(t.content.rstrip("\n"), layout.style("code", 4)))
            case "hr":
                layout.story.append(HRFlowable(width="100%", color="#999999", spaceBefore=4, spaceAfter=8))
            case "html_block":
                layout.paragraph(escape(t.content.strip()))
            case "table_open":
                layout.table = []
            case "tr_open":
                layout.row = []
            case "tr_close":
                if layout.table is not None and layout.row is not None:
                    layout.table.append(layout.row)
                layout.row = None
            case "table_close":
                _table(layout, layout.table or [], width)
                layout.table = None


def markdown_pdf(markdown: str, *, title: str = "", author: str = "Navi") -> bytes:
    """The PDF of `markdown` (its bytes). `title` goes into the document's properties."""
    from markdown_it import MarkdownIt
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import mm
    from reportlab.platypus import SimpleDocTemplate

    if len(markdown) > MAX_CHARS:
        markdown = markdown[:MAX_CHARS] + "\n\n(The rest of the text was left out of this PDF.)\n"
    sans, mono = _register_fonts()
    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=18 * mm,
        bottomMargin=18 * mm,
        title=title,
        author=author,
    )
    layout = _Layout(sans, mono, _styles(sans, mono))
    _walk(parser.parse(markdown), layout, doc.width)
    if not layout.story:
        layout.paragraph("")

    def number(canvas: Any, document: Any) -> None:
        canvas.saveState()
        canvas.setFont(sans, 8)
        canvas.drawRightString(A4[0] - 20 * mm, 10 * mm, str(document.page))
        canvas.restoreState()

    doc.build(layout.story, onFirstPage=number, onLaterPages=number)
    return buffer.getvalue()
