"""Markdown text as a PDF, for a person to keep or print: a conversation's export, a report.

The Markdown is turned into HTML by markdown-it-py (raw HTML in it is shown as text, images as
their alt text: a PDF never fetches anything), which fpdf2 lays out (headings, lists, quotes,
code, tables, links). Text is set in DejaVu Sans (and DejaVu Sans Mono for code) when the system
has it (Debian's fonts-dejavu-core, which Chromium brings), so any language the font covers is
written as it is; without it the PDF core fonts are used, which cover Latin-1 only, and other
characters become "?". A Markdown structure fpdf2 cannot lay out (a table whose rows disagree)
falls back to the same text without layout: the export never fails on what a message holds.

fpdf2 is LGPL-3.0 (imported, not changed). Blocking, CPU-bound work: a server runs it on a worker
thread.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

FONT_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/TTF"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
)
# Our family name → (style → file) of DejaVu; the mono family has no italic in fpdf2's HTML.
FAMILIES = {
    "navisans": {
        "": "DejaVuSans.ttf",
        "B": "DejaVuSans-Bold.ttf",
        "I": "DejaVuSans-Oblique.ttf",
        "BI": "DejaVuSans-BoldOblique.ttf",
    },
    "navimono": {"": "DejaVuSansMono.ttf", "B": "DejaVuSansMono-Bold.ttf"},
}


def font_files(dirs: tuple[Path, ...] = FONT_DIRS) -> dict[str, dict[str, Path]] | None:
    """The DejaVu files of both families, or None when a needed one is missing."""
    found: dict[str, dict[str, Path]] = {}
    for family, styles in FAMILIES.items():
        found[family] = {}
        for style, name in styles.items():
            path = next((d / name for d in dirs if (d / name).is_file()), None)
            if path is None:
                return None
            found[family][style] = path
    return found


def to_html(markdown: str) -> str:
    """Markdown → HTML with raw HTML escaped and images reduced to their alt text."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").disable("image")
    return md.render(markdown)


def _latin1(text: str) -> str:
    return text.encode("latin-1", "replace").decode("latin-1")


def markdown_pdf(markdown: str, *, title: str, author: str = "Navi") -> bytes:
    """A PDF of `markdown` (A4, its pages numbered), `title` in its properties."""
    from fpdf import FPDF

    fonts = font_files()
    pdf = FPDF(format="A4")
    pdf.set_title(title if fonts else _latin1(title))
    pdf.set_author(author)
    pdf.set_creator("Navi")
    pdf.set_auto_page_break(auto=True, margin=15)
    sans, mono = "helvetica", "courier"
    if fonts:
        for family, styles in fonts.items():
            for style, path in styles.items():
                pdf.add_font(family, style, str(path))
        sans, mono = "navisans", "navimono"
    pdf.add_page()
    pdf.set_font(sans, size=11)
    text = markdown if fonts else _latin1(markdown)
    made = [pdf]
    quiet = logging.getLogger("fpdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # a glyph the font lacks is logged per character
    try:
        try:
            with warnings.catch_warnings():  # fpdf2's notes on the HTML it met: no reason to fail
                warnings.simplefilter("ignore")
                pdf.write_html(to_html(text), font_family=sans, tag_styles=_styles(mono))
        except Exception:  # a structure fpdf2 cannot lay out: the text as it is
            pdf = _plain(text, title, fonts, sans)
            made.append(pdf)
        return bytes(pdf.output())
    finally:
        quiet.setLevel(level)
        for each in made:  # fontTools keeps the font files open until told
            for font in each.fonts.values():
                if (ttfont := getattr(font, "ttfont", None)) is not None:
                    ttfont.close()


def _styles(mono: str) -> dict[str, Any]:
    """Code in the monospaced family, headings in dark grey rather than fpdf2's red."""
    from fpdf.fonts import FontFace, TextStyle

    heading = {"h1": 20.0, "h2": 16.0, "h3": 13.0, "h4": 12.0, "h5": 11.0, "h6": 11.0}
    styles: dict[str, Any] = {
        name: TextStyle(color="#222222", font_style="B", font_size_pt=size, t_margin=4, b_margin=1)
        for name, size in heading.items()
    }
    styles["code"] = FontFace(family=mono)
    styles["pre"] = TextStyle(font_family=mono, t_margin=2, b_margin=2)
    styles["blockquote"] = TextStyle(color="#444444", t_margin=2, b_margin=2, l_margin=8)
    return styles


def _plain(text: str, title: str, fonts: dict[str, dict[str, Path]] | None, sans: str) -> Any:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_title(title if fonts else _latin1(title))
    pdf.set_auto_page_break(auto=True, margin=15)
    if fonts:
        pdf.add_font(sans, "", str(fonts["navisans"][""]))
    pdf.add_page()
    pdf.set_font(sans, size=10)
    pdf.multi_cell(0, 5, text)
    return pdf
