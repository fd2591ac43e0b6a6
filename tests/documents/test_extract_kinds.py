"""Each kind Navi reads, from a real file made by its own library: the known text comes out, at
the right place (page, heading path, slide, sheet and cells, chapter), with kind, pages and title."""

from __future__ import annotations

from navi.documents.base import Extracted, Section
from navi.documents.extract import extract
from tests.documents import makers


def where(extracted: Extracted, words: str) -> Section:
    """The one section holding `words`."""
    found = [s for s in extracted.sections if words in s.text]
    assert len(found) == 1, (words, [s.text[:80] for s in extracted.sections])
    return found[0]


def test_pdf_text_lands_on_its_page_under_its_bookmark() -> None:
    data = makers.pdf(
        {
            1: "The parties are Ada and Navi Ltd.",
            2: "Fees are due monthly.",
            3: "Either party may terminate with ninety days notice.",
            4: "Signed in Basel.",
        },
        count=4,
        sections={1: "Parties", 3: "Termination"},
        title="Service contract",
    )
    extracted = extract(data, "contract.pdf")
    assert (extracted.kind, extracted.pages, extracted.title) == ("pdf", 4, "Service contract")
    assert extracted.warnings == []
    third = where(extracted, "ninety days notice")
    assert third.place.page == 3
    assert third.place.headings == ("Termination",)
    assert third.place.label() == "p. 3, § Termination"
    second = where(extracted, "Fees are due monthly")
    assert (second.place.page, second.place.headings) == (2, ("Parties",))
    assert where(extracted, "Signed in Basel").place.page == 4


def test_a_pdf_with_some_pages_scanned_is_read_with_a_warning_naming_them() -> None:
    data = makers.pdf({1: "Only the first page has text.", 4: "And the fourth."}, count=5)
    extracted = extract(data, "mixed.pdf")
    assert [s.place.page for s in extracted.sections] == [1, 4]
    assert len(extracted.warnings) == 1
    assert "pages 2-3, 5 have no text layer" in extracted.warnings[0]


def test_docx_paragraphs_carry_their_heading_path() -> None:
    extracted = extract(makers.contract_docx(), "contract.docx")
    assert (extracted.kind, extracted.title) == ("docx", "Service contract")
    termination = where(extracted, "ninety days notice")
    assert termination.place.headings[-1] == "Termination"
    assert termination.place.headings == ("Service contract", "Termination")
    payment = where(extracted, "paid within 30 days")
    assert payment.place.headings == ("Service contract", "Obligations", "Payment")
    assert "Hosting | 12 EUR" in payment.text  # the table under Payment, a row a line
    assert where(extracted, "between Ada and Navi").place.headings == ("Service contract",)


def test_xlsx_rows_are_cited_by_sheet_and_cell_range() -> None:
    extracted = extract(makers.budget_xlsx(), "budget.xlsx")
    assert (extracted.kind, extracted.pages) == ("xlsx", 2)
    espresso = where(extracted, "espresso machine")
    assert espresso.place.sheet == "Budget"
    first, last = espresso.place.cells.split(":")  # type: ignore[union-attr]
    assert first.startswith("A") and last.startswith("F")
    assert int(first[1:]) <= 25 <= int(last[1:])
    assert "line 25 | 25 | espresso machine | 75 | 100 | Ada" in espresso.text
    header = extracted.sections[0]
    assert header.place.cells is not None and header.place.cells.startswith("A1:F")
    assert header.text.startswith("Item | Q1 | Q2 | Q3 | Q4 | Owner")
    notes = where(extracted, "Remember the auditors")
    assert (notes.place.sheet, notes.place.cells) == ("Notes", "B3:B3")
    assert notes.place.label() == "sheet Notes, B3:B3"


