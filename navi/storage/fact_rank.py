"""BM25 over a window of full-text matches of facts, in Python, as FTS5's `bm25()` would rank them.

SQLite finds a query's matches (FTS5, porter stems); the store takes the searching user's newest
`WINDOW` of them with their words and ranks them here. FTS5's own `bm25()` is the costly part of
its statement: to weigh each word it counts every row holding it, once per search (a word in half
of 100,000 facts is 50,000 rows), and it reads every ranked row's positions — and it counts every
user's facts, so the order of one user's results would tell which words other users' facts hold.
Here a word weighs by the searching user's own facts only (`navi/storage/counts.py`): they are
counted up to the word's newest `COUNT_CAP` and estimated beyond from how far back those reach
(`matches`). Its occurrences in the window are found by one scan of the window's text for the
words that start as its stem does, each confirmed by the same Porter stemmer SQLite uses
(PyStemmer's "porter", which leaves words under 3 letters as they are, as SQLite does).

The columns weigh as they did with `bm25(memory_facts_fts, 0.5, 1.0, 2.0)`: category 0.5, key 1,
value 2. A fact's length is its words in all three; the average is the window's.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate

import Stemmer

from navi.sessions.search import bm25_idf, bm25_norm, bm25_tf, fold

# A word's facts are counted up to this many, for its weight (see the docstring).
COUNT_CAP = 2000
WEIGHTS = (0.5, 1.0, 2.0)  # category, key, value
# SQLite's porter tokenizer leaves tokens shorter than 3 or longer than 64 characters unstemmed.
_SHORT, _LONG = 3, 64

# A stemmer per thread: PyStemmer's are not to be shared between threads (the database's threads
# rank searches side by side).
_local = threading.local()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Porter stem FTS5 indexes `word` (folded) under."""
    if len(word) < _SHORT or len(word) > _LONG:
        return word
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("porter")
    return str(stemmer.stemWord(word))


def matches(found: int, since: int, total: int) -> int:
    """How many of a user's `total` facts hold a word, from its newest `found` (at most COUNT_CAP)
    among them and `since`, the user's facts from the oldest of those on: when the cap was reached,
    the word is taken to be as frequent among the user's older facts as among those newer."""
    if found < COUNT_CAP or since <= 0:
        return found
    return min(max(total, found), round(found * total / since))


def stems(words: Sequence[str]) -> list[str]:
    """The distinct stems of a query's words, in order."""
    return list(dict.fromkeys(stem(fold(w)) for w in words))


@lru_cache(maxsize=4096)
def _starts(s: str) -> re.Pattern[str]:
    """The words that start as a word stemmed to `s` does. Porter cuts suffixes, and where it
    rewrites one the stem's end differs from the word's only in a final "e" it put there
    ("-ational" -> "-ate", "hoping" -> "hope"), an "i" for a "y" ("happy" -> "happi"), or "bl"
    for "-bili-" ("sensibility" -> "sensible" -> "sensibl"). The pattern starts with letters, so
    the regex engine searches for them as a string; whether a match starts a word is checked by
    the caller."""
    if s.endswith("ble"):
        head = re.escape(s[:-2])
    elif s.endswith(("e", "bl")):
        head = re.escape(s[:-1])
    elif s.endswith("i"):
        head = re.escape(s[:-1]) + "[iy]"
    else:
        head = re.escape(s)
    return re.compile(head + r"[^\W_]*")


class _Window:
    """The window's cells (category, key and value of each row, in order) as one folded text, and
    where each cell starts in it."""

    def __init__(self, rows: Sequence[tuple[str, str, str]]) -> None:
        cells = [cell for row in rows for cell in row]
        text = "\n".join(cells)
        if text.isascii():
            text = text.lower()
        else:  # folding may change a cell's length: each cell on its own
            cells = [fold(cell) for cell in cells]
            text = "\n".join(cells)
        self.text = text.replace("_", " ")
        self.starts = list(accumulate((len(c) + 1 for c in cells[:-1]), initial=0))

    def counts(self, s: str, rows: int) -> list[float]:
        """Each row's words stemmed to `s`, each weighed by its column."""
        tf = [0.0] * rows
        text = self.text
        for m in _starts(s).finditer(text):
            at = m.start()
            if (at == 0 or not text[at - 1].isalnum()) and stem(m.group()) == s:
                row, column = divmod(bisect_right(self.starts, at) - 1, 3)
                tf[row] += WEIGHTS[column]
        return tf


def order(
    rows: Sequence[tuple[str, str, str]], query: list[str], counts: dict[str, int], total: int
) -> list[float]:
    """BM25 of each row (category, key, value) for the query's stems (`stems`); `counts[s]`: the
    user's facts holding stem `s`, `total`: the user's facts. Higher is better."""
    if not rows:
        return []
    # Words, counted by their separators (a key's words are joined by "_").
    lengths = [c.count(" ") + k.count("_") + k.count(" ") + v.count(" ") + 3 for c, k, v in rows]
    average = sum(lengths) / len(lengths) or 1.0
    window = _Window(rows)
    scores = [0.0] * len(rows)
    for s in query:
        idf = bm25_idf(total, max(1, counts.get(s, 1)))
        for i, f in enumerate(window.counts(s, len(rows))):
            if f:
                scores[i] += idf * bm25_tf(f, bm25_norm(lengths[i], average))
    return scores
