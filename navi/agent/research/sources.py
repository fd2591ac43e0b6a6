"""What research reads: the candidates it may read (URLs named in the question, search results,
links of pages read), how it ranks them against a sub-question, and a source as the notes call
sees it — its text cut to a budget and quoted, so a page cannot close the block it is quoted in.

Ranking is by words shared with the sub-question and the question (title, snippet, link text,
the URL's path): no model call, so a small model spends its window on reading. A candidate that
shares no word is never read (unless the question named it): a page of links does not send the
research after every link on it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from navi.llm.tokens import CHARS_PER_TOKEN

SOURCE_OPEN, SOURCE_CLOSE = "<source>", "</source>"
_MARKER = re.compile(r"</?\s*source\s*>", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>\"'()\[\]]+", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]\n]{0,200})\]\((https?://[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]{2,}")
_STOPWORDS = (
    "the and for are was were with that this from what which who how why when where does did has have "
    "about into than then them they their there these those your you our its not but can will would "
    "should could more most much many some any all each other also only just http https www com org "
    "html htm index page"
)
_STOP = frozenset(_STOPWORDS.split())


def words(text: str) -> set[str]:
    """The words that say what `text` is about (addresses and common words left out)."""
    return {w for w in _WORD.findall(_URL.sub(" ", text).lower()) if w not in _STOP}


@dataclass
class Candidate:
    """Something research may read: a URL, with what is known of it before reading."""

    url: str
    title: str = ""
    snippet: str = ""
    named: bool = False  # named in the question: read first, whatever its words

    def score(self, wanted: set[str]) -> int:
        path = self.url.split("://", 1)[-1].partition("/")[2]  # not the host: every link shares it
        return len(wanted & words(f"{self.title} {self.snippet} {path.replace('/', ' ')}"))


@dataclass
class Source:
    """A source read: numbered in the order read, the number its notes and citations use."""

    n: int
    title: str
    where: str  # the URL, or "your documents: <query>"
    text: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.title} — {self.where}" if self.title and self.title != self.where else self.where


def named_urls(question: str) -> list[Candidate]:
    """The URLs the question names, in order, each once."""
    seen: dict[str, Candidate] = {}
    for match in _URL.finditer(question):
        url = match.group(0).rstrip(".,;:!?")
        seen.setdefault(url, Candidate(url, named=True))
    return list(seen.values())


def links(text: str) -> tuple[str, list[Candidate]]:
    """A page's Markdown with its links as their text only, and the links as candidates."""
    found: list[Candidate] = []

    def plain(match: re.Match[str]) -> str:
        found.append(Candidate(match.group(2), title=" ".join(match.group(1).split())))
        return match.group(1)

    return _LINK.sub(plain, text), found


def ranked(pool: list[Candidate], wanted: set[str], read: set[str], limit: int) -> list[Candidate]:
    """Up to `limit` candidates not read yet, best first: named ones, then by shared words (none
    sharing no word)."""
    fresh: dict[str, Candidate] = {}
    for c in pool:
        if c.url not in read and c.url not in fresh:
            fresh[c.url] = c
    scored = [(0 if c.named else 1, -c.score(wanted), i, c) for i, c in enumerate(fresh.values())]
    return [c for named, minus, _, c in sorted(scored) if named == 0 or minus < 0][:limit]


def quoted(text: str) -> str:
    """`text` as a `<source>` block quotes it: its markers taken out."""
    return _MARKER.sub("(source)", text)


def cut(text: str, tokens: int) -> str:
    """`text` cut to about `tokens` at a line or sentence end, marked when cut."""
    chars = int(tokens * CHARS_PER_TOKEN)
    if len(text) <= chars:
        return text
    part = text[:chars]
    end = max(part.rfind("\n"), part.rfind(". "))
    return (
        part[: end + 1] if end > chars // 2 else part
    ).rstrip() + "\n[… the rest of the source was not read]"
