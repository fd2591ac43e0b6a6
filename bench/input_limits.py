"""What the input attacks of issue 14 (item 5) cost Navi, before and after its limits, in one run.

*Before* is Navi at `--before` (default 095d633, the last commit without these limits), unpacked
from git into a temporary folder; *after* is this working tree. Each attack gets a fresh process of
each, so every peak is that attack's alone:

- `navi serve` under attack (peak RSS is the process's VmHWM, /proc/PID/status):
  a 300 MB JSON body to `POST /sessions` (declared, and streamed chunked); a 1 GB multipart part
  to `/login` without a token (also: bytes the server wrote, /proc/PID/io `wchar`); a 100,000-
  and a 20,000-message archive to `POST /sessions/import` (also: the slowest `GET /health` answered
  meanwhile, i.e. how long the event loop was blocked); 2,000 half-open sockets against a server
  allowed 1,024 open files, then one real request;
- a process running one tool call, as the server does (its VmHWM before and after the call):
  `image_view` on a 0.7 MB PNG of 13,000 × 13,000 pixels, and `filesystem` read of a 400 MB file
  without a newline.

    .venv/bin/python bench/input_limits.py [--before REV] [--body-mb 300] [--login-mb 1024]
        [--messages 100000,20000] [--file-mb 400] [--image-side 13000] [--sockets 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from navi.testing.bombs import flat_png
from navi.testing.served import wait_until_up

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-0123456789abcdefghijklmnopqrstuvwxyz"
MB = 1024 * 1024
LAUNCH = (  # like `prlimit --nofile=N:N python -m navi …`
    "import os, resource, sys; n = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)) if n else None; "
    "os.execv(sys.executable, [sys.executable, '-m', 'navi', *sys.argv[2:]])"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def written(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


@dataclass
class Result:
    idle_mb: float
    peak_mb: float
    outcome: str
    extra: dict[str, str] = field(default_factory=dict)


class Server:
    """One `navi serve` of one tree (None: this one), in its own folder, with the bench token."""

    def __init__(self, tree: Path | None, work: Path, nofile: int = 0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        work.mkdir(parents=True, exist_ok=True)
        (work / "spool").mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NAVI_", "DB_", "OLLAMA_"))}
        env.update(
            NAVI_API_TOKEN=TOKEN,
            DB_PATH=str(work / "navi.db"),
            TOOLS_DIR=str(work / "tools"),
            OLLAMA_HOST="http://127.0.0.1:9",
            LOG_LEVEL="WARNING",
            TMPDIR=str(work / "spool"),  # where a form parser would spool to, on disk
        )
        if tree is not None:
            env["PYTHONPATH"] = str(tree)
        self.log = (work / "serve.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, str(nofile), "serve", "--port", str(self.port)],
            cwd=work,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_until_up(
            self.url, within=60, proc=self.proc, output=lambda: (work / "serve.log").read_text()[-2000:]
        )
        self.idle_kb = status_kb(self.proc.pid, "VmRSS")

    def peak_kb(self) -> int:
        return status_kb(self.proc.pid, "VmHWM")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def send_raw(url: str, head: str, body: Iterator[bytes], timeout: float = 120) -> str:
    """Send a request head and a body piece by piece; the status line (or what went wrong)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        try:
            for piece in body:
                sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused and closed mid-body: the answer is already there
        try:
            reply = sock.recv(4096)
        except (ConnectionResetError, TimeoutError) as exc:
            return f"no answer ({type(exc).__name__})"
    return reply.split(b"\r\n", 1)[0].decode(errors="replace").removeprefix("HTTP/1.1 ") or "closed"


def pieces(total: int, first: bytes = b"", last: bytes = b"", *, chunked: bool = False) -> Iterator[bytes]:
    block = b"a" * MB

    def frame(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data

    yield frame(first)
    sent = 0
    while sent < total:
        yield frame(block)
        sent += len(block)
    yield frame(last)
    if chunked:
        yield b"0\r\n\r\n"


def attack_body(server: Server, size_mb: int, chunked: bool) -> Result:
    first, last = b'{"name": "', b'"}'
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(first) + size_mb * MB + 2}"
    head = (
        f"POST /sessions HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {TOKEN}\n"
        f"Content-Type: application/json\n{length}\n"
    )
    outcome = send_raw(server.url, head, pieces(size_mb * MB, first, last, chunked=chunked))
    return Result(server.idle_kb / 1024, server.peak_kb() / 1024, outcome)


