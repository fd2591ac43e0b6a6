"""What of an answer is read aloud, and in which pieces.

`speakable()` turns Markdown into the words a listener wants: code blocks and inline code are not
read at all, links keep their text and lose their address, bare URLs are
not read, emphasis marks, headings' hashes, list bullets, table pipes and HTML tags go.

`Sentences` is fed an answer as it streams and hands back each sentence as soon as it is complete,
so the first can be spoken while the model is still writing the rest. The page does the same in
JavaScript (navi/web/static/js/voice.js); this one serves channels, the bench and the tests.
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


class Sentences:
    """Sentences out of streamed text, each as soon as the text after it shows it has ended."""

    def __init__(self) -> None:
        self._raw = ""
        self._done = 0  # characters of `_raw` already handed out

    def feed(self, delta: str) -> list[str]:
        self._raw += delta
        return self._take(final=False)

    def finish(self) -> list[str]:
        return self._take(final=True)

    def _take(self, *, final: bool) -> list[str]:
        pending = self._raw[self._done :]
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
