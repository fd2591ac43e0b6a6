"""Streaming across workers on PostgreSQL: what `bench/streaming.py --workers N` measures.

In one run, on a throwaway PostgreSQL cluster (fsync on) and the fake model server:

1. Many sessions at 30 tokens/s through one `navi serve`, then through `navi serve --workers N`
   (one port, N processes), and the same load read straight from the fake server: the delay each
   frame picked up (its arrival minus the fake server's send stamp), and frames lost.
2. Cross-worker frames: two `navi serve` on one database; every turn is started through worker A
   and followed by a second socket on worker B; B's arrival minus A's, per frame.
3. Failover: two workers, 50 turns running on A (each also followed on B), then kill -9 of A: how
   long until every follower on B has its turn's last frame (`worker_lost`), and whether every
   message that was acknowledged (`stream_start`) is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import ollama
from websockets.asyncio.client import connect

from navi.testing.postgres import PostgresCluster
from navi.testing.served import wait_until_up

ROOT = Path(__file__).resolve().parents[1]
MODEL = "bench-model"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Navi:
    """One `navi serve` (with `workers` processes) on `database_url`."""

    def __init__(
        self, folder: Path, fake_port: int, database_url: str, *, workers: int = 1, **env: str
    ) -> None:
        self.folder = folder
        self.port = free_port()
        self.workers = workers
        folder.mkdir(parents=True, exist_ok=True)
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("DB_PATH", "DATABASE_URL")},
            "OLLAMA_HOST": f"http://127.0.0.1:{fake_port}",
            "OLLAMA_DEFAULT_MODEL": MODEL,
            "OLLAMA_NUM_CTX": "1000000",
            "OLLAMA_THINK": "false",
            "PLANNING_ENABLED": "false",
            "CONTEXT_COMPRESSION_ENABLED": "false",
            "DATABASE_URL": database_url,
            "NAVI_AUTH_DISABLED": "true",
            "SESSION_FILES_DIR": str(folder / "files"),
            "TOOLS_DIR": str(folder / "tools"),
            "LOG_LEVEL": "WARNING",
            **env,
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Navi:
        log = (self.folder / "serve.log").open("ab")
        command = [sys.executable, "-m", "navi", "serve", "--port", str(self.port)]
        if self.workers > 1:
            command += ["--workers", str(self.workers)]
        self.proc = subprocess.Popen(
            command, cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        wait_until_up(self.url, within=120, proc=self.proc, output=(self.folder / "serve.log").read_text)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws(self, session_id: str) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/sessions/{session_id}"

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def new_sessions(url: str, count: int) -> list[str]:
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        return [(await http.post("/sessions")).json()["session_id"] for _ in range(count)]


async def turn(
    ws_url: str, text: str, on_frame: Callable[[dict[str, Any], float], None], errors: list[str]
) -> None:
    """Send `text` and read the turn's frames until its end; each frame with its arrival time."""
    try:
        async with connect(ws_url, max_size=None, open_timeout=120) as ws:
            await ws.send(json.dumps({"type": "message", "content": text}))
            while True:
                frame = json.loads(await ws.recv())
                on_frame(frame, time.time())
                if frame["type"] == "error":
                    errors.append(f"{frame.get('code')}: {frame['message']}")
                    return
                if frame["type"] == "stream_stopped":
                    errors.append("stopped")
                    return
                if frame["type"] == "stream_end":
                    return
    except Exception as exc:  # a benchmark counts failures instead of stopping
        errors.append(f"{type(exc).__name__}: {exc}")


def stamped(delays: list[float]) -> Callable[[dict[str, Any], float], None]:
    def on_frame(frame: dict[str, Any], now: float) -> None:
        if frame["type"] == "stream_delta":
            delays.append(now - float(frame["delta"].split("|", 1)[0]))

    return on_frame


async def load(navi: Navi, sessions: int, seconds: float, rate: float = 30.0) -> dict[str, Any]:
    chunks = int(seconds * rate)
    sids = await new_sessions(navi.url, sessions)
    await asyncio.gather(*(turn(navi.ws(s), "hello", lambda *_: None, []) for s in sids))  # warm-up, naming
    await asyncio.sleep(2)
    delays: list[float] = []
    errors: list[str] = []
    await asyncio.gather(
        *(turn(navi.ws(s), f"stream {chunks} {rate}", stamped(delays), errors) for s in sids)
    )
    expected = sessions * chunks
    return {
        "frames": len(delays),
        "expected": expected,
        "lost": expected - len(delays),
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
        "p50": pct(delays, 0.5) * 1000,
        "p99": pct(delays, 0.99) * 1000,
    }


