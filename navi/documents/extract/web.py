"""HTML (and the XHTML of EPUB chapters, the HTML body of an e-mail), through lxml: scripts,
styles and the like dropped; h1-h6 open sections with their heading path; block elements
(paragraphs, list items, table cells, …) become paragraphs, inline ones run on."""

from __future__ import annotations

import re
from typing import Any

from navi.documents.base import Extracted, Place, Section
from navi.documents.extract.common import Budget, HeadingSections

_WHITESPACE = re.compile(r"\s+")
DROP = ("script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object", "canvas", "nav")
HEADINGS = {f"h{n}": n for n in range(1, 7)}
BLOCKS = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "td",
    "th",
    "thead",
    "tbody",
    "tfoot",
    "caption",
    "pre",
    "blockquote",
    "section",
    "article",
    "aside",
    "header",
    "footer",
    "main",
    "figure",
    "figcaption",
    "form",
    "fieldset",
    "address",
    "details",
    "summary",
    "hr",
    "br",
    "body",
    "html",
}


def parse(data: bytes | str, *, xml: bool = False) -> Any:
    """The document's root element (lxml), or None for an empty one."""
    import lxml.etree
    import lxml.html

    if xml:
        parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True, recover=True, huge_tree=False)
        try:
            root = lxml.etree.fromstring(data if isinstance(data, bytes) else data.encode(), parser)
            if root is not None:
                return root
        except lxml.etree.XMLSyntaxError:
            pass  # XHTML that is not well-formed: read it as HTML
    try:
        return lxml.html.document_fromstring(data)
    except lxml.etree.ParserError:
        return None


def title_of(root: Any) -> str | None:
    for element in root.iter("{*}title"):
        text = " ".join("".join(element.itertext()).split())
        if text:
            return text
    return None


def walk(root: Any, out: HeadingSections, *, budget: Budget) -> None:
    """Feed `out` the text of `root`'s body in document order, without recursion (deep nesting
    is no danger)."""
    import lxml.etree

    for element in list(root.iter()):
        if _local(element) in DROP and element.getparent() is not None:
            tail = element.tail
            parent = element.getparent()
            previous = element.getprevious()
            parent.remove(element)
            if tail:  # the text after a dropped element stays
                if previous is not None:
                    previous.tail = (previous.tail or "") + tail
                else:
                    parent.text = (parent.text or "") + tail
    body = next(iter(root.iter("{*}body")), root)
    buffer: list[str] = []
    heading: list[str] | None = None
    level = 0
    count = 0
    pre = 0  # inside <pre>, whitespace is the text's; elsewhere any run of it is one space

    def text(value: str) -> str:
        return value.replace("\n\n", "\n") if pre else _WHITESPACE.sub(" ", value)

    for event, element in lxml.etree.iterwalk(body, events=("start", "end")):
        count += 1
        if count % 5000 == 0:
            budget.check_time()
        if not isinstance(element.tag, str):  # comments, processing instructions: their tail only
            if event == "end" and element.tail:
                (heading if heading is not None else buffer).append(text(element.tail))
            continue
        tag = _local(element)
        target = heading if heading is not None else buffer
        if event == "start":
            if tag in HEADINGS and heading is None:
                _flush(buffer, out)
                heading, level = [], HEADINGS[tag]
                target = heading
            elif tag in BLOCKS:
                target.append("\n" if tag == "br" else "\n\n")
            pre += tag == "pre"
            if element.text:
                target.append(text(element.text))
        else:
            if tag in HEADINGS and heading is not None and HEADINGS[tag] == level:
                out.heading(level, "".join(heading))
                heading = None
            elif tag in BLOCKS and tag != "br":
                target.append("\n\n")
            pre -= tag == "pre"
            if element.tail:
                (heading if heading is not None else buffer).append(text(element.tail))
    _flush(buffer, out)


def _flush(buffer: list[str], out: HeadingSections) -> None:
    text = "".join(buffer)
    buffer.clear()
    for paragraph in text.split("\n\n"):
        out.paragraph(paragraph)


def _local(element: Any) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def read(data: bytes, name: str, budget: Budget, kind: str) -> Extracted:
    root = parse(data)
    if root is None:
        return Extracted("html", [], title=None)
    title = title_of(root)
    out = HeadingSections(budget)
    walk(root, out, budget=budget)
    sections = out.done()
    if title is None:
        title = next((s.place.headings[0] for s in sections if s.place.headings), None)
    return Extracted("html", sections, pages=0, title=title)


def sections_of(
    data: bytes, budget: Budget, place: Place, *, xml: bool = False
) -> tuple[list[Section], str | None]:
    """The Sections of an HTML or XHTML part (an EPUB chapter, a mail body) at `place`, and its title."""
    root = parse(data, xml=xml)
    if root is None:
        return [], None
    title = title_of(root)
    out = HeadingSections(budget, place)
    walk(root, out, budget=budget)
    return out.done(), title
