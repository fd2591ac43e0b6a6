"""Documents Navi must refuse, each with its code and a reason a person understands, quickly and
without reading more than it must: encrypted, damaged, cut short, scanned, zip bombs, too many
pages, too big — and the character limit, which keeps the start of the text and says so."""

from __future__ import annotations

import io
import time
import zipfile
from typing import Any

import msoffcrypto.format.ooxml
import pypdfium2
import pytest

from navi.documents.base import ExtractionError
from navi.documents.extract import Limits, extract
from tests.documents import makers

MB = 1024 * 1024


def refused(data: bytes, name: str, limits: Limits | None = None) -> ExtractionError:
    with pytest.raises(ExtractionError) as caught:
        extract(data, name, limits=limits)
    return caught.value


def test_a_pdf_with_a_password() -> None:
    data = makers.pdf({1: "Secret terms."}, count=1, password="hunter2")
    error = refused(data, "secret.pdf")
    assert error.code == "encrypted"
    assert "password" in error.reason


def test_an_office_file_with_a_password_is_an_ole_file() -> None:
    encrypted = io.BytesIO()
    msoffcrypto.format.ooxml.OOXMLFile(io.BytesIO(makers.contract_docx())).encrypt("hunter2", encrypted)
    for name in ("contract.docx", "contract"):
        error = refused(encrypted.getvalue(), name)
        assert error.code == "encrypted"
        assert "password" in error.reason


def test_a_pdf_cut_short() -> None:
    data = makers.pdf({n: f"Page {n} text." for n in range(1, 6)}, count=5)
    for fraction in (0.3, 0.7, 0.95):
        error = refused(data[: int(len(data) * fraction)], "cut.pdf")
        assert error.code == "corrupt"
        assert "damaged or cut short" in error.reason


def test_a_docx_cut_short() -> None:
    data = makers.contract_docx()
    error = refused(data[: len(data) // 2], "cut.docx")
    assert error.code == "corrupt"
    assert "DOCX" in error.reason


def test_a_docx_whose_xml_is_damaged() -> None:
    good = io.BytesIO(makers.contract_docx())
    damaged = io.BytesIO()
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(damaged, "w") as target:
        for info in source.infolist():
            body = source.read(info)
            target.writestr(info, body[: len(body) // 2] if info.filename == "word/document.xml" else body)
    error = refused(damaged.getvalue(), "damaged.docx")
    assert error.code == "corrupt"


def test_a_scanned_pdf_without_a_text_layer() -> None:
    error = refused(makers.pdf({}, count=3), "scan.pdf")
    assert error.code == "no_text"
    assert "no OCR" in error.reason


def test_a_zip_bomb_docx_is_refused_from_its_directory() -> None:
    bomb = makers.zip_bomb_docx(64 * MB)
    assert len(bomb) < MB
    started = time.monotonic()
    error = refused(bomb, "bomb.docx")
    assert error.code == "too_large"
    assert "zip bomb" in error.reason
    small = makers.zip_bomb_docx(8 * MB)
    error = refused(small, "bomb.docx", Limits(max_unpacked_bytes=4 * MB))
    assert error.code == "too_large"
    assert "unpacks to 8 MB" in error.reason
    assert time.monotonic() - started < 2


def test_ten_thousand_pages_are_refused_before_any_is_read() -> None:
    document = pypdfium2.PdfDocument.new()
    for _ in range(10_000):
        document.new_page(200, 200)
    buffer = io.BytesIO()
    document.save(buffer)
    document.close()
    started = time.monotonic()
    error = refused(buffer.getvalue(), "huge.pdf")
    assert time.monotonic() - started < 1
    assert error.code == "too_many_pages"
    assert "10,000 pages" in error.reason and "5,000" in error.reason
    assert refused(makers.pdf({1: "a"}, count=3), "three.pdf", Limits(max_pages=2)).code == "too_many_pages"


def test_a_file_over_max_bytes_is_refused_before_parsing() -> None:
    data = bytes(200 * MB)  # zeros: no pages of real memory until touched
    started = time.monotonic()
    error = refused(data, "big.pdf")
    assert time.monotonic() - started < 0.5
    assert error.code == "too_large"
    assert "200 MB" in error.reason and "100 MB" in error.reason


def test_the_character_limit_keeps_the_start_and_says_so() -> None:
    text = "\n\n".join(f"Paragraph {n} of a long story." for n in range(5000))
    extracted = extract(text.encode(), "story.txt", limits=Limits(max_chars=1000))
    assert len(extracted.text) == 1000
    assert extracted.text.startswith("Paragraph 0 of a long story.")
    assert extracted.warnings == ["only the first 1,000 characters of the text were kept"]


def test_the_deadline_is_kept_in_process_too() -> None:
    data = makers.pdf({n: f"Page {n}." for n in range(1, 4)}, count=3)
    error = refused(data, "slow.pdf", Limits(seconds=0))
    assert error.code == "timeout"


@pytest.mark.parametrize(
    ("data", "name", "code"),
    [
        (b"", "empty.txt", "no_text"),
        (b"   \n\n  ", "blank.md", "no_text"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "photo.png", "unsupported"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512), "old.doc", "unsupported"),
        (b"just some text", "fake.pdf", "corrupt"),
        (b"PK\x03\x04 not really a zip", "fake.docx", "corrupt"),
    ],
)
def test_what_is_not_a_readable_document(data: bytes, name: str, code: str) -> None:
    assert refused(data, name).code == code


def test_a_zip_that_is_no_document() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("photos/readme.txt", "holiday pictures")
    assert refused(buffer.getvalue(), "photos.zip").code == "unsupported"


def test_drm_and_password_protected_open_formats() -> None:
    book = makers.epub([("One", "Locked text.")], drm=True)
    assert refused(book, "locked.epub").code == "encrypted"
    sheet = makers.odf("odt", "<text:p>Locked.</text:p>", encrypted=True)
    assert refused(sheet, "locked.odt").code == "encrypted"


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("cut.xlsx", makers.budget_xlsx),
        ("cut.pptx", makers.deck_pptx),
        ("cut.epub", lambda: makers.epub([("One", "Text.")])),
        ("cut.odt", lambda: makers.odf("odt", "<text:p>Text.</text:p>")),
    ],
)
def test_zip_based_files_cut_short(name: str, make: Any) -> None:
    data = make()
    error = refused(data[: len(data) // 2], name)
    assert error.code == "corrupt"
    assert "cut short" in error.reason


def test_an_entity_bomb_in_opendocument_xml() -> None:
    entities = '<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {b} "{f"&{a};" * 10}">' for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
    data = makers.odf("odt", "<text:p>&i;</text:p>")
    source, bombed = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(bombed, "w") as target:
        for info in source.infolist():
            body = source.read(info)
            if info.filename == "content.xml":
                body = body.replace(b"?>", f"?><!DOCTYPE office:document-content [{entities}]>".encode(), 1)
            target.writestr(info, body)
    started = time.monotonic()
    error = refused(bombed.getvalue(), "bomb.odt")
    assert error.code == "corrupt"
    assert time.monotonic() - started < 1
