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

_FENCE = re.compile(r"^\s*(```|~~~).*?(^\s*\1[^\n]*$|\Z)", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.M)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.M)
_QUOTE = re.compile(r"^\s*>\s?", re.M)
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$", re.M)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}.*$", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\1")
_SPACES = re.compile(r"[ \t]+")
# A sentence ends at . ! ? … (and closing quotes or brackets) followed by space, or at a blank line.
_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n\s*\n")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "mr.", "mrs.", "ms.", "dr.", "vs.", "no.", "st.")
MIN_SENTENCE = 2  # characters: a lone "1." of a list is joined to what follows


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
        self._in_code = False

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
            cut = 0
            for match in _END.finditer(pending):
                head = pending[: match.start()].rstrip()
                if head.lower().endswith(_ABBREVIATIONS):
                    continue
                if len(speakable(pending[cut : match.start()])) >= MIN_SENTENCE:
                    cut = match.end()
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
        if text[: match.start()].rstrip().lower().endswith(_ABBREVIATIONS):
            continue
        piece = text[start : match.start()].strip()
        if piece:
            pieces.append(piece)
        start = match.end()
    if tail := text[start:].strip():
        pieces.append(tail)
    return pieces
