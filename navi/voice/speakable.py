"""What of an answer is read aloud, and in which pieces.

`speakable()` turns Markdown into the words a listener wants: code blocks and inline code are not
read at all, links keep their text and lose their address, bare URLs are
not read, emphasis marks, headings' hashes, list bullets, table pipes and HTML tags go.

`Sentences` is fed an answer as it streams and hands back each sentence as soon as it is complete,
so the first can be spoken while the model is still writing the rest. With `first_clause`, the
answer's first sentence is handed back in two: its first clause (up to a comma, semicolon or colon
after at least `CLAUSE_WORDS` words) as soon as that has streamed, then the rest: the first
audio is a short piece, synthesised sooner, and the rest is synthesised while it plays. This one
speaks answers on the socket (navi/api/voice_frames.py) and serves channels, the bench and the
tests; the page has the same rules in JavaScript for its speaker button (navi/web/static/js/voice.js).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
# Bounded repetitions throughout: hostile text (thousands of "[" or "**") costs linear time.
_IMAGE = re.compile(r"!\[([^\]\n]{0,300})\]\([^)\s]{0,2000}\)")
_LINK = re.compile(r"\[([^\]\n]{1,300})\]\([^)\s]{0,2000}\)")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_TAG = re.compile(r"</?[a-zA-Z][^>\n]{0,200}>")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]*", re.M)
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])\s+", re.M)
_QUOTE = re.compile(r"^[ \t]*>\s?", re.M)
_RULE = re.compile(r"^[ \t]*([-*_])([ \t]*\1){2,}[ \t]*$", re.M)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}.*$", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)([^\n]{1,200}?)(?<=\S)\1")
_SPACES = re.compile(r"[ \t]+")
# A sentence ends at . ! ? … (and closing quotes or brackets) followed by space, or at a blank line.
_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n[ \t]*\n")
_WORD = re.compile(r"\w")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "mr.", "mrs.", "ms.", "dr.", "vs.", "no.", "st.")


def _abbreviated(text: str, end: int) -> bool:
    """Whether the sentence end found at `end` is an abbreviation's dot ("e.g. this")."""
    return text[max(0, end - 8) : end].rstrip().lower().endswith(_ABBREVIATIONS)


def speakable(markdown: str) -> str:
    text = _FENCE.sub("\n\n", markdown)
    text = _INLINE_CODE.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub("", text)
    text = _TAG.sub("", text)
    text = _RULE.sub("", text)
    text = _TABLE_RULE.sub("", text)
    text = _HEADING.sub("", text)
    text = _BULLET.sub("", text)
    text = _QUOTE.sub("", text)
    for _ in range(2):  # nested emphasis: **_word_**
        text = _EMPHASIS.sub(r"\2", text)
    text = text.replace("|", ", ").replace("#", "")
    lines = [_SPACES.sub(" ", line).strip(" ,") for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line:
            # a line without an end (a heading, a bullet) ends where the line does when read
            out.append(line if line[-1] in ".!?…:;,)" else f"{line}.")
        elif out and out[-1] != "":
            out.append("")
    return "\n".join(out).strip()


def split_sentences(text: str) -> list[str]:
    found = Sentences()
    return [*found.feed(text), *found.finish()]


CLAUSE_WORDS = 4  # a first clause shorter than this is not worth a piece of its own
_CLAUSE = re.compile(r"(?<=\w)[,;:]\s+")
_WORDS = re.compile(r"\w+")


def _first_clause(text: str) -> int:
    """Where the first clause of `text` (the start of a sentence) ends, or 0: a clause boundary
    after `CLAUSE_WORDS` words or more, outside inline code, links and addresses."""
    for match in _CLAUSE.finditer(text):
        head = text[: match.start()]
        if "\n" in head or "`" in head or "[" in head or "://" in head or "www." in head:
            return 0  # markup, an address, a list: the whole sentence as it is
        if len(_WORDS.findall(head)) >= CLAUSE_WORDS:
            return match.end()
    return 0


class Sentences:
    """Sentences out of streamed text, each as soon as the text after it shows it has ended
    (`first_clause`: the first sentence's first clause before it, as soon as it has streamed)."""

    def __init__(self, *, first_clause: bool = False) -> None:
        self._raw = ""
        self._done = 0  # characters of `_raw` already handed out
        self._clause = first_clause  # the first clause is still to be looked for

    def feed(self, delta: str) -> list[str]:
        self._raw += delta
        return self._take(final=False)

    def finish(self) -> list[str]:
        return self._take(final=True)

    def _take(self, *, final: bool) -> list[str]:
        pending = self._raw[self._done :]
        if self._clause and pending.strip():
            self._clause = False if final else self._clause
            if (clause := self._clause_cut(pending, final)) is not None:
                return clause
        if not final:
            # inside an unclosed code fence nothing is ready: wait for the fence to close
            if pending.count("```") % 2 == 1:
                return []
            cut, worded, seen = 0, False, 0
            for match in _END.finditer(pending):
                if _abbreviated(pending, match.start()):
                    continue
                # a piece with a word in it is a sentence; "1." or "---" alone waits for more
                worded = worded or _WORD.search(pending, seen, match.start()) is not None
                seen = match.end()
                if worded:
                    cut, worded = match.end(), False
            if cut == 0:
                return []
            ready, self._done = pending[:cut], self._done + cut
        else:
            ready, self._done = pending, len(self._raw)
        return [s for s in _pieces(speakable(ready)) if s]

    def _clause_cut(self, pending: str, final: bool) -> list[str] | None:
        """The first sentence's first clause and what follows it, or None: not (yet) found."""
        if pending.count("```") % 2 == 1 or pending.lstrip().startswith(("#", "|", ">", "-", "*", "`")):
            self._clause = False  # a heading, a list, a table, code: as it is
            return None
        end = next((m.start() for m in _END.finditer(pending) if not _abbreviated(pending, m.start())), -1)
        first = pending if end < 0 else pending[:end]
        cut = _first_clause(first)
        if not cut:
            if end >= 0 or final:
                self._clause = False  # the first sentence is complete and has no clause to cut
            return None
        self._clause = False
        self._done += cut
        mark = pending[:cut].rstrip()[-1]  # read as a pause that goes on, not as a full stop
        clause = [s[:-1] + mark if s.endswith(".") else s for s in _pieces(speakable(pending[:cut])) if s]
        return clause + self._take(final=final)


def _pieces(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _END.finditer(text):
        if _abbreviated(text, match.start()):
            continue
        piece = text[start : match.start()].strip()
        if piece:
            pieces.append(piece)
        start = match.end()
    if tail := text[start:].strip():
        pieces.append(tail)
    return pieces