def test_pptx_text_is_on_its_slide_under_the_slide_title() -> None:
    extracted = extract(makers.deck_pptx(), "deck.pptx")
    assert (extracted.kind, extracted.pages, extracted.title) == ("pptx", 3, "Welcome")
    roadmap = where(extracted, "third quarter")
    assert roadmap.place.slide == 2
    assert roadmap.place.headings == ("Roadmap",)
    assert "Notes: Mention the beta testers" in roadmap.text
    assert where(extracted, "Ask anything").place.slide == 3


def test_odt_headings_by_outline_level() -> None:
    body = (
        '<text:h text:outline-level="1">Lease</text:h><text:p>The flat is let from May.</text:p>'
        '<text:h text:outline-level="2">Termination</text:h>'
        '<text:p>Three months<text:s text:c="2"/>notice<text:note><text:note-body><text:p>a footnote'
        "</text:p></text:note-body></text:note> either way.</text:p>"
        "<table:table><table:table-row><table:table-cell><text:p>Rent</text:p></table:table-cell>"
        "<table:table-cell><text:p>900</text:p></table:table-cell></table:table-row></table:table>"
    )
    extracted = extract(makers.odf("odt", body, title="Lease agreement"), "lease.odt")
    assert (extracted.kind, extracted.title) == ("odt", "Lease agreement")
    termination = where(extracted, "notice either way")
    assert termination.place.headings == ("Lease", "Termination")
    assert "Three months notice either way." in termination.text  # spaces collapsed, note left out
    assert "footnote" not in extracted.text
    assert "Rent | 900" in termination.text


def test_ods_cells_and_repeated_rows() -> None:
    body = (
        '<table:table table:name="Costs">'
        "<table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell>"
        "<table:table-cell><text:p>Cost</text:p></table:table-cell></table:table-row>"
        '<table:table-row table:number-rows-repeated="1048000"><table:table-cell '
        'table:number-columns-repeated="1024"/></table:table-row>'
        '<table:table-row><table:table-cell table:number-columns-repeated="2"/>'
        "<table:table-cell><text:p>late entry</text:p></table:table-cell></table:table-row>"
        "</table:table>"
    )
    extracted = extract(makers.odf("ods", body), "costs.ods")
    assert (extracted.kind, extracted.pages) == ("ods", 1)
    assert where(extracted, "Item | Cost").place.cells == "A1:B1"
    late = where(extracted, "late entry")
    assert (late.place.sheet, late.place.cells) == ("Costs", "C1048002:C1048002")


def test_odp_slides_with_titles() -> None:
    body = "".join(
        f'<draw:page draw:name="p{n}"><draw:frame presentation:class="title"><draw:text-box>'
        f'<text:p>{title}</text:p></draw:text-box></draw:frame><draw:frame presentation:class="outline">'
        f"<draw:text-box><text:p>{text}</text:p></draw:text-box></draw:frame></draw:page>"
        for n, (title, text) in enumerate([("Intro", "Why documents"), ("Plan", "Extraction first")], 1)
    )
    extracted = extract(makers.odf("odp", body), "talk.odp")
    assert (extracted.kind, extracted.pages) == ("odp", 2)
    plan = where(extracted, "Extraction first")
    assert (plan.place.slide, plan.place.headings) == (2, ("Plan",))


def test_html_drops_scripts_and_follows_headings() -> None:
    page = b"""<!doctype html><html><head><title>Handbook</title><style>p{color:red}</style></head>
    <body><script>var secret = "do not index";</script><nav>Home | About</nav>
    <h1>Handbook</h1><p>Welcome to the   team.</p>
    <h2>Leave</h2><p>You get 25 days<br>of paid leave.</p><ul><li>Ask early</li><li>Plan ahead</li></ul>
    <h3>Sick leave</h3><div>Tell your lead <b>before</b> nine.</div>
    <h2>Expenses</h2><table><tr><td>Train</td><td>yes</td></tr></table></body></html>"""
    extracted = extract(page, "handbook.html")
    assert (extracted.kind, extracted.title) == ("html", "Handbook")
    assert "do not index" not in extracted.text and "color:red" not in extracted.text
    leave = where(extracted, "25 days")
    assert leave.place.headings == ("Handbook", "Leave")
    assert "You get 25 days\nof paid leave." in leave.text and "Ask early\n\nPlan ahead" in leave.text
    assert where(extracted, "Tell your lead before nine.").place.headings == (
        "Handbook",
        "Leave",
        "Sick leave",
    )
    assert where(extracted, "Train").place.headings == ("Handbook", "Expenses")
    assert where(extracted, "Welcome to the team.").place.headings == ("Handbook",)


