"""Navi against a real model on llama-server: the time to first token Navi adds, and what its fixed
prompt costs in the model's own tokens.

Processes: llama-server (SmolLM2-135M-Instruct, `--jinja` with navi/testing/templates/
chatml-tools.jinja so tools are rendered, 2 slots sharing one KV cache), two identical Navis
(`navi serve`, `openai` backend, planning and compression off) — one talking to llama-server
through a recording proxy (a thread of this process) to capture the request body, one talking to
it directly to be timed — and the benchmark client. Measured in one run:

1. Time to first token. Navi: a WebSocket message until the first `stream_delta`. Direct: the exact
   request body Navi sends for that message (captured by the proxy) posted straight to
   llama-server, until the first content chunk. Every run opens a new session and sends the same
   message, so both requests are the same prompt and find it in llama-server's prompt cache; the
   side that goes first alternates; each answer is cut after its first token (Navi: `POST
   /sessions/{id}/stop`; direct: closing the stream). The prompt tokens llama-server read for each
   request (from `/slots`) are printed: 1 means the whole prompt matched the cache, so both sides
   sent the same prompt and paid the same.
2. The fixed prompt: the system text and every tool schema in the request Navi sent, rendered by
   the tools template (`/apply-template`) and counted by the model's tokenizer (`/tokenize`), total
   and per part (`count_tokens` of bench/prompt_tokens.py). `--before REV` measures Navi at an
   earlier git revision the same way (its `navi` package from `git archive`, run on this venv).

    .venv/bin/python bench/real_model.py [--runs 20] [--ctx 16384] [--before 10664c2]

`--conversation` runs bench/conversation.py instead: a 10-turn conversation through Navi as shipped
against the same conversation sent append-only, prompt tokens read per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from prompt_tokens import count_tokens  # noqa: E402

from navi.llm.messages import ToolSpec  # noqa: E402
from navi.testing.llama import LlamaServer, ServerOptions, free_port  # noqa: E402
from navi.testing.replay import Exchange, RecordingProxy  # noqa: E402
from navi.testing.served import NotUp, wait_until_up  # noqa: E402
from navi.testing.templates import CHATML_TOOLS, path  # noqa: E402

MESSAGE = "Hello! What can you help me with?"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Navi:
    """`navi serve` as a user runs it, on the openai backend, talking to the model at `base_url`."""

    def __init__(
        self,
        tmp: Path,
        base_url: str,
        model: str,
        ctx: int,
        source: Path | None = None,
        settings: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        data = tmp / f"navi-{self.port}"
        data.mkdir()
        env = {
            **os.environ,
            "DEFAULT_LLM_BACKEND": "openai",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_DEFAULT_MODEL": model,
            "OLLAMA_NUM_CTX": str(ctx),
            "PLANNING_ENABLED": "false",
            "CONTEXT_COMPRESSION_ENABLED": "false",
            "DB_PATH": str(data / "navi.db"),
            "NAVI_AUTH_DISABLED": "true",  # a loopback benchmark; the token is not what it measures
            "SESSION_FILES_DIR": str(data / "files"),
            "TOOLS_DIR": str(data / "tools"),
            "LOG_LEVEL": "WARNING",
            **(settings or {}),
        }
        if source is not None:  # an earlier revision's package shadows the installed one
            env["PYTHONPATH"] = str(source)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "navi", "serve", "--port", str(self.port)],
            cwd=data,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(data / "navi.log").open("wb"),
        )
        self.log = data / "navi.log"
        try:
            wait_until_up(self.url, within=60, proc=self.proc, output=lambda: self.log.read_text()[-2000:])
        except NotUp:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


async def wait_idle(llama: LlamaServer, proxy: RecordingProxy | None = None) -> None:
    """Until no call is in flight (naming runs after a turn) and no llama-server slot is busy."""
    if proxy is not None:
        proxy.wait_idle(timeout=120)
    # Idle for half a second running: a Navi schedules its post-turn calls (naming) just after the
    # turn ends, and a call that starts during a measurement would share the 2 cores with it.
    quiet = 0
    async with httpx.AsyncClient(timeout=10) as http:
        for _ in range(2400):
            slots = (await http.get(f"{llama.url}/slots")).json()
            quiet = 0 if any(s.get("is_processing") for s in slots) else quiet + 1
            if quiet >= 10:
                return
            await asyncio.sleep(0.05)
    raise RuntimeError("llama-server stayed busy")


async def prompt_read(llama: LlamaServer) -> int:
    """Prompt tokens the most recent request made llama-server evaluate (the rest came from cache)."""
    async with httpx.AsyncClient(timeout=10) as http:
        slots = (await http.get(f"{llama.url}/slots")).json()
    last = max(slots, key=lambda s: s.get("id_task", -1))
    return int(last.get("n_prompt_tokens_processed", -1))


async def navi_turn(
    navi: Navi, llama: LlamaServer, proxy: RecordingProxy | None = None
) -> tuple[float, int, Exchange | None]:
    """One new session, one message: seconds to the first `stream_delta`, the prompt tokens
    llama-server read, and (through a proxy) the request Navi sent."""
    async with httpx.AsyncClient(base_url=navi.url, timeout=60) as http:
        sid = (await http.post("/sessions")).json()["session_id"]
        seen = len(proxy.chat) if proxy else 0
        first: float | None = None
        async with connect(f"ws://127.0.0.1:{navi.port}/ws/sessions/{sid}", max_size=None) as ws:
            start = time.perf_counter()
            await ws.send(json.dumps({"type": "message", "content": MESSAGE}))
            while True:
                frame = json.loads(await ws.recv())
                if frame["type"] == "stream_delta" and first is None:
                    first = time.perf_counter() - start
                    await http.post(f"/sessions/{sid}/stop")
                if frame["type"] == "error":
                    raise RuntimeError(f"Navi: {frame['message']}")
                if frame["type"] in ("stream_end", "stream_stopped"):
                    break
    if first is None:
        raise RuntimeError("the turn ended without a token")
    read = await prompt_read(llama)
    await wait_idle(llama, proxy)
    return first, read, proxy.chat[seen] if proxy else None


async def direct_turn(llama: LlamaServer, body: dict[str, Any]) -> tuple[float, int]:
    """The same body straight to llama-server: seconds to the first content chunk, prompt tokens read."""
    raw = json.dumps(body).encode()
    async with httpx.AsyncClient(timeout=httpx.Timeout(300, connect=10)) as http:
        start = time.perf_counter()
        async with http.stream(
            "POST",
            f"{llama.url}/v1/chat/completions",
            content=raw,
            headers={"content-type": "application/json"},
        ) as resp:
            resp.raise_for_status()
            async for line in resp.aiter_lines():
                if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                    continue
                for choice in json.loads(line[5:]).get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content") or delta.get("reasoning_content"):
                        first = time.perf_counter() - start
                        break
                else:
                    continue
                break
            else:
                raise RuntimeError("llama-server answered without content")
    return first, await prompt_read(llama)


async def captured_body(navi: Navi, llama: LlamaServer, proxy: RecordingProxy) -> dict[str, Any]:
    _, _, exchange = await navi_turn(navi, llama, proxy)
    assert exchange is not None
    return dict(exchange.request)


async def phase_ttft(
    capture: Navi, timed: Navi, proxy: RecordingProxy, llama: LlamaServer, runs: int
) -> dict[str, Any]:
    """`capture` talks through the proxy and gives the body; `timed`, configured the same, talks to
    llama-server directly, so no proxy hop is in its figure. A new session with the same message
    makes the same request every time: the prompt tokens llama-server reads for Navi's request
    right after the direct one (1, the last token, when the prompt is the same) show it."""
    body = await captured_body(capture, llama, proxy)
    for _ in range(2):  # warm up: model pages, the timed Navi's first-call lookups, the prompt cache
        await navi_turn(timed, llama)
        await direct_turn(llama, body)
        await wait_idle(llama)
    navi_times: list[float] = []
    direct_times: list[float] = []
    navi_read: list[int] = []
    direct_read: list[int] = []
    for i in range(runs):
        if i % 2:
            d, dr = await direct_turn(llama, body)
            await wait_idle(llama)
            n, nr, _ = await navi_turn(timed, llama)
        else:
            n, nr, _ = await navi_turn(timed, llama)
            d, dr = await direct_turn(llama, body)
            await wait_idle(llama)
        navi_times.append(n)
        direct_times.append(d)
        navi_read.append(nr)
        direct_read.append(dr)
    again = await captured_body(capture, llama, proxy)
    added = [n - d for n, d in zip(navi_times, direct_times, strict=True)]
    return {
        "runs": runs,
        "navi_p50": statistics.median(navi_times) * 1000,
        "direct_p50": statistics.median(direct_times) * 1000,
        "added_p50": statistics.median(added) * 1000,
        "added_p95": pct(added, 0.95) * 1000,
        "navi_read": statistics.median(navi_read),
        "direct_read": statistics.median(direct_read),
        "same_body": again == body,
        "pairs": [
            (n * 1000, d * 1000, nr, dr)
            for n, d, nr, dr in zip(navi_times, direct_times, navi_read, direct_read, strict=True)
        ],
        "body": body,
    }


def fixed_prompt_tokens(llama: LlamaServer, body: dict[str, Any]) -> dict[str, Any]:
    """The system text and tools of a request Navi sent, counted by the server's template and tokenizer."""
    system = "\n\n".join(m.get("content") or "" for m in body["messages"] if m.get("role") == "system")
    specs = [
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"].get("description") or "",
            parameters=t["function"].get("parameters") or {},
        )
        for t in body.get("tools") or []
    ]
    counted = count_tokens(llama.url, system, specs)
    rendered = httpx.post(f"{llama.url}/apply-template", json=body, timeout=60).json()["prompt"]
    whole = httpx.post(f"{llama.url}/tokenize", json={"content": rendered, "add_special": True}, timeout=60)
    counted["request"] = len(whole.json()["tokens"])
    counted["system_chars"] = len(system)
    counted["tool_count"] = len(specs)
    return counted