async def direct(fake_port: int, sessions: int, seconds: float, rate: float = 30.0) -> dict[str, Any]:
    client = ollama.AsyncClient(host=f"http://127.0.0.1:{fake_port}", timeout=120)
    delays: list[float] = []
    text = f"stream {int(seconds * rate)} {rate}"

    async def one() -> None:
        async for part in await client.chat(
            model=MODEL, messages=[{"role": "user", "content": text}], stream=True
        ):
            if part.message.content:
                delays.append(time.time() - float(part.message.content.split("|", 1)[0]))

    await asyncio.gather(*(one() for _ in range(sessions)))
    await client._client.aclose()
    return {"p50": pct(delays, 0.5) * 1000, "p99": pct(delays, 0.99) * 1000}


async def cross(a: Navi, b: Navi, sessions: int, seconds: float, rate: float = 30.0) -> dict[str, Any]:
    """Turns started through A, followed on B: per frame, B's arrival minus A's."""
    chunks = int(seconds * rate)
    sids = await new_sessions(a.url, sessions)
    await asyncio.gather(*(turn(a.ws(s), "hello", lambda *_: None, []) for s in sids))
    await asyncio.sleep(2)
    on_a: dict[tuple[str, int], float] = {}
    on_b: dict[tuple[str, int], float] = {}
    followers_ready = 0
    errors: list[str] = []

    async def follow(sid: str, started: asyncio.Event) -> None:
        nonlocal followers_ready
        try:
            async with connect(b.ws(sid), max_size=None, open_timeout=120) as ws:
                followers_ready += 1
                started.set()
                while True:
                    frame = json.loads(await ws.recv())
                    if "seq" in frame:
                        on_b[(frame["run_id"], frame["seq"])] = time.time()
                    if frame["type"] in ("stream_end", "error"):
                        return
        except Exception as exc:
            errors.append(f"B {type(exc).__name__}: {exc}")

    async def lead(sid: str) -> None:
        started = asyncio.Event()
        follower = asyncio.create_task(follow(sid, started))
        await started.wait()
        await asyncio.sleep(0.5)  # B listens on the session before the turn starts

        def on_frame(frame: dict[str, Any], now: float) -> None:
            if "seq" in frame:
                on_a[(frame["run_id"], frame["seq"])] = now

        await turn(a.ws(sid), f"stream {chunks} {rate}", on_frame, errors)
        await asyncio.wait_for(follower, 60)

    await asyncio.gather(*(lead(s) for s in sids))
    gaps = [(on_b[key] - on_a[key]) * 1000 for key in on_a if key in on_b]
    return {
        "sessions": sessions,
        "frames_a": len(on_a),
        "frames_b": len(on_b),
        "lost": len(on_a) - len(on_b),
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
        "p50": pct(gaps, 0.5),
        "p99": pct(gaps, 0.99),
    }


async def failover(a: Navi, b: Navi, turns: int, lease: float) -> dict[str, Any]:
    """`turns` long turns on A, each followed on B; kill -9 of A after they are all streaming."""
    sids = await new_sessions(a.url, turns)
    acknowledged: dict[str, str] = {}
    streaming: set[str] = set()
    all_streaming = asyncio.Event()
    ended: dict[str, float] = {}  # session → when B's follower had the turn's last frame
    codes: dict[str, str] = {}
    killed_at = 0.0

    async def follow(sid: str, ready: asyncio.Event) -> None:
        async with connect(b.ws(sid), max_size=None, open_timeout=120) as ws:
            ready.set()
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
                if frame["type"] == "stream_delta":
                    streaming.add(sid)
                    if len(streaming) == turns:
                        all_streaming.set()
                if frame["type"] in ("stream_end", "error", "stream_stopped"):
                    ended[sid] = time.time()
                    codes[sid] = frame.get("code", frame["type"])
                    return

    async def lead(sid: str) -> None:
        try:
            async with connect(a.ws(sid), max_size=None, open_timeout=120) as ws:
                await ws.send(json.dumps({"type": "message", "content": "stream 1200 20"}))  # 60 s
                while True:
                    frame = json.loads(await ws.recv())
                    if frame["type"] == "stream_start":
                        acknowledged[sid] = frame["message"]["id"]
        except Exception:  # A is killed: its sockets close
            return

    readies = [asyncio.Event() for _ in sids]
    followers = [asyncio.create_task(follow(s, r)) for s, r in zip(sids, readies, strict=True)]
    for ready in readies:
        await ready.wait()
    await asyncio.sleep(0.5)
    leaders = [asyncio.create_task(lead(s)) for s in sids]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(all_streaming.wait(), 60)
    await asyncio.sleep(2)
    killed_at = time.time()
    a.kill()
    await asyncio.gather(*followers, return_exceptions=True)
    await asyncio.gather(*leaders, return_exceptions=True)
    lost_messages = 0
    async with httpx.AsyncClient(base_url=b.url, timeout=60) as http:
        for sid, message_id in acknowledged.items():
            shown = (await http.get(f"/sessions/{sid}")).json()["messages"]
            if message_id not in {m["id"] for m in shown}:
                lost_messages += 1
    waits = [ended[s] - killed_at for s in ended]
    return {
        "turns": turns,
        "streaming_when_killed": len(streaming),
        "ended": len(ended),
        "worker_lost": sum(1 for c in codes.values() if c == "worker_lost"),
        "acknowledged": len(acknowledged),
        "lost_messages": lost_messages,
        "max_wait": max(waits) if waits else float("nan"),
        "p50_wait": pct(waits, 0.5),
        "lease": lease,
    }


