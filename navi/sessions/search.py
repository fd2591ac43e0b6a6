"""Search across conversations: what a query is, what a hit is, and the parts every store shares.

A query is words, not a query language: whatever is typed (quotes, `*`, `NEAR`, `-`, brackets,
10 kB of text) becomes at most `MAX_TERMS` words of letters and digits, so no store ever parses a
user's syntax. A message matches when it has every word; the last word also matches as the start
of a longer one ("conf" finds "configure"), so a search box can search while one types. Case and
diacritics do not count (PostgreSQL's `simple` configuration keeps diacritics).

What is searched is what a person reads in the display history: user and assistant messages, by
the text a client shows (`metadata.text`, else the content) — not tool results, not compression
markers, summaries, failed turns' error records or images a tool handed the model. The SQL stores
index exactly these rows (migration 0015); `searchable_text` is the same rule for the in-memory store.

Snippets are cut here, from the message text, for every store alike: whitespace collapsed, a
window around the first match, and the matched words as `highlights` — (start, end) character
offsets into the snippet — so a client marks them without parsing any markup.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, Field

from navi.llm.messages import Message

MAX_TERMS = 12
MAX_TERM_CHARS = 64
MAX_LIMIT = 100
SNIPPET_CHARS = 200  # about; whole words are kept
_WORD = re.compile(r"[^\W_]+")
SEARCHED_ROLES = ("user", "assistant")


def fold(word: str) -> str:
    """`word` as compared: case folded, diacritics removed (as SQLite's unicode61 tokenizer does)."""
    if word.isascii():  # most words: nothing to decompose (a snippet folds every word of a message)
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def terms(query: str) -> tuple[str, ...]:
    """The words of a query, folded: letters and digits only, at most MAX_TERMS of MAX_TERM_CHARS."""
    found: list[str] = []
    for match in _WORD.finditer(query[: MAX_TERMS * (MAX_TERM_CHARS + 8)]):
        word = fold(match.group())[:MAX_TERM_CHARS]
        if word and word not in found:
            found.append(word)
        if len(found) == MAX_TERMS:
            break
    return tuple(found)


@dataclass(frozen=True)
class SearchQuery:
    """`terms` (see `terms()`); `since` inclusive and `until` exclusive, on the message's time;
    `profile`: only sessions in that profile."""

    terms: tuple[str, ...]
    since: datetime | None = None
    until: datetime | None = None
    profile: str | None = None
    limit: int = 20

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"limit must be 1 to {MAX_LIMIT}")

    def fts5(self) -> str:
        """An FTS5 MATCH expression: every word a quoted string (a word has no quote to escape),
        the last as a prefix."""
        *whole, last = self.terms
        return " ".join([*(f'"{t}"' for t in whole), f'"{last}"*'])

    def tsquery(self) -> str:
        """A PostgreSQL `to_tsquery` text: words quoted and AND-ed, the last as a prefix."""
        *whole, last = self.terms
        return " & ".join([*(f"'{t}'" for t in whole), f"'{last}':*"])

    def matches_word(self, word: str) -> bool:
        folded = fold(word)  # (the last word whole is a start of itself)
        return folded.startswith(self.terms[-1]) or folded in self.terms


class SearchHit(BaseModel):
    session_id: str
    session_name: str | None = None
    profile_id: str
    message_id: str
    role: str
    created_at: datetime
    snippet: str
    highlights: list[tuple[int, int]] = Field(
        default_factory=list, description="(start, end) offsets into `snippet` of the matched words"
    )


def searchable_text(msg: Message) -> str | None:
    """The text search indexes for a display-history message, or None when it is not searched."""
    meta = msg.metadata
    if msg.role not in SEARCHED_ROLES or msg.is_compression or msg.is_summary:
        return None
    if meta.is_failure_record or meta.synthetic is not None:
        return None
    body = meta.text if meta.text is not None else msg.content
    return body or None