def test_markdown_heading_path_outside_code_fences() -> None:
    text = (
        "# Runbook\n\nStart here.\n\n## Deploy\n\nRun the script.\n\n"
        "```sh\n# not a heading\nmake deploy\n```\n\n"
        "### Rollback\n\nRevert the tag.\n\nBackups\n-------\n\nNightly at two.\n"
    )
    extracted = extract(text.encode(), "runbook.md")
    assert (extracted.kind, extracted.title) == ("markdown", "Runbook")
    assert where(extracted, "make deploy").place.headings == ("Runbook", "Deploy")
    assert where(extracted, "Revert the tag").place.headings == ("Runbook", "Deploy", "Rollback")
    assert where(extracted, "Nightly at two").place.headings == ("Runbook", "Backups")


def test_plain_text_in_any_common_encoding() -> None:
    extracted = extract("Grüße aus Zürich.\r\n\r\nZweiter Absatz.".encode("cp1252"), "note.txt")
    assert extracted.kind == "text"
    assert extracted.text == "Grüße aus Zürich.\n\nZweiter Absatz."
    assert extract("Ünïcode".encode("utf-16"), "u.txt").text == "Ünïcode"


def test_csv_rows_at_their_cells() -> None:
    rows = ["city;population"] + [f"town {n};{n * 1000}" for n in range(1, 120)]
    extracted = extract("\n".join(rows).encode(), "towns.csv")
    assert extracted.kind == "csv"
    assert extracted.sections[0].text.startswith("city | population\ntown 1 | 1000")
    town = where(extracted, "town 100 | 100000")
    first, last = town.place.cells.split(":")  # type: ignore[union-attr]
    assert int(first[1:]) <= 101 <= int(last[1:]) and last.startswith("B")


def test_epub_chapters_in_spine_order() -> None:
    data = makers.epub([("Arrival", "The ship came in at dawn."), ("Departure", "They left at noon.")])
    extracted = extract(data, "book.epub")
    assert (extracted.kind, extracted.pages, extracted.title) == ("epub", 2, "A Small Book")
    arrival = where(extracted, "at dawn")
    assert (arrival.place.page, arrival.place.headings) == (1, ("Arrival",))
    assert where(extracted, "at noon").place.page == 2
    assert extracted.text.index("dawn") < extracted.text.index("noon")


def test_eml_headers_body_and_attachments_listed_not_read() -> None:
    extracted = extract(makers.mail(), "numbers.eml")
    assert (extracted.kind, extracted.title) == ("eml", "Quarterly numbers")
    assert "From: Ada <ada@example.org>" in extracted.sections[0].text
    assert "Subject: Quarterly numbers" in extracted.sections[0].text
    assert "revenue grew by 12 percent" in extracted.text
    assert "report.pdf (application/pdf" in extracted.sections[-1].text
    assert "not really" not in extracted.text
    html = extract(makers.mail(html=True), "numbers.eml")
    assert "revenue grew by 12 percent" in html.text  # text/plain preferred over the HTML part
    assert "<b>" not in html.text


def test_the_content_decides_not_the_name() -> None:
    data = makers.pdf({1: "A PDF in disguise."}, count=1)
    assert extract(data, "notes.txt").kind == "pdf"
    assert extract(makers.contract_docx(), "download").kind == "docx"
    assert extract(b"<!DOCTYPE html><p>hi there</p>", "page").kind == "html"
    assert extract(makers.mail(), "message").kind == "eml"