def attack_login(server: Server, size_mb: int) -> Result:
    first = b'--x\r\nContent-Disposition: form-data; name="token"; filename="a.bin"\r\n\r\n'
    last = b"\r\n--x--\r\n"
    head = (
        "POST /login HTTP/1.1\nHost: 127.0.0.1\nContent-Type: multipart/form-data; boundary=x\n"
        f"Content-Length: {len(first) + size_mb * MB + len(last)}\n"
    )
    before = written(server.proc.pid)
    outcome = send_raw(server.url, head, pieces(size_mb * MB, first, last))
    wrote = (written(server.proc.pid) - before) / MB
    return Result(server.idle_kb / 1024, server.peak_kb() / 1024, outcome, {"written": f"{wrote:,.0f} MB"})


def archive(messages: int) -> bytes:
    items = [
        {
            "id": f"m{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "timestamp": "2026-01-01T00:00:00Z",
            "content": f"message number {i}: a line of ordinary chat text of ordinary length.",
            "metadata": {},
        }
        for i in range(messages)
    ]
    doc = {
        "schema_version": "session-archive/v1",
        "exported_at": "2026-01-01T00:00:00Z",
        "generator": "bench",
        "session": {"id": "x", "created_at": "2026-01-01T00:00:00Z", "profile_id": "secretary"},
        "messages": items,
        "context": [{"ref": m["id"]} for m in items],
    }
    return json.dumps(doc).encode()


def attack_import(server: Server, messages: int) -> Result:
    body = archive(messages)
    slowest = 0.0
    done = threading.Event()

    def ping() -> None:  # how long the event loop leaves a trivial request waiting
        nonlocal slowest
        with httpx.Client(base_url=server.url, timeout=120) as http:
            while not done.is_set():
                started = time.perf_counter()
                http.get("/health")
                slowest = max(slowest, time.perf_counter() - started)
                time.sleep(0.02)

    pinger = threading.Thread(target=ping)
    pinger.start()
    started = time.perf_counter()
    try:
        resp = httpx.post(
            f"{server.url}/sessions/import",
            content=body,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
            timeout=300,
        )
        outcome = str(resp.status_code)
    except httpx.HTTPError as exc:
        outcome = type(exc).__name__
    took = time.perf_counter() - started
    done.set()
    pinger.join()
    extra = {
        "took": f"{took:.2f} s",
        "slowest /health": f"{slowest * 1000:,.0f} ms",
        "body": f"{len(body) / MB:.1f} MB",
    }
    return Result(server.idle_kb / 1024, server.peak_kb() / 1024, outcome, extra)


def attack_sockets(server: Server, count: int) -> Result:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this client needs `count` of its own
    socks = []
    try:
        for _ in range(count):
            try:
                sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                socks.append(sock)
            except OSError:
                break
        started = time.perf_counter()
        try:
            resp = httpx.get(f"{server.url}/health", timeout=10)
            outcome = f"{resp.status_code} in {(time.perf_counter() - started) * 1000:,.0f} ms"
        except httpx.HTTPError as exc:
            outcome = f"{type(exc).__name__} after {time.perf_counter() - started:.0f} s"
        alive = sum(1 for s in socks if _open(s))
    finally:
        for sock in socks:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    extra = {"half-open held": f"{alive:,} of {len(socks):,}"}
    return Result(server.idle_kb / 1024, server.peak_kb() / 1024, outcome, extra)


def _open(sock: socket.socket) -> bool:
    sock.settimeout(0.001)
    try:
        return sock.recv(1) != b""
    except TimeoutError:
        return True
    except OSError:
        return False


TOOL_CALL = """
import asyncio, json, sys
from pathlib import Path
from navi.tools.paths import PathPolicy

def hwm():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

kind, path = sys.argv[1], sys.argv[2]
policy = PathPolicy([str(Path(path).parent)])
if kind == "image":
    from navi.tools.builtin.image import ImageViewTool
    tool, params = ImageViewTool(policy), {"source": path}
else:
    from navi.tools.builtin.filesystem import FilesystemTool
    tool, params = FilesystemTool(policy), {"action": "read", "path": path}
idle = hwm()
result = asyncio.run(tool.execute(params))
text = result.output if result.success else "refused: " + (result.error or "").rsplit(": ", 1)[-1]
print(json.dumps({"idle": idle, "peak": hwm(), "outcome": text, "size": len(result.output)}))
"""