async def cold_first_token(llama: LlamaServer, body: dict[str, Any]) -> float:
    """Seconds to the first token when the whole prompt is read (a new conversation on a cold
    server): the same body with llama-server's prompt cache bypassed for this request."""
    await wait_idle(llama)
    seconds, _ = await direct_turn(llama, {**body, "cache_prompt": False})
    await wait_idle(llama)
    return seconds


async def first_request(
    tmp: Path, proxy: RecordingProxy, llama: LlamaServer, ctx: int, source: Path
) -> dict[str, Any]:
    navi = Navi(tmp, proxy.base_url, llama.model, ctx, source=source)
    try:
        return await captured_body(navi, llama, proxy)
    finally:
        navi.stop()


def archive(rev: str, dest: Path) -> Path:
    """The `navi` package as it was at `rev` (read from git; the working tree is not touched)."""
    tar = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "navi"], check=True, capture_output=True
    ).stdout
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="navi-bench-") as tmp_name:
        tmp = Path(tmp_name)
        llama = LlamaServer(
            "smollm2",
            ServerOptions(ctx=args.ctx, parallel=2, extra_args=["--kv-unified"]),
            template=path(CHATML_TOOLS),
            log_path=tmp / "llama-server.log",
        )
        source = archive(args.before, tmp / "before") if args.before else None
        with llama, RecordingProxy(llama.url) as proxy:
            capture = Navi(tmp, proxy.base_url, llama.model, args.ctx)
            timed = Navi(tmp, llama.base_url, llama.model, args.ctx)
            try:
                ttft = await phase_ttft(capture, timed, proxy, llama, args.runs)
            finally:
                capture.stop()
                timed.stop()
            now = fixed_prompt_tokens(llama, ttft["body"])
            now["cold_s"] = await cold_first_token(llama, ttft["body"])
            before = None
            if source is not None:
                old_body = await first_request(tmp, proxy, llama, args.ctx, source)
                before = fixed_prompt_tokens(llama, old_body)
                before["cold_s"] = await cold_first_token(llama, old_body)
    print(
        f"llama-server {llama.model}, {args.ctx}-token window, {llama.threads} threads; message {MESSAGE!r}"
    )
    print()
    print(
        "| runs | Navi TTFT p50 ms | direct TTFT p50 ms | added p50 ms | added p95 ms | "
        "prompt tokens read p50 (Navi / direct) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {ttft['runs']} | {ttft['navi_p50']:.1f} | {ttft['direct_p50']:.1f} | {ttft['added_p50']:.1f} | "
        f"{ttft['added_p95']:.1f} | {ttft['navi_read']:.0f} / {ttft['direct_read']:.0f} |"
    )
    if args.verbose:
        print(
            "\nper run, ms (prompt tokens read): "
            + ", ".join(f"{n:.0f}({nr})/{d:.0f}({dr})" for n, d, nr, dr in ttft["pairs"])
        )
    if not ttft["same_body"]:
        print("\nnote: the request Navi sent after the runs differs from the one before them")
    print()
    columns = [("before " + args.before, before)] if before else []
    columns.append(("now", now))
    print("| part of the fixed prompt (SmolLM2 tokens) | " + " | ".join(name for name, _ in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    rows = [
        ('whole first request ("' + MESSAGE[:12] + '…")', "request"),
        ("fixed prompt: system + tools", "total"),
        ("system prompt", "system"),
        ("all tool schemas", "tools_total"),
        ("tool framing (template text)", "tool_framing"),
        ("tools sent", "tool_count"),
        ("system prompt characters", "system_chars"),
    ]
    for label, key in rows:
        print(f"| {label} | " + " | ".join(f"{c[key]:,}" for _, c in columns) + " |")
    print(
        "| first token with the prompt read cold, s | "
        + " | ".join(f"{c['cold_s']:.1f}" for _, c in columns)
        + " |"
    )
    names = list(dict.fromkeys([n for _, c in columns for n in c["tools"]]))
    for name in names:
        cells = [f"{c['tools'][name]:,}" if name in c["tools"] else "—" for _, c in columns]
        print(f"| tool `{name}` | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--ctx", type=int, default=16384, help="llama-server's window (and Navi's)")
    parser.add_argument("--verbose", action="store_true", help="also print every run's Navi/direct times")
    parser.add_argument("--before", help="a git revision to measure the fixed prompt of, for comparison")
    parser.add_argument(
        "--conversation", action="store_true", help="a multi-turn conversation against an append-only client"
    )
    parser.add_argument("--turns", type=int, default=10, help="with --conversation")
    parser.add_argument(
        "--ram-cache",
        choices=("on", "off", "both"),
        default="both",
        help="with --conversation: llama-server's RAM cache",
    )
    parser.add_argument(
        "--windows", default="4096,16384", help="with --conversation: slot sizes, comma-separated"
    )
    parser.add_argument(
        "--answer-tokens",
        type=int,
        default=256,
        help="with --conversation: Navi's LLM_MAX_TOKENS_ANSWER (the small model rambles to any cap)",
    )
    args = parser.parse_args()
    if args.conversation:
        from conversation import run_conversation  # bench/conversation.py: it uses this module's Navi

        caches = {"on": (True,), "off": (False,), "both": (True, False)}[args.ram_cache]
        windows = [int(w) for w in args.windows.split(",")]
        asyncio.run(run_conversation(args.turns, windows, caches, answer_tokens=args.answer_tokens))
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
