"""Uploads: streamed, capped while reading, executables refused, names made safe."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from navi.api.uploads import safe_filename
from navi.sessions.files import sweep as _sweep
from navi.testing.fake_server import FakeModelServer
from tests.server_helpers import LiveNavi, live_navi


@pytest.fixture
def navi(tmp_path: Path, fake_server: FakeModelServer) -> Iterator[LiveNavi]:
    with live_navi(tmp_path, fake_server, session_files_max_size_mb=1) as server:
        yield server


def upload(
    navi: LiveNavi, sid: str, name: str, data: bytes, media: str = "application/octet-stream"
) -> httpx.Response:
    with navi.client() as http:
        return http.post(f"/sessions/{sid}/files", files={"file": (name, data, media)})


def test_a_normal_upload(navi: LiveNavi, tmp_path: Path) -> None:
    sid = navi.new_session()
    resp = upload(navi, sid, "Quarterly report.pdf", b"%PDF-1.7 fake pdf body", "application/pdf")
    assert resp.status_code == 201
    body = resp.json()
    assert (
        body["name"] == "Quarterly report.pdf"
        and body["size"] == 22
        and body["media_type"] == "application/pdf"
    )
    stored = tmp_path / "session_files" / sid / "Quarterly report.pdf"
    assert body["path"] == str(stored) and stored.read_bytes() == b"%PDF-1.7 fake pdf body"
    assert [p.name for p in stored.parent.iterdir()] == ["Quarterly report.pdf"]  # no temp files left


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\system.ini", "system.ini"),
        ("/etc/shadow", "shadow"),
        ("a\x00b.txt", "ab.txt"),
        ("bad\nname\r\t.txt", "badname.txt"),
        ("..", "upload"),
        (".hidden", "hidden"),
        ("x" * 400 + ".txt", "x" * 146 + ".txt"),
    ],
)
def test_names_are_made_safe(navi: LiveNavi, tmp_path: Path, raw: str, safe: str) -> None:
    assert safe_filename(raw) == safe
    sid = navi.new_session()
    resp = upload(navi, sid, raw, b"harmless text")
    assert resp.status_code == 201, resp.text
    name = resp.json()["name"]  # the client may encode odd bytes on the wire (NUL → %00); still safe
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert all(ch.isprintable() for ch in name) and len(name) <= 150
    folder = tmp_path / "session_files" / sid
    assert [p.name for p in folder.iterdir()] == [name]
    assert (folder / name).read_bytes() == b"harmless text"
    assert not (tmp_path / "etc").exists() and not Path("/etc/passwd").read_bytes().startswith(b"harmless")


def test_duplicates_get_a_numeric_suffix(navi: LiveNavi) -> None:
    sid = navi.new_session()
    names = [upload(navi, sid, "notes.txt", f"v{i}".encode()).json()["name"] for i in range(3)]
    assert names == ["notes.txt", "notes (1).txt", "notes (2).txt"]


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("install.sh", b"echo hi", ".sh"),
        ("setup.exe", b"whatever", ".exe"),
        ("tool.py", b"print(1)", ".py"),
        ("archive.tar.sh", b"x", ".sh"),
        ("report.pdf", b"\x7fELF\x02\x01\x01" + b"\x00" * 64, "ELF executable"),
        ("notes.txt", b"#!/bin/sh\nrm -rf /\n", "interpreter line"),
        ("photo.jpg", b"MZ\x90\x00" + b"\x00" * 64, "Windows executable"),
    ],
)
def test_executables_are_refused_by_extension_and_content(
    navi: LiveNavi, tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    sid = navi.new_session()
    resp = upload(navi, sid, name, data)
    assert resp.status_code == 415 and reason in resp.json()["detail"]
    folder = tmp_path / "session_files" / sid
    assert not folder.exists() or list(folder.iterdir()) == []


def _complete(reply: bytes) -> bool:
    head, sep, body = reply.partition(b"\r\n\r\n")
    length = re.search(rb"content-length: (\d+)", head, re.I)
    return bool(sep) and length is not None and len(body) >= int(length.group(1))


def test_oversized_uploads_are_refused_while_streaming(navi: LiveNavi, tmp_path: Path) -> None:
    """Send 2 MB of an announced-as-endless chunked upload, then stop: the 413 must already be there."""
    sid = navi.new_session()
    host, port = navi.url.removeprefix("http://").split(":")
    head = (
        b'--x\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n"
    )

    def chunk(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            (
                f"POST /sessions/{sid}/files HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {navi.token}\r\n"
                "Content-Type: multipart/form-data; boundary=x\r\nTransfer-Encoding: chunked\r\n\r\n"
            ).encode()
            + chunk(head)
        )
        sent = 0
        try:
            for _ in range(32):  # 2 MB of the file, never the end of the body
                sock.sendall(chunk(b"\x01" * 65536))
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may already have answered and closed
        reply = b""
        while not _complete(reply):  # head and body may arrive in separate reads
            part = sock.recv(65536)
            if not part:
                break
            reply += part
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"1 MB limit" in reply
    assert sent <= 2 * 1024 * 1024
    folder = tmp_path / "session_files" / sid
    assert not folder.exists() or list(folder.iterdir()) == []


def test_declared_oversize_is_refused_without_reading(navi: LiveNavi) -> None:
    sid = navi.new_session()
    host, port = navi.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            (
                f"POST /sessions/{sid}/files HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {navi.token}\r\n"
                "Content-Type: multipart/form-data; boundary=x\r\n"
                f"Content-Length: {500 * 1024 * 1024}\r\n\r\n"
            ).encode()
            + b"--x\r\n"
        )
        status_line = sock.recv(4096).split(b"\r\n", 1)[0]
    assert status_line == b"HTTP/1.1 413 Request Entity Too Large"  # answered with 500 MB still unsent


def test_not_multipart_and_empty_uploads(navi: LiveNavi) -> None:
    sid = navi.new_session()
    with navi.client() as http:
        assert http.post(f"/sessions/{sid}/files", json={"file": "x"}).status_code == 415
        empty = http.post(f"/sessions/{sid}/files", data={"field": "value"}, files={})
        assert empty.status_code in (400, 415)
        broken = http.post(
            f"/sessions/{sid}/files",
            content=b"--x\r\nContent-Disposition: form-data; name=file; filename=a.txt\r\n\r\nunterminated",
            headers={"content-type": "multipart/form-data; boundary=x"},
        )
        assert broken.status_code == 400


def test_files_go_with_their_session_and_expire(navi: LiveNavi, tmp_path: Path) -> None:
    sid = navi.new_session()
    keep = navi.new_session()
    upload(navi, sid, "a.txt", b"a")
    upload(navi, keep, "b.txt", b"b")
    with navi.client() as http:
        assert http.delete(f"/sessions/{sid}").status_code == 200
    root = tmp_path / "session_files"
    assert not (root / sid).exists() and (root / keep / "b.txt").exists()
    fresh = navi.new_session()
    upload(navi, fresh, "c.txt", b"c")
    now = (root / fresh / "c.txt").stat().st_mtime  # the file system's clock, which stamped the files
    old = now - 48 * 3600
    os.utime(root / keep / "b.txt", (old, old))
    os.utime(root / keep, (old, old))
    assert _sweep(root, 24 * 3600, now=now + 1) == [keep]
    assert not (root / keep).exists() and (root / fresh / "c.txt").exists()
