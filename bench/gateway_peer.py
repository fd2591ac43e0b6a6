"""The same fake model stream through Navi and through LiteLLM's proxy, and a bare relay, in one run.

`bench/streaming.py --peer litellm` (issue 44, item 4). What a user would run instead of Navi to
put one endpoint in front of a local model server is a gateway such as LiteLLM's proxy
(`litellm[proxy]` from PyPI, `litellm --config …`): it reads the model's stream and writes it on
to the client as OpenAI server-sent events. Both read the same upstream here — the fake model
server's `/v1/chat/completions` (SSE), Navi through its `openai` backend — and each is measured
the same way:

- CPU per streamed chunk (user + system of the server's processes, from /proc): one stream as fast
  as the upstream sends it, and 10 streams at 300 chunks/s each;
- the delay each chunk picks up on its way with 100 sessions at 30 chunks/s (every chunk carries
  the upstream's send time), against the upstream read directly;
- the floor: `bench/relay_floor.py`'s bare relay (read a line, write it; no JSON, no framing) on
  uvloop, 10 streams at 300 lines/s.

LiteLLM is installed once into its own virtual environment (`~/.cache/navi/litellm-venv`), never
into Navi's: its proxy pins its own FastAPI and friends. `--litellm PATH` names another `litellm`.

    python -m venv ~/.cache/navi/litellm-venv
    ~/.cache/navi/litellm-venv/bin/pip install "litellm[proxy]==1.105.7"
    .venv/bin/python bench/streaming.py --peer litellm
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

LITELLM = Path.home() / ".cache" / "navi" / "litellm-venv" / "bin" / "litellm"
MODEL = "bench-model"
KEY = "sk-navi-bench-" + os.urandom(8).hex()
HEADERS = {"Authorization": f"Bearer {KEY}"}


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of `pid` and every process below it (Linux /proc)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += times.get(current, 0.0)
        todo += [child for child, parent in parents.items() if parent == current]
    return total


class LiteLLMProxy:
    """LiteLLM's proxy in front of the fake model server's OpenAI endpoint."""

    def __init__(self, tmp: Path, fake_port: int, port: int, executable: Path = LITELLM) -> None:
        self.tmp, self.fake_port, self.port, self.executable = tmp, fake_port, port, executable
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        if not self.executable.exists():
            raise SystemExit(f"no LiteLLM at {self.executable}: see bench/gateway_peer.py for the install")
        config = self.tmp / "litellm.yaml"
        config.write_text(
            json.dumps(  # JSON is YAML
                {
                    "model_list": [
                        {
                            "model_name": MODEL,
                            "litellm_params": {
                                "model": f"openai/{MODEL}",
                                "api_base": f"http://127.0.0.1:{self.fake_port}/v1",
                                "api_key": "none",
                            },
                        }
                    ],
                    "litellm_settings": {"telemetry": False, "drop_params": True},
                }
            )
        )
        env = {
            **os.environ,
            "LITELLM_MASTER_KEY": KEY,  # it refuses to start without one; a string compare per request
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of the price list at start
            "LITELLM_LOG": "ERROR",
        }
        self.proc = subprocess.Popen(
            [str(self.executable), "--config", str(config), "--port", str(self.port), "--num_workers", "1"],
            cwd=self.tmp,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{self.url}/health/liveliness", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("LiteLLM's proxy did not come up")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


async def sse_stream(
    http: httpx.AsyncClient, text: str, delays: list[float] | None, errors: list[str]
) -> int:
    """One streamed chat completion through an OpenAI-compatible server; its chunks (stamps)."""
    chunks = 0
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": text}]}
    try:
        async with http.stream("POST", "/v1/chat/completions", json=body) as response:
            if response.status_code != 200:
                errors.append(f"HTTP {response.status_code}: {(await response.aread())[:200]!r}")
                return 0
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                choices = json.loads(line[6:]).get("choices") or [{}]
                content = (choices[0].get("delta") or {}).get("content") or ""
                stamps = [s for s in content.split("|") if s]
                chunks += content.count("|")
                if delays is not None:
                    now = time.time()
                    delays.extend(now - float(s) for s in stamps if _number(s))
    except Exception as exc:  # a benchmark counts failures instead of stopping
        errors.append(f"{type(exc).__name__}: {exc}")
    return chunks


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


async def peer_fast(proxy: LiteLLMProxy, chunks: int) -> dict[str, float]:
    """One stream of `chunks` chunks as fast as the upstream sends them: CPU per chunk."""
    async with httpx.AsyncClient(base_url=proxy.url, timeout=300, headers=HEADERS) as http:
        await sse_stream(http, "stream 2000 0", None, [])  # warm-up
        before = tree_cpu(proxy.pid)
        began = time.perf_counter()
        got = await sse_stream(http, f"stream {chunks} 0", None, [])
        wall = time.perf_counter() - began
        used = tree_cpu(proxy.pid) - before
    return {"chunks": got, "cpu_us": used / max(got, 1) * 1e6, "fps": got / wall if wall else 0.0}


async def peer_load(proxy: LiteLLMProxy, sessions: int, seconds: float, rate: float) -> dict[str, Any]:
    """`sessions` streams at `rate` chunks/s at once: CPU per chunk and each chunk's delay."""
    text = f"stream {int(seconds * rate)} {rate}"
    limits = httpx.Limits(max_connections=sessions + 10, max_keepalive_connections=sessions + 10)
    async with httpx.AsyncClient(base_url=proxy.url, timeout=300, limits=limits, headers=HEADERS) as http:
        await asyncio.gather(*(sse_stream(http, "hello", None, []) for _ in range(sessions)))
        delays: list[float] = []
        errors: list[str] = []
        before = tree_cpu(proxy.pid)
        await asyncio.gather(*(sse_stream(http, text, delays, errors) for _ in range(sessions)))
        used = tree_cpu(proxy.pid) - before
    return {
        "chunks": len(delays),
        "expected": sessions * int(seconds * rate),
        "errors": len(errors),
        "first_error": errors[0] if errors else "",
        "cpu_us": used / max(len(delays), 1) * 1e6,
        "delays": delays,
    }


async def direct_load(fake_url: str, sessions: int, seconds: float, rate: float) -> list[float]:
    """The same load read straight from the upstream: the delays nobody added."""
    text = f"stream {int(seconds * rate)} {rate}"
    limits = httpx.Limits(max_connections=sessions + 10, max_keepalive_connections=sessions + 10)
    delays: list[float] = []
    async with httpx.AsyncClient(base_url=fake_url, timeout=300, limits=limits) as http:
        await asyncio.gather(*(sse_stream(http, text, delays, []) for _ in range(sessions)))
    return delays


def relay_floor_us(streams: int = 10, rate: float = 300.0, seconds: float = 8.0) -> float:
    """bench/relay_floor.py's bare relay on uvloop: CPU µs per line (its median of three)."""
    import argparse

    import relay_floor  # beside this script
    import uvloop

    args = argparse.Namespace(streams=streams, rate=rate, seconds=seconds)
    runs = sorted(relay_floor.measure(uvloop.run, args) for _ in range(3))
    return runs[1]
