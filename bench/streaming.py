"""Streaming through Navi against the same fake model server streamed directly, side by side.

Three processes: the fake model server (bench/fake_model.py), Navi (`navi serve`), and this client.
Measured in one run:

1. Time to first token with a 10- and a 5,000-message history: a WebSocket message to Navi until
   the first `stream_delta`, against the same request (same messages and tools) sent straight to the
   fake server with the official `ollama` client until its first content chunk. Runs alternate.
2. Frames per second through one socket (a 20,000-chunk reply sent as fast as possible), and the
   same reply read directly.
3. 100 and 300 sessions streaming at once at 30 tokens/s: every chunk carries the fake server's
   send time, so each frame's delay on arrival is known; the same load read directly gives the
   baseline, and the difference is what Navi adds. Errors are counted.
4. Event-loop stalls inside Navi during each phase (`NAVI_LOOP_MONITOR`, GET /debug/loop).
5. Navi's CPU per streamed chunk (from /proc): one socket as fast as the stream goes, and 10
   sockets at 300 chunks/s that keep up (`--cpu-only` measures just this).

    .venv/bin/python bench/streaming.py [--ttft-runs 40] [--sessions 100,300] [--seconds 6]

With `--workers N` (N > 1) it measures Navi on PostgreSQL instead (`bench/scaleout.py`): the load
through one worker and through `navi serve --workers N` in one run, cross-worker frames, and a
failover (kill -9 of a worker during 50 turns).

    .venv/bin/python bench/streaming.py --workers 2 [--sessions 300] [--seconds 6]

With `--peer litellm` it streams the same fake model through Navi and through LiteLLM's proxy (and a
bare relay, the floor) in one run: CPU per chunk and the delay added at 100 sessions
(bench/gateway_peer.py, which says how LiteLLM is installed beside Navi, never into its venv).

    .venv/bin/python bench/streaming.py --peer litellm [--chunks 20000] [--seconds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import ollama
from websockets.asyncio.client import connect

from navi.llm.messages import Message, ToolSpec, utcnow
from navi.llm.ollama_backend import to_ollama_messages, to_ollama_tools
from navi.sessions.archive import export_session
from navi.sessions.models import Session, new_session_id

ROOT = Path(__file__).resolve().parents[1]
MODEL = "bench-model"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Processes:
    """The fake model server and one Navi. `monitored=True` runs Navi with NAVI_LOOP_MONITOR: every
    event-loop step is timed, on the plain asyncio loop; otherwise Navi runs as users run it (uvloop)."""

    def __init__(
        self, tmp: Path, *, monitored: bool = False, fake_port: int | None = None, backend: str = "ollama"
    ) -> None:
        self.tmp = tmp
        self.monitored = monitored
        self.backend = backend  # "openai": Navi reads the fake server's `/v1/chat/completions` (SSE)
        self.own_fake = fake_port is None
        self.fake_port = fake_port or free_port()
        self.navi_port = free_port()
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        if self.own_fake:
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, str(ROOT / "bench" / "fake_model.py"), "--port", str(self.fake_port)],
                    cwd=self.tmp,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        data = self.tmp / ("monitored" if self.monitored else "plain")
        data.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "OLLAMA_HOST": f"http://127.0.0.1:{self.fake_port}",
            "OLLAMA_DEFAULT_MODEL": MODEL,
            "OLLAMA_NUM_CTX": "1000000",
            "OLLAMA_THINK": "false",
            "PLANNING_ENABLED": "false",
            "CONTEXT_COMPRESSION_ENABLED": "false",
            "NAVI_LOOP_MONITOR": "true" if self.monitored else "false",
            "DB_PATH": str(data / "navi.db"),
            "NAVI_AUTH_DISABLED": "true",  # a loopback benchmark; the token is not what it measures
            "SESSION_FILES_DIR": str(data / "files"),
            "TOOLS_DIR": str(data / "tools"),
            "LOG_LEVEL": "WARNING",
        }
        if self.backend == "openai":
            env |= {
                "DEFAULT_LLM_BACKEND": "openai",
                "OPENAI_BASE_URL": f"http://127.0.0.1:{self.fake_port}/v1",
                "OPENAI_DEFAULT_MODEL": MODEL,
            }
        self.procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "navi", "serve", "--port", str(self.navi_port)],
                cwd=data,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        deadline = time.monotonic() + 60
        for url in (f"http://127.0.0.1:{self.fake_port}/api/version", f"{self.navi}/health"):
            while True:
                try:
                    if httpx.get(url, timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{url} did not come up")
                time.sleep(0.1)

    @property
    def navi_pid(self) -> int:
        return self.procs[-1].pid

    @property
    def navi(self) -> str:
        return f"http://127.0.0.1:{self.navi_port}"

    @property
    def fake(self) -> str:
        return f"http://127.0.0.1:{self.fake_port}"

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(timeout=20)


def seeded_session(http: httpx.Client, size: int) -> str:
    messages = [
        (Message.user if i % 2 == 0 else Message.assistant)(f"history message {i}: short text")
        for i in range(size)
    ]
    now = utcnow()
    session = Session(
        id=new_session_id(),
        profile_id="secretary",
        created_at=now,
        last_active=now,
        messages=messages,
        context=messages,
    )
    resp = http.post("/sessions/import", json=export_session(session))
    resp.raise_for_status()
    return str(resp.json()["session_id"])


def direct_payload(http: httpx.Client, session_id: str, text: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """Exactly what Navi sends the model for this session: system prompt, history, new message, tools."""
    view = http.get(f"/sessions/{session_id}/context").json()
    messages = [
        Message.system(view["system_prompt"]),
        *[Message(**m) for m in view["messages"]],
        Message.user(text),
    ]
    profile = next(p for p in http.get("/agents/profiles").json() if p["id"] == "secretary")
    tools = {t["name"]: t for t in http.get("/agents/tools").json()}
    specs = [
        ToolSpec(name=n, description=tools[n]["description"], parameters=tools[n]["parameters"])
        for n in profile["tools"]
    ]
    return to_ollama_messages(messages), to_ollama_tools(specs)


async def navi_ttft(ws: Any, text: str) -> float:
    await ws.send(json.dumps({"type": "message", "content": text}))
    start = time.perf_counter()
    first = None
    while True:
        frame = json.loads(await ws.recv())
        if frame["type"] == "stream_delta" and first is None:
            first = time.perf_counter() - start
        if frame["type"] in ("stream_end", "error"):
            if frame["type"] == "error":
                raise RuntimeError(frame["message"])
            assert first is not None
            return first


async def direct_ttft(client: ollama.AsyncClient, messages: list[dict[str, Any]], tools: list[Any]) -> float:
    start = time.perf_counter()
    first = None
    async for part in await client.chat(
        model=MODEL,
        messages=messages,
        tools=tools,
        stream=True,
        options={"num_ctx": 1000000, "temperature": 0.7},
    ):
        if part.message.content and first is None:
            first = time.perf_counter() - start
    assert first is not None
    return first


async def loop_stats(http: httpx.AsyncClient, reset: bool = False) -> dict[str, Any]:
    resp = await http.get("/debug/loop", params={"reset": reset})
    if resp.status_code == 404:  # an unmonitored Navi
        return {"worst_step_ms": float("nan"), "steps_over_5ms": 0, "slow_steps_by": {}}
    return dict(resp.json())


async def phase_ttft(procs: Processes, size: int, runs: int) -> dict[str, Any]:
    with httpx.Client(base_url=procs.navi, timeout=60) as http:
        sid = seeded_session(http, size)
    client = ollama.AsyncClient(host=procs.fake)
    navi_times: list[float] = []
    direct_times: list[float] = []
    async with (
        httpx.AsyncClient(base_url=procs.navi, timeout=60) as http,
        connect(f"ws://127.0.0.1:{procs.navi_port}/ws/sessions/{sid}", max_size=None) as ws,
    ):
        for i in range(3):  # warm up both paths
            await navi_ttft(ws, f"warm-up {i}")
        with httpx.Client(base_url=procs.navi, timeout=60) as sync_http:
            messages, tools = direct_payload(sync_http, sid, "warm-up")
        await direct_ttft(client, messages, tools)
        with httpx.Client(base_url=procs.navi, timeout=60) as sync_http:
            messages, tools = direct_payload(sync_http, sid, "question")
        history = messages[:-1]
        await loop_stats(http, reset=True)
        for i in range(runs):
            navi_times.append(await navi_ttft(ws, f"question {i}"))
            # the same growing history Navi keeps, built locally so no measurement waits on Navi
            history += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": "ok"}]
            direct_times.append(
                await direct_ttft(client, [*history, {"role": "user", "content": f"q{i}"}], tools)
            )
        stalls = await loop_stats(http)
    await client._client.aclose()
    added = sorted(n - d for n, d in zip(navi_times, direct_times, strict=True))
    return {
        "size": size,
        "navi_p50": statistics.median(navi_times) * 1000,
        "direct_p50": statistics.median(direct_times) * 1000,
        "added_p50": statistics.median(added) * 1000,
        "added_p95": pct(added, 0.95) * 1000,
        "stall_ms": stalls["worst_step_ms"],
        "stalls_over_5ms": stalls["steps_over_5ms"],
        "slow_by": stalls["slow_steps_by"],
    }


async def phase_fps(procs: Processes, chunks: int) -> dict[str, float]:
    async with httpx.AsyncClient(base_url=procs.navi, timeout=60) as http:
        sid = (await http.post("/sessions")).json()["session_id"]
    cpu_before = cpu_seconds(procs.navi_pid)
    async with connect(f"ws://127.0.0.1:{procs.navi_port}/ws/sessions/{sid}", max_size=None) as ws:
        await ws.send(json.dumps({"type": "message", "content": f"stream {chunks} 0"}))
        count, first, last = 0, 0.0, 0.0
        while True:
            frame = json.loads(await ws.recv())
            if frame["type"] == "stream_delta":  # chunks, not frames: a socket behind gets them joined
                count += frame["delta"].count("|")
                last = time.perf_counter()
                first = first or last
            elif frame["type"] in ("stream_end", "error"):
                break
    navi_fps = (count - 1) / (last - first)
    navi_cpu_us = (cpu_seconds(procs.navi_pid) - cpu_before) / count * 1e6
    client = ollama.AsyncClient(host=procs.fake)
    count, first, last = 0, 0.0, 0.0
    async for part in await client.chat(
        model=MODEL, messages=[{"role": "user", "content": f"stream {chunks} 0"}], stream=True
    ):
        if part.message.content:
            count += part.message.content.count("|")
            last = time.perf_counter()
            first = first or last
    await client._client.aclose()
    return {"navi_fps": navi_fps, "direct_fps": (count - 1) / (last - first), "cpu_us": navi_cpu_us}


async def navi_stream(port: int, sid: str, text: str, delays: list[float], errors: list[str]) -> None:
    try:
        async with connect(f"ws://127.0.0.1:{port}/ws/sessions/{sid}", max_size=None, open_timeout=60) as ws:
            await ws.send(json.dumps({"type": "message", "content": text}))
            while True:
                frame = json.loads(await ws.recv())
                now = time.time()
                if frame["type"] == "stream_delta":  # one stamp per chunk; a socket behind gets several
                    delays.extend(now - float(stamp) for stamp in frame["delta"].split("|") if stamp)
                elif frame["type"] == "error":
                    errors.append(frame["message"])
                    return
                elif frame["type"] == "stream_end":
                    return
    except Exception as exc:  # a benchmark counts failures instead of stopping
        errors.append(f"{type(exc).__name__}: {exc}")


async def direct_stream(
    client: ollama.AsyncClient, text: str, delays: list[float], errors: list[str]
) -> None:
    try:
        async for part in await client.chat(
            model=MODEL, messages=[{"role": "user", "content": text}], stream=True
        ):
            if part.message.content:
                delays.append(time.time() - float(part.message.content.split("|", 1)[0]))
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")


async def phase_load(procs: Processes, sessions: int, seconds: float, rate: float = 30.0) -> dict[str, Any]:
    text = f"stream {int(seconds * rate)} {rate}"
    async with httpx.AsyncClient(base_url=procs.navi, timeout=60) as http:
        sids = [(await http.post("/sessions")).json()["session_id"] for _ in range(sessions)]
        # One short turn each first, so the measured turns are steady-state ones (the first exchange
        # also names the session, a model call of its own).
        warm: list[float] = []
        await asyncio.gather(*(navi_stream(procs.navi_port, s, "hello", warm, []) for s in sids))
        await asyncio.sleep(2)
        await loop_stats(http, reset=True)
        navi_delays: list[float] = []
        navi_errors: list[str] = []
        cpu_before = cpu_seconds(procs.navi_pid)
        await asyncio.gather(*(navi_stream(procs.navi_port, s, text, navi_delays, navi_errors) for s in sids))
        cpu_us = (cpu_seconds(procs.navi_pid) - cpu_before) / max(len(navi_delays), 1) * 1e6
        stalls = await loop_stats(http)
    client = ollama.AsyncClient(host=procs.fake, timeout=120)
    direct_delays: list[float] = []
    direct_errors: list[str] = []
    await asyncio.gather(
        *(direct_stream(client, text, direct_delays, direct_errors) for _ in range(sessions))
    )
    await client._client.aclose()
    expected = sessions * int(seconds * rate)
    return {
        "sessions": sessions,
        "rate": rate,
        "cpu_us": cpu_us,
        "frames": len(navi_delays),
        "expected": expected,
        "errors": len(navi_errors) + (expected - len(navi_delays) if not navi_errors else 0),
        "first_error": navi_errors[0] if navi_errors else "",
        "navi_p50": pct(navi_delays, 0.5) * 1000,
        "navi_p99": pct(navi_delays, 0.99) * 1000,
        "direct_p50": pct(direct_delays, 0.5) * 1000,
        "direct_p99": pct(direct_delays, 0.99) * 1000,
        "direct_errors": len(direct_errors),
        "stall_ms": stalls["worst_step_ms"],
        "stalls_over_5ms": stalls["steps_over_5ms"],
        "slow_by": stalls["slow_steps_by"],
    }


async def phase_cpu(procs: Processes) -> tuple[dict[str, float], dict[str, Any]]:
    """Navi's CPU per streamed chunk: one socket as fast as the stream goes (the socket falls behind
    and its deltas are joined), and 10 sockets at 300 chunks/s each (they keep up: a frame per
    chunk). Each after a warm-up turn."""
    await phase_fps(procs, 2000)
    fast = await phase_fps(procs, 20_000)
    kept_up = await phase_load(procs, 10, 10.0, rate=300.0)
    return fast, kept_up


def print_cpu(fast: dict[str, float], kept_up: dict[str, Any]) -> None:
    print("| Navi CPU per streamed chunk | µs |")
    print("|---|---:|")
    rate = f"{fast['navi_fps']:,.0f} chunks/s"
    print(f"| one socket, as fast as the stream goes ({rate}) | {fast['cpu_us']:.1f} |")
    print(
        f"| 10 sockets at 300 chunks/s (p99 added {kept_up['navi_p99'] - kept_up['direct_p99']:.1f} ms) | "
        f"{kept_up['cpu_us']:.1f} |"
    )


async def run_cpu(backend: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        procs = Processes(Path(tmp), backend=backend)
        procs.start()
        try:
            fast, kept_up = await phase_cpu(procs)
        finally:
            procs.stop()
    print_cpu(fast, kept_up)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        procs = Processes(Path(tmp))
        procs.start()
        try:
            cpu = await phase_cpu(procs)
            ttft = [await phase_ttft(procs, size, args.ttft_runs) for size in (10, 5000)]
            fps = await phase_fps(procs, args.chunks)
            load = [await phase_load(procs, n, args.seconds) for n in args.sessions]
            monitored = Processes(Path(tmp), monitored=True, fake_port=procs.fake_port)
            monitored.start()
            try:
                stall_runs = [await phase_ttft(monitored, 5000, 5)]
                stall_runs += [await phase_load(monitored, n, args.seconds) for n in args.sessions]
            finally:
                monitored.stop()
        finally:
            procs.stop()
    print("| history | Navi TTFT p50 ms | direct TTFT p50 ms | added p50 ms | added p95 ms |")
    print("|---:|---:|---:|---:|---:|")
    for r in ttft:
        print(
            f"| {r['size']:,} | {r['navi_p50']:.2f} | {r['direct_p50']:.2f} | {r['added_p50']:.2f} | "
            f"{r['added_p95']:.2f} |"
        )
    print()
    print(
        f"Chunks per second through one socket: {fps['navi_fps']:,.0f} (the fake server read directly: "
        f"{fps['direct_fps']:,.0f})"
    )
    print()
    print_cpu(*cpu)
    print()
    print(
        "| sessions at 30 tok/s | frames | errors | Navi delay p50 / p99 ms | direct p50 / p99 ms | "
        "added p50 / p99 ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for r in load:
        print(
            f"| {r['sessions']} | {r['frames']:,} / {r['expected']:,} | {r['errors']} | "
            f"{r['navi_p50']:.2f} / {r['navi_p99']:.2f} | {r['direct_p50']:.2f} / {r['direct_p99']:.2f} | "
            f"{r['navi_p50'] - r['direct_p50']:.2f} / {r['navi_p99'] - r['direct_p99']:.2f} |"
        )
        if r["first_error"]:
            print(f"  first error: {r['first_error']}")
    print()
    print("Event-loop steps, on an instrumented Navi (asyncio loop, every step timed) under the same loads:")
    print()
    print("| load | longest step ms | steps over 5 ms | over 5 ms, by coroutine |")
    print("|---|---:|---:|---|")
    names = ["TTFT turns, 5,000-message history", *[f"{n} sessions at 30 tok/s" for n in args.sessions]]
    for name, r in zip(names, stall_runs, strict=True):
        print(f"| {name} | {r['stall_ms']:.2f} | {r.get('stalls_over_5ms', 0)} | {r['slow_by'] or '—'} |")


async def run_peer(args: argparse.Namespace) -> dict[str, Any]:
    """Navi and LiteLLM's proxy on the same upstream (the fake server's OpenAI endpoint), one run."""
    import gateway_peer  # bench/gateway_peer.py, beside this script

    with tempfile.TemporaryDirectory() as tmp:
        procs = Processes(Path(tmp), backend="openai")
        procs.start()
        proxy = gateway_peer.LiteLLMProxy(Path(tmp), procs.fake_port, free_port(), Path(args.litellm))
        try:
            proxy.start()
            navi_fast, navi_kept = await phase_cpu(procs)
            peer_fast = await gateway_peer.peer_fast(proxy, args.chunks)
            peer_kept = await gateway_peer.peer_load(proxy, 10, 10.0, 300.0)
            navi_load = await phase_load(procs, 100, args.seconds)
            peer_load = await gateway_peer.peer_load(proxy, 100, args.seconds, 30.0)
            direct = await gateway_peer.direct_load(procs.fake, 100, args.seconds, 30.0)
        finally:
            proxy.stop()
            procs.stop()
    return {
        "navi_fast": navi_fast,
        "navi_kept": navi_kept,
        "navi_load": navi_load,
        "peer_fast": peer_fast,
        "peer_kept": peer_kept,
        "peer_load": peer_load,
        "direct_p50": pct(direct, 0.5) * 1000,
        "direct_p99": pct(direct, 0.99) * 1000,
    }


def print_peer(r: dict[str, Any], floor: float) -> None:
    nf, nk, pf, pk = r["navi_fast"], r["navi_kept"], r["peer_fast"], r["peer_kept"]
    print("| CPU µs per streamed chunk | Navi | LiteLLM proxy | Navi ÷ LiteLLM | Navi ÷ bare relay |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| one stream as fast as it goes (Navi {nf['navi_fps']:,.0f}, LiteLLM {pf['fps']:,.0f} chunks/s) | "
        f"{nf['cpu_us']:.1f} | {pf['cpu_us']:.1f} | {nf['cpu_us'] / pf['cpu_us']:.2f} | |"
    )
    print(
        f"| 10 streams at 300 chunks/s | {nk['cpu_us']:.1f} | {pk['cpu_us']:.1f} | "
        f"{nk['cpu_us'] / pk['cpu_us']:.2f} | {nk['cpu_us'] / floor:.2f} |"
    )
    print(f"| bare relay (uvloop), 10 streams at 300 lines/s | {floor:.1f} | | | |")
    print()
    nl, pl = r["navi_load"], r["peer_load"]
    p50, p99 = r["direct_p50"], r["direct_p99"]
    print("| 100 sessions at 30 chunks/s | chunks | errors | delay p50 / p99 ms | added p50 / p99 ms |")
    print("|---|---:|---:|---:|---:|")
    print(f"| upstream read directly (SSE) | | | {p50:.2f} / {p99:.2f} | |")
    print(
        f"| Navi (WebSocket) | {nl['frames']:,} / {nl['expected']:,} | {nl['errors']} | "
        f"{nl['navi_p50']:.2f} / {nl['navi_p99']:.2f} | "
        f"{nl['navi_p50'] - p50:.2f} / {nl['navi_p99'] - p99:.2f} |"
    )
    lp50, lp99 = pct(pl["delays"], 0.5) * 1000, pct(pl["delays"], 0.99) * 1000
    print(
        f"| LiteLLM proxy (SSE) | {pl['chunks']:,} / {pl['expected']:,} | {pl['errors']} | "
        f"{lp50:.2f} / {lp99:.2f} | {lp50 - p50:.2f} / {lp99 - p99:.2f} |"
    )
    for name, load in (("Navi", nl), ("LiteLLM", pl)):
        if load["first_error"]:
            print(f"  {name}'s first error: {load['first_error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ttft-runs", type=int, default=40)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--sessions", type=lambda s: [int(x) for x in s.split(",")], default=[100, 300])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--workers", type=int, default=1, help="N > 1: Navi on PostgreSQL, 1 and N workers")
    parser.add_argument("--cpu-only", action="store_true", help="only Navi's CPU per streamed chunk")
    parser.add_argument(
        "--backend",
        choices=("ollama", "openai"),
        default="ollama",
        help="with --cpu-only: the backend Navi reads the fake server with (NDJSON or SSE)",
    )
    parser.add_argument("--peer", choices=("litellm",), help="a peer gateway streamed too, side by side")
    litellm = Path.home() / ".cache/navi/litellm-venv/bin/litellm"
    parser.add_argument("--litellm", default=str(litellm), help="with --peer litellm: its executable")
    args = parser.parse_args()
    if args.peer:
        sys.path.insert(0, str(Path(__file__).parent))
        import gateway_peer

        found = asyncio.run(run_peer(args))
        print_peer(found, gateway_peer.relay_floor_us())
        return
    if args.cpu_only:
        asyncio.run(run_cpu(args.backend))
        return
    if args.workers > 1:
        scaled(args)
    else:
        asyncio.run(run(args))


def scaled(args: argparse.Namespace) -> None:
    import scaleout  # bench/scaleout.py, beside this script

    with tempfile.TemporaryDirectory() as tmp:
        fake = Processes(Path(tmp))
        fake.procs.append(
            subprocess.Popen(
                [sys.executable, str(ROOT / "bench" / "fake_model.py"), "--port", str(fake.fake_port)],
                cwd=tmp,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{fake.fake}/api/version", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("the fake model server did not come up")
                time.sleep(0.1)
            asyncio.run(scaleout.run(fake.fake_port, Path(tmp), args.workers, args.sessions, args.seconds))
        finally:
            fake.stop()


if __name__ == "__main__":
    main()
