"""Memory's keyword ranking on SQLite: BM25 in Python over a window of FTS5 matches
(navi/storage/fact_rank.py), read as FTS5 would read the words."""

from __future__ import annotations

from navi.storage import fact_rank


def test_keyword_ranking_weighs_rare_words_and_reads_stems_as_fts5_does() -> None:
    """The Python BM25 over a window: a word is counted by its Porter stem (as FTS5 indexed it), a
    rarer word weighs more, a shorter fact with the same words ranks first, the value column weighs
    more than the category, and a word inside another word is not a match."""
    assert fact_rank.stem("running") == fact_rank.stem("runs") == "run"
    assert fact_rank.stem("as") == "as"  # SQLite's porter leaves words under 3 letters alone
    assert fact_rank.stems(["Cafés", "cafe", "café"]) == ["cafe"]  # folded as unicode61 does
    rows = [
        ("pets", "dog_name", "Rex the running dog"),  # "dog" twice, "running"
        ("work", "employer", "a dog food company runs it"),  # "dog" once, "runs"
        ("pets", "cat_name", "Mia"),
        ("dogs", "note", "hotdogs are not dogs"),  # "dogs" (category and value), "hotdogs" is not
    ]
    query = fact_rank.stems(["dog", "run"])
    common = fact_rank.order(rows, query, {"dog": 900, "run": 900}, 1_000)
    rare_run = fact_rank.order(rows, query, {"dog": 900, "run": 2}, 1_000)
    assert common[2] == 0.0 and all(score > 0 for i, score in enumerate(common) if i != 2)
    assert common[0] > common[1]  # more of the words, in a fact of the same length
    assert rare_run[1] > rare_run[3]  # "runs" weighs more once "run" is rare
    alone = fact_rank.order([("dogs", "note", "x"), ("note", "note", "dogs")], ["dog"], {"dog": 5}, 100)
    assert alone[1] > alone[0]  # the value weighs 2, the category 0.5
    assert fact_rank.order([("x", "y", "hotdogs")], ["dog"], {"dog": 1}, 100) == [0.0]
    # A word in more of the user's facts than the cap: estimated from how far back its newest
    # COUNT_CAP reach among the user's facts (here the newest 10,000 of 100,000).
    cap = fact_rank.COUNT_CAP
    assert fact_rank.matches(cap, 10_000, 100_000) == 20_000
    assert fact_rank.matches(12, 100_000, 100_000) == 12


def test_a_word_counts_for_its_own_stem_whatever_porter_rewrote() -> None:
    """Porter rewrites the end of some stems ("-bility" -> "-bl", "y" -> "i", an "e" added); the
    window's scan still finds each of these words for the stem of the word itself."""
    words = [
        "capability", "sensibility", "happily", "happy", "relational", "hoping", "ponies",
        "agreed", "conflated", "running", "generalization", "was", "electricity", "hopefulness",
    ]  # fmt: skip
    for word in words:
        (score,) = fact_rank.order([("note", "text", f"a {word} b")], fact_rank.stems([word]), {}, 100)
        assert score > 0, word


def test_folded_and_multi_line_values_are_counted_in_their_own_row() -> None:
    """A value with line breaks, or letters that folding shortens or lengthens (a ligature, an
    accent), does not shift the words of the rows after it into another row."""
    rows = [
        ("note", "text", "ﬁrst line\nsecond line"),  # the ligature folds to two letters
        ("note", "text", "Crème brûlée"),
        ("note", "text", "a dog"),
        ("note", "text", "nothing"),
    ]
    scores = fact_rank.order(rows, fact_rank.stems(["dog"]), {}, 100)
    assert [score > 0 for score in scores] == [False, False, True, False]
    scores = fact_rank.order(rows, fact_rank.stems(["creme"]), {}, 100)
    assert [score > 0 for score in scores] == [False, True, False, False]
