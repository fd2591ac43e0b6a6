"""Chunking: a chunk never leaves its section (so never spans two pages, slides or sheet ranges),
keeps its place and heading path, stays within the token estimate, cuts at paragraphs, then
sentences, then words, and overlaps the chunk before it inside a section."""

from __future__ import annotations

import itertools
import re

from navi.documents.base import Extracted, Place, Section
from navi.documents.chunking import chunk, estimate_tokens
from navi.documents.extract import extract
from tests.documents import makers


def sentences(prefix: str, count: int) -> list[str]:
    return [f"{prefix} sentence number {n} says something about clause {n}." for n in range(count)]


def test_the_estimate() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a " * 100) == 130  # words × 1.3 wins for short words
    assert estimate_tokens("x" * 400) == 100  # characters / 4 for long ones
    assert estimate_tokens("文書を読む") == 5  # a token a CJK character


def test_a_chunk_never_spans_two_pages_and_keeps_its_place() -> None:
    sections = [
        Section(" ".join(sentences(f"Page{n}", 3 + n * 15)), Place(page=n, headings=("Terms", f"Part {n}")))
        for n in range(1, 5)
    ]
    chunks = chunk(Extracted("pdf", sections, pages=4), max_tokens=120, overlap_tokens=20)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len(chunks) > 4
    for c in chunks:
        section = sections[c.place.page - 1]  # type: ignore[operator]
        assert c.place == section.place
        assert c.text in section.text  # only its own section's words
        assert estimate_tokens(c.text) <= 120
        other = {f"Page{n}" for n in range(1, 5)} - {f"Page{c.place.page}"}
        assert not any(word in c.text for word in other)
    assert [c.place.page for c in chunks] == sorted(c.place.page for c in chunks)  # type: ignore[type-var]


def test_every_sentence_is_in_some_chunk_and_neighbours_overlap() -> None:
    text = " ".join(sentences("Long", 60))
    chunks = chunk(Extracted("text", [Section(text)]), max_tokens=100, overlap_tokens=30)
    assert len(chunks) >= 6
    for sentence in sentences("Long", 60):
        assert any(sentence in c.text for c in chunks)
    for before, after in itertools.pairwise(chunks):
        first_sentence = re.split(r"(?<=\.) ", after.text)[0]
        assert first_sentence in before.text  # the next chunk starts with the end of this one
        assert after.text.endswith(".") and after.text[0].isupper()  # cut between sentences
        shared = estimate_tokens(first_sentence)
        assert shared <= 30


def test_cuts_fall_between_paragraphs_when_they_fit() -> None:
    paragraphs = [" ".join(sentences(f"P{n}", 4)) for n in range(12)]  # ~70 tokens each
    chunks = chunk(Extracted("text", [Section("\n\n".join(paragraphs))]), max_tokens=250, overlap_tokens=40)
    assert len(chunks) >= 3
    for c in chunks:
        for part in c.text.split("\n\n")[1:]:  # every paragraph after the first is whole
            assert part in paragraphs
        assert estimate_tokens(c.text) <= 250


def test_a_short_section_is_one_chunk_as_it_is() -> None:
    section = Section(
        "Termination\n\nEither party may terminate.", Place(headings=("Contract", "Termination"))
    )
    (only,) = chunk(Extracted("docx", [section]))
    assert only.text == section.text
    assert only.place.headings == ("Contract", "Termination")
    assert only.ordinal == 0


def test_text_without_sentences_or_spaces_is_still_cut_within_the_limit() -> None:
    words = " ".join(f"w{n}" for n in range(3000))
    cjk = "文書" * 1000
    url = "https://example.org/" + "a" * 5000
    chunks = chunk(Extracted("text", [Section(words), Section(cjk), Section(url)]), max_tokens=100)
    assert all(estimate_tokens(c.text) <= 100 for c in chunks)
    assert "".join(c.text for c in chunks if "文" in c.text).count("文書") >= 1000
    assert {f"w{n}" for n in range(3000)} <= {w for c in chunks for w in c.text.split()}


def test_rows_of_a_sheet_are_cut_between_rows() -> None:
    rows = "\n".join(f"item {n} | {n} | {n * 2} | owner {n}" for n in range(200))
    section = Section(rows, Place(sheet="Budget", cells="A1:D200"))
    chunks = chunk(Extracted("xlsx", [section], pages=1), max_tokens=80, overlap_tokens=10)
    for c in chunks:
        assert c.place == section.place
        assert all(re.fullmatch(r"item \d+ \| \d+ \| \d+ \| owner \d+", line) for line in c.text.split("\n"))


def test_chunks_of_a_real_document_keep_the_heading_path() -> None:
    chunks = chunk(extract(makers.contract_docx(), "contract.docx"), max_tokens=40, overlap_tokens=5)
    (termination,) = [c for c in chunks if "ninety days" in c.text]
    assert termination.place.headings == ("Service contract", "Termination")
    assert termination.place.label() == "§ Termination"
    for c in chunks:  # usable for keyword search as they are: no markup, no runs of blanks
        assert "  " not in c.text and "<" not in c.text and "\x00" not in c.text


def test_the_default_sizes_give_passages_of_a_few_sentences_each_repeated_once() -> None:
    # The defaults (60 estimated tokens, 20 of overlap; bench/documents.py chose them): sentences
    # of about 15 tokens make passages of four, each starting with the last sentence of the one
    # before: every sentence is in one passage or two, never more.
    text = " ".join(sentences("Default", 40))
    chunks = chunk(Extracted("text", [Section(text)]))
    assert all(estimate_tokens(c.text) <= 60 for c in chunks)
    assert 11 <= len(chunks) <= 15
    for before, after in itertools.pairwise(chunks):
        first_sentence = re.split(r"(?<=\.) ", after.text)[0]
        assert before.text.endswith(first_sentence)
    counts = [sum(s in c.text for c in chunks) for s in sentences("Default", 40)]
    assert min(counts) == 1 and max(counts) == 2
