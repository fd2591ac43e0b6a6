"""The floor under Navi's CPU per streamed chunk: a bare relay that only reads each line from one TCP
connection and writes it to another, nothing else — no JSON, no WebSocket framing, no agent.

Three processes, as in `bench/streaming.py --cpu-only`'s second load: a source sending one small
NDJSON line every 1/RATE s on each of STREAMS connections (the model), a sink reading (the browser),
and the relay in this process, whose CPU time (user + system) is divided by the lines it passed.
A line that arrives alone and leaves alone costs a wake-up, a read and a write, whatever a server
does with it; this is that cost on the machine it runs on, on uvloop (what `navi serve` runs on)
and on the plain asyncio loop.

    .venv/bin/python bench/relay_floor.py [--streams 10] [--rate 300] [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

import uvloop

LINE = b'{"model":"m","message":{"role":"assistant","content":" word"},"done":false}\n'


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


async def side(kind: str, rate: float, seconds: float) -> None:
    async def source(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        began = time.perf_counter()
        sent = 0
        while time.perf_counter() - began < seconds:
            sent += 1
            writer.write(LINE)
            await writer.drain()
            await asyncio.sleep(max(0.0, began + sent / rate - time.perf_counter()))
        writer.close()

    async def sink(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(source if kind == "source" else sink, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(seconds + 30)


async def relay(source: int, sink: int, streams: int) -> tuple[int, float]:
    count = 0

    async def one() -> None:
        nonlocal count
        reader, keep = await asyncio.open_connection("127.0.0.1", source)
        _, writer = await asyncio.open_connection("127.0.0.1", sink)
        while line := await reader.readline():
            writer.write(line)
            count += 1
        keep.close()
        writer.close()

    began = cpu()
    await asyncio.gather(*(one() for _ in range(streams)))
    return count, cpu() - began


def measure(
    run: Callable[[Coroutine[Any, Any, tuple[int, float]]], tuple[int, float]], args: argparse.Namespace
) -> float:
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--side",
                kind,
                "--rate",
                str(args.rate),
                "--seconds",
                str(args.seconds),
            ],
            stdout=subprocess.PIPE,
        )
        for kind in ("source", "sink")
    ]
    try:
        ports = [int(p.stdout.readline()) for p in procs if p.stdout is not None]
        count, used = run(relay(ports[0], ports[1], args.streams))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    return used / max(count, 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--side", choices=("source", "sink"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        asyncio.run(side(args.side, args.rate, args.seconds))
        return
    print(f"| bare relay, {args.streams} streams at {args.rate:g} lines/s | CPU µs per line |")
    print("|---|---:|")
    for name, run in (
        ("uvloop", uvloop.run),
        ("asyncio", asyncio.run),
        ("uvloop", uvloop.run),
        ("asyncio", asyncio.run),
    ):
        print(f"| {name} | {measure(run, args):.1f} |", flush=True)


if __name__ == "__main__":
    main()