def snippet(body: str, query: SearchQuery, width: int = SNIPPET_CHARS) -> tuple[str, list[tuple[int, int]]]:
    """About `width` characters of `body` around its first matched word, with the matched words'
    offsets in the returned text. "…" marks a cut at either end."""
    text = " ".join(body.split())
    if text.isascii():  # most messages: lower() keeps every offset, and no word needs folding
        *whole, last = query.terms
        words = [
            (m.start(), m.end())
            for m in _WORD.finditer(text.lower())
            if m.group().startswith(last) or m.group() in whole
        ]
    else:
        words = [(m.start(), m.end()) for m in _WORD.finditer(text) if query.matches_word(m.group())]
    first = words[0][0] if words else 0
    start = max(0, first - width // 3)
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", max(start, words[0][1] if words else start), end)
        end = space if space > 0 else end
    lead = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    shift = len(lead) - start
    marks = [(s + shift, e + shift) for s, e in words if s >= start and e <= end]
    return f"{lead}{text[start:end]}{tail}", marks


def score(body: str, query: SearchQuery) -> float:
    """The in-memory store's rank (higher is better), or 0 when `body` does not match: the share of
    its words that match, so a short message about the words ranks above a long one mentioning them."""
    words = [fold(m.group()) for m in _WORD.finditer(body)]
    if not words:
        return 0.0
    *whole, last = query.terms
    present = set(words)
    if any(t not in present for t in whole) or not any(w.startswith(last) for w in present):
        return 0.0
    hits = sum(1 for w in words if w in whole or w.startswith(last))
    return hits / math.sqrt(len(words))


def words_of(body: str) -> list[str]:
    """Every word of `body`, folded, as the SQLite index (unicode61, diacritics removed) splits it."""
    if body.isascii():
        return _WORD.findall(body.lower())
    return [fold(w) for w in _WORD.findall(body)]


K1, B = 1.2, 0.75  # BM25's saturation and length normalisation, FTS5's bm25() defaults


def bm25_idf(total: int, count: int) -> float:
    """A word's BM25 weight among `total` documents, `count` of which hold it (FTS5's formula,
    never below 1e-6)."""
    return max(1e-6, math.log((total - count + 0.5) / (count + 0.5)))


def bm25_norm(length: float, average: float, k1: float = K1, b: float = B) -> float:
    """A document's length against the average, as BM25's term score divides by it (`bm25_tf`)."""
    return k1 * (1 - b + b * length / average)


def bm25_tf(tf: float, norm: float, k1: float = K1) -> float:
    """A word's count in a document, saturating, over the document's `bm25_norm`."""
    return tf * (k1 + 1) / (tf + norm)


def bm25_order(
    docs: list[tuple[int, str]],
    query: SearchQuery,
    weights: dict[str, float] | None = None,
    k1: float = K1,
    b: float = B,
) -> list[int]:
    """The ids of `docs` (id, body), best first by BM25: each query word's count in a message,
    saturating (`k1`) and normalised by the message's length against the others' (`b`), times that
    word's weight (its IDF, from `weights`; 1 when absent). The last word counts every word it
    starts. Ties: the larger id (the newer message) first."""
    if not docs:
        return []
    weights = weights or {}
    *whole, last = query.terms
    split = [(i, words_of(body)) for i, body in docs]
    average = sum(len(w) for _, w in split) / len(split) or 1.0
    scored = []
    for i, words in split:
        norm = bm25_norm(len(words), average, k1, b)
        total = 0.0
        for term in whole:
            total += weights.get(term, 1.0) * bm25_tf(words.count(term), norm, k1)
        tf = f" {' '.join(words)}".count(f" {last}")  # the words it starts (a word has no space)
        total += weights.get(last, 1.0) * bm25_tf(tf, norm, k1)
        scored.append((-total, -i))
    return [-i for _, i in sorted(scored)]


def marked(hit: SearchHit, start: str = "**", end: str = "**") -> str:
    """The hit's snippet with its matched words between `start` and `end` (for text output)."""
    out, at = [], 0
    for a, b in hit.highlights:
        out += [hit.snippet[at:a], start, hit.snippet[a:b], end]
        at = b
    return "".join([*out, hit.snippet[at:]])
