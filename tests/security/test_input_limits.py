"""Limits on every input (issue 14, item 5).

Request bodies are counted as they arrive and refused past their route's cap; the sign-in form
takes a small urlencoded body only; archive imports have their own size and message caps; image_view
refuses decompression bombs before decoding; the filesystem tool reads by bounded chunks; and
`navi serve` bounds connections that have not sent a request yet and raises its open-file limit.
Everything goes through the real surface: a live Navi over TCP (raw sockets where the client must
misbehave), the `navi` command, the tools with real files, and `navi serve` as a real process.
Memory is measured by bench/input_limits.py, never asserted here.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from navi.cli.main import _register
from navi.cli.main import app as cli
from navi.config import Settings
from navi.testing.bombs import flat_png
from navi.testing.fake_server import FakeModelServer
from navi.testing.ports import free_port
from navi.testing.served import wait_until_up
from navi.tools.builtin.filesystem import MAX_PAGE_CHARS, FilesystemTool
from navi.tools.builtin.image import ImageViewTool
from navi.tools.paths import PathPolicy
from tests.server_helpers import LiveNavi, live_navi

MB = 1024 * 1024
_register()  # the `navi` subcommands, as the console script registers them


@pytest.fixture(scope="module")
def navi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveNavi]:
    """One live Navi with small caps for the module (no test here talks to a model), isolated like
    every test's: its own folder, no Navi variable from the shell."""
    tmp = tmp_path_factory.mktemp("limits")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name in Settings.model_fields:
            mp.delenv(name.upper(), raising=False)
        with (
            FakeModelServer() as fake,
            live_navi(
                tmp,
                fake,
                navi_max_request_mb=1,
                navi_import_max_mb=3,
                navi_import_max_messages=50,
                navi_header_timeout_seconds=1,
            ) as server,
        ):
            yield server