def tool_call(tree: Path | None, kind: str, path: Path) -> Result:
    """One tool call in a fresh process of `tree` (None: this one), run outside the repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NAVI_")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", TOOL_CALL, kind, str(path)],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        return Result(0, 0, f"crashed: {done.stderr.strip().splitlines()[-1][:80]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    outcome = out["outcome"].splitlines()[0][:90] if out["outcome"].startswith("refused") else "read"
    extra = {"took": f"{took:.1f} s", "output": f"{out['size']:,} chars"}
    return Result(out["idle"] / 1024, out["peak"] / 1024, outcome, extra)


def unpack(rev: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive_bytes = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "navi"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive_bytes, check=True)
    where = subprocess.run(
        [sys.executable, "-c", "import navi; print(navi.__file__)"],
        cwd=into.parent,  # not this repository: `-c` puts the working folder first on sys.path
        env={**os.environ, "PYTHONPATH": str(into)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(into)), f"the before tree is not the one imported: {where}"
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", default="095d633")
    parser.add_argument("--body-mb", type=int, default=300)
    parser.add_argument("--login-mb", type=int, default=1024)
    parser.add_argument("--messages", default="100000,20000")
    parser.add_argument("--file-mb", type=int, default=400)
    parser.add_argument("--image-side", type=int, default=13000)
    parser.add_argument("--sockets", type=int, default=2000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="navi-bench-limits-") as tmp_name:
        tmp = Path(tmp_name)
        trees: dict[str, Path | None] = {"before": unpack(args.before, tmp / "before-tree"), "after": None}
        files = tmp / "files"
        files.mkdir()
        (files / "bomb.png").write_bytes(flat_png(args.image_side, args.image_side, rgba=True))
        with (files / "oneline.txt").open("w") as fh:
            for _ in range(args.file_mb):
                fh.write("x" * MB)

        rows: list[tuple[str, dict[str, Result]]] = []

        def served(name: str, attack: Callable[[Server], Result], nofile: int = 0) -> None:
            results = {}
            for version, tree in trees.items():
                server = Server(tree, tmp / f"{version}-{len(rows)}", nofile)
                try:
                    results[version] = attack(server)
                finally:
                    server.close()
            rows.append((name, results))
            report(rows[-1])

        served(f"JSON body {args.body_mb} MB, Content-Length", lambda s: attack_body(s, args.body_mb, False))
        served(f"JSON body {args.body_mb} MB, chunked", lambda s: attack_body(s, args.body_mb, True))
        served(
            f"/login multipart part {args.login_mb} MB, no token", lambda s: attack_login(s, args.login_mb)
        )
        for count in (int(n) for n in args.messages.split(",")):
            served(f"import {count:,} messages", lambda s, count=count: attack_import(s, count))
        served(
            f"{args.sockets:,} half-open sockets, 1,024 files",
            lambda s: attack_sockets(s, args.sockets),
            1024,
        )
        side = f"{args.image_side:,}"
        for name, kind, path in [
            (
                f"image_view PNG {side}² ({(files / 'bomb.png').stat().st_size / MB:.1f} MB)",
                "image",
                files / "bomb.png",
            ),
            (f"filesystem read {args.file_mb} MB, no newline", "fs", files / "oneline.txt"),
        ]:
            rows.append((name, {v: tool_call(t, kind, path) for v, t in trees.items()}))
            report(rows[-1])

    print("\n| attack | before: peak RSS | after: peak RSS | peak ratio | before | after |")
    print("|---|---:|---:|---:|---|---|")
    for name, results in rows:
        b, a = results["before"], results["after"]
        ratio = f"{b.peak_mb / a.peak_mb:.1f}×" if a.peak_mb else "—"
        print(
            f"| {name} | {b.peak_mb:,.0f} MB (+{b.peak_mb - b.idle_mb:,.0f}) | "
            f"{a.peak_mb:,.0f} MB (+{a.peak_mb - a.idle_mb:,.0f}) | {ratio} | {describe(b)} | {describe(a)} |"
        )


def describe(result: Result) -> str:
    details = ", ".join(f"{k} {v}" for k, v in result.extra.items())
    return f"{result.outcome}{'; ' + details if details else ''}"


def report(row: tuple[str, dict[str, Result]]) -> None:
    name, results = row
    for version, r in results.items():
        print(
            f"{name:<48} {version:<6} idle {r.idle_mb:7.0f} MB  peak {r.peak_mb:7.0f} MB  {describe(r)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
