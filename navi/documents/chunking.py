"""Cutting an extracted document into `Chunk`s small enough to embed, search and quote.

A chunk never spans two sections, so never two pages, slides, sheet ranges or headings: its
`Place` is its section's, and a citation points where the words are. Inside a section the cuts
fall between paragraphs when they can, else between sentences, else between words (or, for text
without spaces, characters); consecutive chunks of one section overlap by about
`overlap_tokens`, so a sentence cut from its context at a chunk's end starts the next one.

Tokens are estimated, not counted: max(characters / 4, words × 1.3), plus one per CJK
character. Characters / 4 is the usual figure for English and code with BPE tokenizers, words ×
1.3 catches text of short words, and CJK scripts run to about a token per character. No
tokenizer is loaded (the embedder may not even be chosen yet), the estimate is cheap over 20 M
characters, and erring high only makes chunks a little smaller.

A chunk is at most MAX_TOKENS (60) estimated tokens, OVERLAP_TOKENS (20) repeated from the one
before (in whole sentences: about one): the sentence encoder reads 256 of its own tokens and drops
the rest, and a short passage's vector is about one thing. Chosen on bench/documents.py's full
corpus (240 documents, 1,000 questions; docs/benchmarks.md compares sizes 60-300 and overlaps
0-40) with the fusion's weight of words (navi/storage/document_search.py): the right page in the
top 5 for 0.906 of the questions (tuning / held-out halves 0.909 / 0.903) against 0.864 for chunks
of 100 / 25 before, at about the same cost to embed (more, shorter passages). The overlap is worth
its tokens for the vectors: a sentence repeated in a second passage gets a second context (100 / 0
found 0.828, 100 / 25 0.875 with the same fusion). Chunks of 300 (the first default) found 0.771
and ran past what the encoder reads. A passage of 60 is two to four sentences: an answer longer
than that is in its neighbours, which `passage` returns with it.

A chunk's text is the document's own text, whitespace-normalized: it is indexed for keyword
search as it is and quoted as it is.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from navi.documents.base import Chunk, Extracted

MAX_TOKENS = 60  # a chunk's size in estimated tokens (`estimate_tokens`; bench/documents.py)
OVERLAP_TOKENS = 20  # repeated from the chunk before
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3040-\u30ff]")
_WORD = re.compile(r"[^\s\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3040-\u30ff]+")
_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])\s+|(?<=[。！？])")


def estimate_tokens(text: str) -> int:
    wide = len(_CJK.findall(text))
    words = len(_WORD.findall(text))
    return max(math.ceil((len(text) - wide) / 4), math.ceil(words * 1.3)) + wide


@dataclass
class _Piece:
    text: str
    tokens: int
    joiner: str  # what goes before it when it follows another piece: "\n\n", "\n" or " "


def chunk(
    extracted: Extracted, *, max_tokens: int = MAX_TOKENS, overlap_tokens: int = OVERLAP_TOKENS
) -> list[Chunk]:
    """The document's chunks, in order (`ordinal` from 0), each at its section's place."""
    if max_tokens < 10:
        raise ValueError("max_tokens must be at least 10")
    overlap_tokens = max(0, min(overlap_tokens, max_tokens // 2))
    chunks: list[Chunk] = []
    for section in extracted.sections:
        text = section.text.strip()
        if not text:
            continue
        for piece in _pack(_pieces(text, max_tokens), max_tokens, overlap_tokens):
            chunks.append(Chunk(ordinal=len(chunks), text=piece, place=section.place))
    return chunks


def _pieces(text: str, max_tokens: int) -> list[_Piece]:
    """The section as pieces of at most `max_tokens`: whole paragraphs where they fit, else their
    lines (a sheet's rows, a verse), else sentences, else runs of words."""
    if estimate_tokens(text) <= max_tokens:
        return [_Piece(text, estimate_tokens(text), "\n\n")]
    pieces: list[_Piece] = []
    for paragraph in _PARAGRAPHS.split(text):
        paragraph = paragraph.strip()
        if paragraph:
            pieces.extend(_split(paragraph, max_tokens, "\n\n"))
    return pieces


def _split(text: str, max_tokens: int, joiner: str) -> list[_Piece]:
    tokens = estimate_tokens(text)
    if tokens <= max_tokens:
        return [_Piece(text, tokens, joiner)]
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1:
        parts, inner = lines, "\n"
    else:
        parts = [s for s in _SENTENCE_END.split(text) if s and s.strip()]
        inner = " "
        if len(parts) <= 1:
            return _words(text, max_tokens, joiner)
    out: list[_Piece] = []
    for index, part in enumerate(parts):
        out.extend(_split(part.strip(), max_tokens, joiner if index == 0 else inner))
    return out


def _words(text: str, max_tokens: int, joiner: str) -> list[_Piece]:
    """A sentence longer than a chunk, cut between words; text without spaces (CJK, a long
    identifier) cut every so many characters."""
    out: list[_Piece] = []
    if len(text.split()) <= 1:
        for index, part in enumerate(_cut(text, max_tokens)):
            out.append(_Piece(part, estimate_tokens(part), joiner if index == 0 else ""))
        return out
    words: list[str] = []
    for word in text.split():  # a word longer than a chunk (a URL, a hash) is cut like CJK
        words.extend([word] if estimate_tokens(word) <= max_tokens else _cut(word, max_tokens))
    current: list[str] = []
    size = 0
    for word in words:
        cost = estimate_tokens(word) + 1
        if current and size + cost > max_tokens:
            part = " ".join(current)
            out.append(_Piece(part, estimate_tokens(part), joiner if not out else " "))
            current, size = [], 0
        current.append(word)
        size += cost
    if current:
        part = " ".join(current)
        out.append(_Piece(part, estimate_tokens(part), joiner if not out else " "))
    return out


def _cut(text: str, max_tokens: int) -> list[str]:
    step = max(1, max_tokens if _CJK.search(text) else max_tokens * 4)
    return [text[start : start + step] for start in range(0, len(text), step)]


def _pack(pieces: list[_Piece], max_tokens: int, overlap_tokens: int) -> list[str]:
    """Pieces packed greedily into chunks of at most `max_tokens`; each chunk after the first of
    its section starts with the last pieces (or sentences) of the one before, up to
    `overlap_tokens`."""
    chunks: list[str] = []
    current: list[_Piece] = []
    size = 0
    fresh = 0  # pieces in `current` that are not overlap
    for piece in pieces:
        if current and size + piece.tokens > max_tokens:
            chunks.append(_join(current))
            current = _tail(current, overlap_tokens)
            size = sum(p.tokens for p in current)
            if size + piece.tokens > max_tokens:  # no room for the overlap with this piece
                current, size = [], 0
            fresh = 0
        current.append(piece)
        size += piece.tokens
        fresh += 1
    if current and fresh:
        chunks.append(_join(current))
    return chunks


def _tail(pieces: list[_Piece], budget: int) -> list[_Piece]:
    """The end of a chunk to repeat at the start of the next: whole pieces while they fit, then
    the last sentences of the piece that does not."""
    tail: list[_Piece] = []
    used = 0
    for piece in reversed(pieces):
        if used + piece.tokens <= budget:
            tail.insert(0, piece)
            used += piece.tokens
            continue
        sentences = [s for s in _SENTENCE_END.split(piece.text) if s.strip()]
        for index in range(len(sentences) - 1, 0, -1):  # never the whole piece: it did not fit
            cost = estimate_tokens(sentences[index])
            if used + cost > budget:
                break
            tail.insert(0, _Piece(sentences[index].strip(), cost, " "))
            used += cost
        break
    return tail


def _join(pieces: list[_Piece]) -> str:
    text = pieces[0].text
    for piece in pieces[1:]:
        text += piece.joiner + piece.text
    return text