def exchange(url: str, head: str, body: bytes = b"", *, then: bytes = b"") -> bytes:
    """Send a raw request head (and the start of a body), maybe more, and return what comes back
    until the server closes or 10 s pass. A server that waits for the rest gets nothing more."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        try:
            if then:
                sock.sendall(then)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed already
        reply = b""
        try:
            while part := sock.recv(65536):
                reply += part
        except TimeoutError:
            pass
        except ConnectionResetError:
            pass
    return reply


def status(reply: bytes) -> int:
    assert reply.startswith(b"HTTP/1.1 "), reply[:200]
    return int(reply.split(b" ", 2)[1])


def error_body(reply: bytes) -> dict[str, str]:
    return dict(json.loads(reply.partition(b"\r\n\r\n")[2]))


# --- JSON bodies -----------------------------------------------------------------------------------


def test_a_declared_body_over_the_cap_is_refused_before_it_is_read(navi: LiveNavi) -> None:
    reply = exchange(
        navi.url,
        f"POST /sessions HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {navi.token}\n"
        f"Content-Type: application/json\nContent-Length: {300 * MB}\n",
        b'{"name": "',  # and nothing more: the answer must not wait for 300 MB
    )
    assert status(reply) == 413
    assert error_body(reply) == {
        "detail": "the request body is larger than the 1 MB limit",
        "code": "too_large",
    }


def test_a_streamed_body_is_refused_once_past_the_cap(navi: LiveNavi) -> None:
    def chunk(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    sid = navi.new_session()
    reply = exchange(
        navi.url,
        f"PATCH /sessions/{sid} HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {navi.token}\n"
        "Content-Type: application/json\nTransfer-Encoding: chunked\n",
        chunk(b'{"name": "x"' + b" " * 1000),
        then=b"".join(chunk(b" " * 65536) for _ in range(24)),  # 1.5 MB, and never the final chunk
    )
    assert status(reply) == 413 and error_body(reply)["code"] == "too_large"
    assert b"connection: close" in reply.lower()
    with navi.client() as http:
        assert http.get(f"/sessions/{sid}").json()["name"] is None


def test_bodies_under_the_cap_are_untouched(navi: LiveNavi) -> None:
    sid = navi.new_session()
    with navi.client() as http:
        padded = b'{"name": "Disk check"}' + b" " * (MB - 100)  # JSON may end in white space
        resp = http.patch(f"/sessions/{sid}", content=padded, headers={"content-type": "application/json"})
        assert resp.status_code == 200, resp.text
        assert resp.json()["name"] == "Disk check"


# --- the sign-in form ------------------------------------------------------------------------------


def test_login_refuses_multipart_before_anything_is_read(navi: LiveNavi) -> None:
    reply = exchange(
        navi.url,
        "POST /login HTTP/1.1\nHost: 127.0.0.1\nContent-Type: multipart/form-data; boundary=x\n"
        f"Content-Length: {1024 * MB}\n",
        b'--x\r\nContent-Disposition: form-data; name="token"; filename="a.bin"\r\n\r\n',
    )
    assert status(reply) == 415 and error_body(reply)["code"] == "unsupported_type"
    assert "application/x-www-form-urlencoded" in error_body(reply)["detail"]


def test_login_refuses_a_long_form_and_a_slow_one(navi: LiveNavi) -> None:
    form = "Content-Type: application/x-www-form-urlencoded\n"
    long = exchange(
        navi.url, f"POST /login HTTP/1.1\nHost: 127.0.0.1\n{form}Content-Length: 5000\n", b"token="
    )
    assert status(long) == 413 and error_body(long)["code"] == "too_large"
    # 100 bytes announced, 8 sent: the form must be complete within NAVI_HEADER_TIMEOUT_SECONDS (1 s)
    slow = exchange(
        navi.url, f"POST /login HTTP/1.1\nHost: 127.0.0.1\n{form}Content-Length: 100\n", b"token=ab"
    )
    assert status(slow) == 408 and error_body(slow)["code"] == "too_slow"


def test_login_with_the_form_still_signs_in(navi: LiveNavi) -> None:
    with navi.client(anonymous=True, follow_redirects=False) as http:
        resp = http.post("/login", data={"token": navi.token})
        assert resp.status_code == 303 and "navi_session" in resp.cookies


# --- archive imports -------------------------------------------------------------------------------


def archive_of(navi: LiveNavi, messages: int, *, pad: int = 0) -> dict[str, object]:
    sid = navi.new_session()
    with navi.client() as http:
        archive: dict[str, object] = http.get(f"/sessions/{sid}/export").json()
    archive["messages"] = [
        {
            "id": f"m{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "timestamp": "2026-01-01T00:00:00Z",
            "content": f"message {i}" + "." * pad,
            "metadata": {},
        }
        for i in range(messages)
    ]
    return archive


def test_imports_have_their_own_size_and_message_caps(navi: LiveNavi) -> None:
    with navi.client() as http:
        fifty = http.post("/sessions/import", json=archive_of(navi, 50))
        assert fifty.status_code == 201 and fifty.json()["messages"] == 50
        many = http.post("/sessions/import", json=archive_of(navi, 51))
        assert many.status_code == 422 and many.json()["code"] == "bad_archive"
        assert "51 entries; at most 50" in many.json()["detail"]
        assert "NAVI_IMPORT_MAX_MESSAGES" in many.json()["detail"]
        # 2 MB: over the 1 MB JSON cap of other routes, under the 3 MB import cap
        large = http.post("/sessions/import", json=archive_of(navi, 40, pad=50_000))
        assert large.status_code == 201, large.text
        listed = http.get("/sessions").json()
    too_large = exchange(
        navi.url,
        f"POST /sessions/import HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {navi.token}\n"
        f"Content-Type: application/json\nContent-Length: {4 * MB}\n",
        json.dumps(archive_of(navi, 1)).encode()[:1000],
    )
    assert status(too_large) == 413
    assert error_body(too_large) == {
        "detail": "the request body is larger than the 3 MB limit",
        "code": "too_large",
    }
    assert sorted(s["message_count"] for s in listed if s["message_count"]) == [40, 50]


def test_the_cli_import_has_the_same_caps(
    navi: LiveNavi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DB_PATH", str(tmp_path / "cli.db"))
    monkeypatch.setenv("TOOLS_DIR", str(tmp_path / "cli-tools"))
    monkeypatch.setenv("NAVI_IMPORT_MAX_MB", "1")
    monkeypatch.setenv("NAVI_IMPORT_MAX_MESSAGES", "50")
    runner = CliRunner()
    for name, archive, expected in [
        ("many.json", archive_of(navi, 51), "at most 50 can be imported (NAVI_IMPORT_MAX_MESSAGES)"),
        ("large.json", archive_of(navi, 30, pad=50_000), "larger than the 1 MB limit (NAVI_IMPORT_MAX_MB)"),
        (
            "deep.json",
            {"schema_version": "session-archive/v1", "x": json.loads("[" * 80 + "]" * 80)},
            "nested too deeply",
        ),
    ]:
        (tmp_path / name).write_text(json.dumps(archive))
        result = runner.invoke(cli, ["sessions", "import", str(tmp_path / name)])
        assert result.exit_code == 1 and expected in result.output, (name, result.output)
    assert not (tmp_path / "cli.db").exists()  # refused before a database was opened
    ok = runner.invoke(cli, ["sessions", "import", "-"], input=json.dumps(archive_of(navi, 50)))
    assert ok.exit_code == 0 and "(50 messages)" in ok.output, ok.output


# --- tools -----------------------------------------------------------------------------------------


async def test_image_view_refuses_a_decompression_bomb_before_decoding(tmp_path: Path) -> None:
    (tmp_path / "bomb.png").write_bytes(flat_png(8000, 8000))  # 62 kB on disk, 64 megapixels
    tool = ImageViewTool(PathPolicy([str(tmp_path)]))
    result = await tool.execute({"source": str(tmp_path / "bomb.png")})
    assert not result.success
    assert "8,000 × 8,000 pixels (64 megapixels); at most 40 megapixels are decoded" in (result.error or "")


async def test_image_view_still_takes_a_large_photo(tmp_path: Path) -> None:
    """A JPEG is measured at the scale it is decoded at: 7,000 × 6,000 (42 megapixels) is read at
    a quarter of its size."""
    from PIL import Image

    Image.new("L", (7000, 6000), 128).save(tmp_path / "photo.jpg", quality=50)
    result = await ImageViewTool(PathPolicy([str(tmp_path)])).execute({"source": str(tmp_path / "photo.jpg")})
    assert result.success, result.error
    assert result.metadata["original_width"] == 7000
    assert max(result.metadata["width"], result.metadata["height"]) <= 1568


async def test_filesystem_reads_a_file_without_newlines_by_the_page(tmp_path: Path) -> None:
    size = 20 * MB
    with (tmp_path / "blob.txt").open("w") as fh:
        for _ in range(size // MB):
            fh.write("x" * MB)
    with (tmp_path / "long.txt").open("w") as fh:
        fh.write("y" * (3 * MB) + "\nsecond line\nthird line\n")
    fs = FilesystemTool(PathPolicy([str(tmp_path)]))
    result = await fs.execute({"action": "read", "path": str(tmp_path / "blob.txt")})
    assert result.success
    assert result.output.split("\n")[1] == "x" * MAX_PAGE_CHARS  # one page of the line, not 20 MB of it
    assert f"line 1 is longer than {MAX_PAGE_CHARS:,} characters" in result.output
    assert result.output.endswith("[end of file]")
    first = await fs.execute({"action": "read", "path": str(tmp_path / "long.txt")})
    assert first.output.split("\n")[1] == "y" * MAX_PAGE_CHARS
    assert first.output.endswith("[more: continue with offset 2]")
    rest = await fs.execute({"action": "read", "path": str(tmp_path / "long.txt"), "offset": 2})
    assert "lines 2–3" in rest.output and "second line\nthird line" in rest.output
    assert rest.output.split("\n")[1:3] == ["second line", "third line"]


# --- navi serve ------------------------------------------------------------------------------------


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[bytes]
    folder: Path

    @property
    def token(self) -> str:
        """The token this Navi made for itself, read as a client of the same user reads it."""
        return (self.folder / "navi_token").read_text().strip()


# Like `prlimit --nofile=SOFT:HARD navi serve …`: set the limits, then become `navi serve`.
LIMITED = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, ({}, {})); "
    "os.execv(sys.executable, [sys.executable, '-m', 'navi', *sys.argv[1:]])"
)


def start_serve(tmp: Path, *, fd_limits: tuple[int, int] | None = None, **env: str) -> Served:
    port = free_port()
    names = {name.upper() for name in Settings.model_fields}
    base = {k: v for k, v in os.environ.items() if k.upper() not in names}  # nothing from the shell
    base.update(DB_PATH=str(tmp / "navi.db"), TOOLS_DIR=str(tmp / "tools"), OLLAMA_HOST="http://127.0.0.1:9")
    base.update(LOG_LEVEL="WARNING", **env)
    command = ["-c", LIMITED.format(*fd_limits)] if fd_limits else ["-m", "navi"]
    log = (tmp / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, *command, "serve", "--port", str(port)],
        cwd=tmp, env=base, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    log.close()
    return Served(f"http://127.0.0.1:{port}", proc, tmp)


def wait_up(served: Served, log: Path) -> None:
    # A bound, not a timing: three servers start at once beside a parallel suite.
    wait_until_up(served.url, within=120, proc=served.proc, output=log.read_text)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """Three `navi serve` processes, started together: `crowded` starts with 64 open files allowed
    (hard limit 256) and waits 30 s for request heads; `hasty` waits 1 s; `bursty` lets 32
    connections wait for their request head (64 for a moment, in a burst)."""
    dirs = {name: tmp_path_factory.mktemp(name) for name in ("crowded", "hasty", "bursty")}
    started = {
        "crowded": start_serve(dirs["crowded"], fd_limits=(64, 256), NAVI_HEADER_TIMEOUT_SECONDS="30"),
        "hasty": start_serve(dirs["hasty"], NAVI_HEADER_TIMEOUT_SECONDS="1"),
        "bursty": start_serve(
            dirs["bursty"], NAVI_MAX_PENDING_CONNECTIONS="32", NAVI_HEADER_TIMEOUT_SECONDS="30"
        ),
    }
    try:
        for name, served in started.items():
            wait_up(served, dirs[name] / "serve.log")
        yield started
    finally:
        for served in started.values():
            served.proc.terminate()
            served.proc.wait(timeout=15)


def half_open(url: str, count: int) -> list[socket.socket]:
    """Connections that start a request head and never finish it."""
    host, port = url.removeprefix("http://").split(":")
    socks = []
    for _ in range(count):
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks.append(sock)
    return socks


def closed_by_server(sock: socket.socket, wait: float) -> bool:
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_serve_raises_its_open_file_limit(servers: dict[str, Served]) -> None:
    limits = Path(f"/proc/{servers['crowded'].proc.pid}/limits").read_text()
    line = next(row for row in limits.splitlines() if row.startswith("Max open files"))
    assert line.split()[3:5] == ["256", "256"]  # started at 64


def test_half_open_sockets_cannot_starve_a_real_request(servers: dict[str, Served]) -> None:
    """300 sockets that never finish a request head, against a server allowed 256 open files:
    the oldest waiting ones are closed to make room, and a real request still gets through."""
    served = servers["crowded"]
    socks = half_open(served.url, 300)
    try:
        resp = httpx.get(f"{served.url}/health", timeout=10)
        assert resp.status_code == 200 and resp.json() == {"status": "ok"}
        closed = sum(closed_by_server(sock, 2) for sock in socks[:100])
        assert closed == 100  # the 100 oldest made room (at most 128 may wait: half of 256)
        assert not closed_by_server(socks[-1], 0.2)  # the newest still waits: 30 s is its deadline
    finally:
        for sock in socks:
            sock.close()


def connected(url: str, count: int) -> list[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    return [socket.create_connection((host, int(port)), timeout=10) for _ in range(count)]


def test_a_burst_of_real_clients_is_not_closed_for_crowding(servers: dict[str, Served]) -> None:
    """60 clients connect at once and then send their requests, past the 32 that may wait: the
    server accepts them all before it reads any, so closing the oldest at once (as it did) closed
    28 real clients whose requests were on the way. Within the grace second none is closed."""
    socks = connected(servers["bursty"].url, 60)
    try:
        time.sleep(0.2)  # every connection accepted, none has sent anything yet
        for sock in socks:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answered = 0
        for sock in socks:
            reply = b""
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):
                    reply += chunk
            answered += reply.startswith(b"HTTP/1.1 200")
        assert answered == 60
    finally:
        for sock in socks:
            sock.close()


def test_after_the_grace_second_a_burst_is_brought_back_to_the_cap(servers: dict[str, Served]) -> None:
    """60 connections that send nothing: once they have had their moment, the 28 oldest are
    closed and the 32 newest wait on (their deadline is 30 s)."""
    socks = connected(servers["bursty"].url, 60)
    try:
        assert sum(closed_by_server(sock, 3) for sock in socks[:28]) == 28
        assert not any(closed_by_server(sock, 0.05) for sock in socks[28:])
    finally:
        for sock in socks:
            sock.close()


def test_a_trickled_request_head_is_closed_at_its_deadline(servers: dict[str, Served]) -> None:
    """One header byte every 0.2 s keeps no socket open past NAVI_HEADER_TIMEOUT_SECONDS (1 s),
    on a new connection and on a kept-alive one between requests."""
    host, port = servers["hasty"].url.removeprefix("http://").split(":")
    for kept_alive in (False, True):
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            if kept_alive:
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            gone = False
            for _ in range(50):  # 10 s at most; the server closes it after about 1 s
                try:
                    sock.sendall(b"X")
                except (BrokenPipeError, ConnectionResetError):
                    gone = True
                    break
                if closed_by_server(sock, 0.2):
                    gone = True
                    break
            assert gone, f"a trickling {'kept-alive ' if kept_alive else ''}connection was never closed"


def test_a_body_sent_with_its_head_is_not_counted_as_head(servers: dict[str, Served]) -> None:
    """Clients often send the head and the start of the body in one packet: only the head counts."""
    url = servers["hasty"].url
    body = b'{"name": "big body"}' + b" " * (200 * 1024)
    reply = exchange(
        url,
        f"POST /sessions HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {servers['hasty'].token}\n"
        f"Content-Type: application/json\nContent-Length: {len(body)}\nConnection: close\n",
        body,
    )
    assert status(reply) == 201, reply[:300]


def test_oversized_request_heads_and_lines_are_refused(servers: dict[str, Served]) -> None:
    url = servers["hasty"].url
    head = exchange(url, "GET /health HTTP/1.1\nHost: 127.0.0.1\nX-Filler: " + "f" * (40 * 1024) + "\n")
    assert status(head) == 431
    line = exchange(url, "GET /sessions/" + "a" * 10_000 + " HTTP/1.1\nHost: 127.0.0.1\n")
    assert status(line) == 414
    # a WebSocket handshake with a 10 kB session id used to hang: the websockets parser stops at 8 kB
    socket_line = exchange(
        url,
        "GET /ws/sessions/" + "a" * 10_000 + " HTTP/1.1\nHost: 127.0.0.1\nUpgrade: websocket\n"
        "Connection: Upgrade\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\nSec-WebSocket-Version: 13\n",
    )
    assert status(socket_line) == 414
    assert httpx.get(f"{url}/health", timeout=10).status_code == 200
