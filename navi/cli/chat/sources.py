"""The documents an answer in `navi chat` cites, listed under it.

An answer that cites "(contract.pdf, p. 12)" or "[notes/boiler.md, § Service]" — the name of a
document in a collection the conversation reads (GET /sessions/{id}/collections, then their
documents) — gets a "Sources" list under it: each citation numbered, a terminal link (OSC 8, where
the terminal draws them) to the file at its page (`/documents/{id}/file#page=12`: a browser's PDF
viewer opens at the page) and the address printed too. `/source N` prints the passage a citation
points at (its document's hit at the cited place for the sentence that cites it), which is how a
document that is not a PDF is shown. An answer without brackets costs no request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from navi.cli.remote import Remote

# "(…)" or "[…]" on one line, short, with no brackets inside; a group may cite several, split by ";".
BRACKETED = re.compile(r"[(\[]([^()\[\]\n]{3,240})[)\]]")
PAGE = re.compile(r"\bp{1,2}\.?\s*(\d+)|\bpages?\s+(\d+)", re.IGNORECASE)
SLIDE = re.compile(r"\bslide\s+(\d+)", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
HELD = re.compile(r"\s*\x00(\d+)\x00")


@dataclass(frozen=True)
class Source:
    number: int
    citation: str  # as the answer wrote it: "contract.pdf, p. 3"
    document_id: str
    document_name: str
    pdf: bool
    page: int | None
    slide: int | None
    url: str  # the file, at its page for a PDF
    sentence: str  # the answer's sentence that cites it, to find the passage by


def cited(text: str) -> list[tuple[str, str]]:
    """Every bracketed citation of `text` with the sentence it ends (each once, in order)."""
    groups: list[str] = []

    def hold(match: re.Match[str]) -> str:  # a citation's own full stops ("p. 3") end no sentence
        groups.append(match.group(1))
        return f"\x00{len(groups) - 1}\x00"

    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for sentence in SENTENCE_END.split(BRACKETED.sub(hold, text)):
        bare = HELD.sub("", sentence).strip()
        for number in HELD.findall(sentence):
            for part in groups[int(number)].split(";"):
                citation = part.strip()
                if citation and citation not in seen:
                    seen.add(citation)
                    found.append((citation, bare))
    return found


def _document_of(citation: str, documents: list[dict[str, Any]]) -> dict[str, Any] | None:
    name = citation.split(",", 1)[0].strip()
    for doc in documents:
        full = str(doc.get("name", ""))
        if name and (full == name or full.endswith("/" + name)):
            return doc
    return None


def resolve(found: list[tuple[str, str]], documents: list[dict[str, Any]], base_url: str) -> list[Source]:
    """The citations that name one of `documents`, numbered in order."""
    sources: list[Source] = []
    for citation, sentence in found:
        doc = _document_of(citation, documents)
        if doc is None:
            continue
        page = PAGE.search(citation)
        slide = SLIDE.search(citation)
        number = int(page.group(1) or page.group(2)) if page else None
        pdf = doc.get("kind") == "pdf" or str(doc.get("name", "")).lower().endswith(".pdf")
        url = f"{base_url}/documents/{quote(str(doc['id']))}/file"
        if pdf and number:
            url += f"#page={number}"
        sources.append(
            Source(
                number=len(sources) + 1,
                citation=citation,
                document_id=str(doc["id"]),
                document_name=str(doc.get("name", "")),
                pdf=pdf,
                page=number,
                slide=int(slide.group(1)) if slide else None,
                url=url,
                sentence=sentence,
            )
        )
    return sources


async def sources_of(remote: Remote, session_id: str, answer: str) -> list[Source]:
    """The sources `answer` cites among the documents the conversation reads."""
    found = cited(answer)
    if not found:
        return []
    documents: list[dict[str, Any]] = []
    for collection in await remote.request("GET", f"/sessions/{session_id}/collections"):
        documents += await remote.request("GET", "/documents", params={"collection": collection["id"]})
    return resolve(found, documents, remote.target.url)


def render(sources: list[Source]) -> RenderableType:
    lines: list[RenderableType] = [Text("Sources", style="bold dim")]
    for s in sources:
        line = Text(f"[{s.number}] ", style="dim")
        line.append(s.citation, style=Style(link=s.url, underline=True))
        line.append(f"  {s.url}", style="dim")
        lines.append(line)
    lines.append(Text("/source N shows a cited passage", style="dim"))
    return Group(*lines)


async def passage(remote: Remote, source: Source) -> str:
    """The text of the passage `source` points at: the document's best hit for the sentence that
    cites it, at the cited page or slide when one is."""
    query = source.sentence or source.document_name
    hits = await remote.request(
        "GET", "/documents/search", params={"q": query[:1000], "document": source.document_id, "limit": 10}
    )

    def at_place(hit: dict[str, Any]) -> bool:
        place = hit.get("place") or {}
        return (source.page is None or place.get("page") == source.page) and (
            source.slide is None or place.get("slide") == source.slide
        )

    hit = next((h for h in hits if at_place(h)), hits[0] if hits else None)
    if hit is None:
        return "No passage of this document matches that citation."
    found = await remote.request("GET", f"/documents/chunks/{quote(str(hit['chunk_id']))}")
    return str(found.get("passage") or hit.get("text") or "")