async def run(fake_port: int, tmp: Path, workers: int, sessions: list[int], seconds: float) -> None:
    cluster = PostgresCluster(fsync=True).start()
    results: dict[str, Any] = {"load": []}
    try:
        for n in sessions:
            one = Navi(tmp / f"one-{n}", fake_port, cluster.create_database()).start()
            try:
                single = await load(one, n, seconds)
            finally:
                one.stop()
            many = Navi(tmp / f"many-{n}", fake_port, cluster.create_database(), workers=workers).start()
            try:
                spread = await load(many, n, seconds)
            finally:
                many.stop()
            results["load"].append((n, single, spread, await direct(fake_port, n, seconds)))
        database = cluster.create_database()
        a = Navi(tmp / "cross-a", fake_port, database).start()
        b = Navi(tmp / "cross-b", fake_port, database).start()
        try:
            results["cross"] = await cross(a, b, min(100, max(sessions)), seconds)
        finally:
            a.stop()
            b.stop()
        database = cluster.create_database()
        lease = "10"
        a = Navi(tmp / "failover-a", fake_port, database, RUN_LEASE_SECONDS=lease).start()
        b = Navi(tmp / "failover-b", fake_port, database, RUN_LEASE_SECONDS=lease).start()
        try:
            results["failover"] = await failover(a, b, 50, float(lease))
        finally:
            a.stop()
            b.stop()
    finally:
        cluster.stop()
    report(results, workers)


def report(results: dict[str, Any], workers: int) -> None:
    print(
        "| sessions at 30 tok/s | Navi | frames | lost | errors | delay p50 / p99 ms | direct p50 / p99 ms "
        "| added p50 / p99 ms |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n, single, spread, base in results["load"]:
        for name, r in (("1 worker", single), (f"{workers} workers", spread)):
            print(
                f"| {n} | {name} | {r['frames']:,} / {r['expected']:,} | {r['lost']} | {r['errors']} | "
                f"{r['p50']:.2f} / {r['p99']:.2f} | {base['p50']:.2f} / {base['p99']:.2f} | "
                f"{r['p50'] - base['p50']:.2f} / {r['p99'] - base['p99']:.2f} |"
            )
            if r["first_error"]:
                print(f"  first error: {r['first_error']}")
    c = results["cross"]
    print()
    print(
        f"Cross-worker frames ({c['sessions']} sessions at 30 tok/s started on A, followed on B): "
        f"{c['frames_b']:,} of {c['frames_a']:,} frames on B ({c['lost']} lost, {c['errors']} errors); "
        f"B after A p50 {c['p50']:.2f} ms, p99 {c['p99']:.2f} ms"
    )
    f = results["failover"]
    print()
    print(
        f"Failover (kill -9 of worker A during {f['turns']} turns, {f['streaming_when_killed']} streaming; "
        f"RUN_LEASE_SECONDS={f['lease']:g}): {f['ended']} of {f['turns']} followers on B ended "
        f"({f['worker_lost']} with worker_lost), p50 {f['p50_wait']:.2f} s and at most {f['max_wait']:.2f} s "
        f"after the kill; {f['acknowledged']} messages acknowledged, {f['lost_messages']} lost"
    )
