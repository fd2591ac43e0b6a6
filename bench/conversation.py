"""A 10-turn conversation through Navi against the same conversation sent append-only straight to
llama-server: the prompt tokens the server had to read on each turn (every call of the turn
added: answers, planning, naming, summaries), and the time to the first token.

Per configuration (the window: 4,096 and 16,384 tokens a slot; llama-server's RAM prompt cache on
and off), on fresh servers:

1. Navi, as shipped (planning and compression on), the `openai` backend talking to llama-server
   (`--parallel 2` with twice the window, `--cache-reuse 256`, as docs/agent.md asks) through a
   recording proxy (a thread of this process) that shows what each call was for and read
   (`timings.prompt_n`). A turn's total is the server's own counter (`/metrics`,
   `llamacpp:prompt_tokens_total`), which also counts a call closed before its end (a summary
   stopped once it loops sends no timings). Each turn waits until the server is idle (naming and
   summaries run after an answer). Then the first turn of a second conversation of the same profile.
2. The baseline, on a new server of the same configuration: Navi's own first answer request
   (system prompt, tools, options) with the conversation appended turn after turn and nothing
   else changed — what an append-only client sends. Its own answers are appended, each capped at
   the tokens Navi's answer had on that turn (so both conversations grow alike; uncapped, the
   small model writes until the slot is full). When the history no longer fits the slot, the
   baseline stops there: an append-only client cannot go on without cutting its history.

Both servers sample with the same seed (`--seed 1`), so the same prompt gets the same answer on
either side and the two conversations stay the same text (the "answer tokens" rows show it).
Without it the model's sampling (temperature 0.7) made the two conversations drift apart: in one
run Navi's answers ran to the 256-token cap every turn and the baseline's stopped at 30–60, so by
turn 10 Navi's slot held 4,790 tokens against 3,026, and reading the same ~20 new tokens over the
longer cache took ~1.5× as long. That, not Navi, was the gap in time to first token.

    .venv/bin/python bench/real_model.py --conversation [--turns 10] [--answer-tokens 256]
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from real_model import Navi, wait_idle
from websockets.asyncio.client import connect

from navi.testing.agent_script import EXTRACT_MARK, NAMING_MARK, PLANNING_MARK, PROFILE_MARK, SUMMARY_MARK
from navi.testing.llama import LlamaServer, ServerOptions
from navi.testing.replay import Exchange, RecordingProxy
from navi.testing.templates import CHATML_TOOLS, path

MESSAGES = [
    "Hi! I'm planning a weekend in Porto.",
    "What should I pack for rainy weather?",
    "I like old bookshops.",
    "Any tips for trying the local food?",
    "How do I get from the airport to the centre?",
    "Is it easy to walk around?",
    "What about a day trip outside the city?",
    "I'd rather avoid crowds.",
    "Remind me what I said I like.",
    "Thanks, that's all for now.",
]
SHIPPED = {"PLANNING_ENABLED": "true", "CONTEXT_COMPRESSION_ENABLED": "true"}


def timing(exchange: Exchange, name: str) -> int:
    """One of the server's `timings` for a call (streamed or not): `prompt_n`, tokens it read;
    `predicted_n`, tokens it generated."""
    payloads = exchange.data() if exchange.events else [exchange.body]
    for payload in reversed(payloads):
        if isinstance(payload, dict) and isinstance(payload.get("timings"), dict):
            return int(payload["timings"].get(name, 0))
    return 0


# What a call was for, from its request: the marks the scripted tests know Navi's prompts by.
SIDE_KINDS = [
    (SUMMARY_MARK, "summary"),
    (NAMING_MARK, "naming"),
    (EXTRACT_MARK, "flush"),
    (PROFILE_MARK, "profile"),
]


def call_kind(exchange: Exchange) -> str:
    """answer, ahead (the next prompt read ahead: one token), planning, summary, naming, flush
    (memory from the turns a compression folded) or profile (the memory summary's rewrite)."""
    body = exchange.request
    if body.get("max_tokens") == 1:
        return "ahead"
    messages = body.get("messages") or [{}]
    system = str(messages[0].get("content") or "") if messages[0].get("role") == "system" else ""
    last = str(messages[-1].get("content") or "")
    if PLANNING_MARK in last:
        return "planning"
    if last.startswith(SUMMARY_MARK):  # asked at the end of the conversation's own prompt
        return "summary"
    return next((kind for mark, kind in SIDE_KINDS if system.startswith(mark)), "answer")


def prompt_n(exchange: Exchange) -> int:
    return timing(exchange, "prompt_n")


def prompt_total(llama: LlamaServer) -> int:
    """Every prompt token the server has read (`/metrics`, `llamacpp:prompt_tokens_total`): unlike
    a call's `timings`, it also counts calls closed before their end (a summary stopped in a loop),
    which send no timings."""
    text = httpx.get(f"{llama.url}/metrics", timeout=30).text
    found = re.search(r"^llamacpp:prompt_tokens_total ([0-9.e+]+)$", text, re.M)
    return int(float(found.group(1))) if found else 0


def shown(exchange: Exchange) -> str:
    """What one call read, or that it was closed before the server said."""
    return f"{prompt_n(exchange):,}" if timing_sent(exchange) else "closed early"


def timing_sent(exchange: Exchange) -> bool:
    payloads = exchange.data() if exchange.events else [exchange.body]
    return any(isinstance(p, dict) and isinstance(p.get("timings"), dict) for p in payloads)


def predicted_n(exchange: Exchange) -> int:
    return timing(exchange, "predicted_n")


def llama_server(tmp: Path, ctx: int, ram_cache: bool, name: str) -> LlamaServer:
    extra = ["--cache-reuse", "256", "--seed", "1", "--metrics"] + ([] if ram_cache else ["--cache-ram", "0"])
    return LlamaServer(
        "smollm2",
        ServerOptions(ctx=2 * ctx, parallel=2, extra_args=extra),
        template=path(CHATML_TOOLS),
        log_path=tmp / f"llama-{name}.log",
    )


async def navi_turn(navi: Navi, sid: str, text: str) -> tuple[float, str]:
    """Seconds to the first `stream_delta` and the answer."""
    first: float | None = None
    async with connect(f"ws://127.0.0.1:{navi.port}/ws/sessions/{sid}", max_size=None) as ws:
        start = time.perf_counter()
        await ws.send(json.dumps({"type": "message", "content": text}))
        while True:
            frame = json.loads(await ws.recv())
            if frame["type"] == "stream_delta" and first is None:
                first = time.perf_counter() - start
            elif frame["type"] == "error":
                raise RuntimeError(f"Navi: {frame['message']}")
            elif frame["type"] == "stream_end":
                return (first if first is not None else time.perf_counter() - start), frame["content"]


async def navi_side(tmp: Path, ctx: int, ram_cache: bool, turns: int, answer_tokens: int) -> dict[str, Any]:
    server = llama_server(tmp, ctx, ram_cache, f"navi-{ctx}-{ram_cache}")
    settings = {**SHIPPED, "LLM_MAX_TOKENS_ANSWER": str(answer_tokens)}
    with server as llama, RecordingProxy(llama.url) as proxy:
        navi = Navi(tmp, proxy.base_url, llama.model, ctx, settings=settings)
        try:
            rows: list[dict[str, Any]] = []
            async with httpx.AsyncClient(base_url=navi.url, timeout=60) as http:
                sid = (await http.post("/sessions")).json()["session_id"]
                for text in MESSAGES[:turns]:
                    seen, before = len(proxy.chat), prompt_total(llama)
                    ttft, _ = await navi_turn(navi, sid, text)
                    await wait_idle(llama, proxy)
                    calls = proxy.chat[seen:]
                    answered = [c for c in calls if call_kind(c) == "answer"]
                    rows.append(
                        {
                            "read": prompt_total(llama) - before,
                            "calls": len(calls),
                            "kinds": [f"{call_kind(c)} {shown(c)}" for c in calls],
                            "ttft": ttft,
                            "wrote": sum(predicted_n(c) for c in answered),
                        }
                    )
                answer_body = next(dict(x.request) for x in proxy.chat if x.request.get("id_slot", 0) == 0)
                second = (await http.post("/sessions")).json()["session_id"]
                seen, before = len(proxy.chat), prompt_total(llama)
                await navi_turn(navi, second, MESSAGES[0])
                await wait_idle(llama, proxy)
                calls = proxy.chat[seen:]
                second_all = prompt_total(llama) - before
        finally:
            navi.stop()
    return {
        "turns": rows,
        "second_all": second_all,
        "second_answer": sum(prompt_n(c) for c in calls if c.request.get("id_slot", 0) == 0),
        "body": answer_body,
    }


async def baseline_side(
    tmp: Path, ctx: int, ram_cache: bool, body: dict[str, Any], navi_turns: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Rows per turn; a turn the slot could not hold is {"full": True}, and the rest are left out."""
    system = [m for m in body["messages"] if m.get("role") == "system"][:1]
    template = {k: v for k, v in body.items() if k not in ("messages", "id_slot")}
    template["stream"] = True
    history: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    # Through the same recording proxy as Navi's calls, so its hop is in both times to first token.
    with (
        llama_server(tmp, ctx, ram_cache, f"base-{ctx}-{ram_cache}") as llama,
        RecordingProxy(llama.url) as proxy,
    ):
        # A new connection per turn: llama-server closes a kept-alive one after a streamed answer,
        # and reusing it failed turns with "Server disconnected without sending a response".
        no_reuse = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=httpx.Timeout(600, connect=10), limits=no_reuse) as http:
            for text, navi in zip(MESSAGES, navi_turns, strict=False):
                history.append({"role": "user", "content": text})
                request = {**template, "messages": system + history, "max_tokens": max(1, navi["wrote"])}
                start = time.perf_counter()
                first: float | None = None
                answer, read, wrote = "", 0, 0
                try:
                    async with http.stream(
                        "POST", f"{proxy.base_url}/chat/completions", json=request
                    ) as resp:
                        if resp.status_code == 400:  # the prompt and the answer exceed the slot
                            await resp.aread()
                            rows.append({"full": True, "read": 0, "ttft": 0.0, "error": resp.text[:200]})
                            return rows
                        resp.raise_for_status()
                        async for line in resp.aiter_lines():
                            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                                continue
                            chunk = json.loads(line[5:])
                            for choice in chunk.get("choices") or []:
                                piece = (choice.get("delta") or {}).get("content") or ""
                                if piece and first is None:
                                    first = time.perf_counter() - start
                                answer += piece
                            if isinstance(chunk.get("timings"), dict):
                                read = int(chunk["timings"].get("prompt_n", 0))
                                wrote = int(chunk["timings"].get("predicted_n", 0))
                except httpx.HTTPError as exc:
                    # The server gave up on this turn (it drops the connection when the slot overflows
                    # while generating): the turns before it still count.
                    rows.append({"full": True, "read": 0, "ttft": 0.0, "error": repr(exc)[:200]})
                    return rows
                history.append({"role": "assistant", "content": answer})
                ttft = first if first is not None else time.perf_counter() - start
                rows.append({"read": read, "ttft": ttft, "wrote": wrote})
    return rows


async def run_conversation(
    turns: int, windows: list[int], ram_caches: tuple[bool, ...] = (True, False), *, answer_tokens: int = 256
) -> None:
    results = []
    with tempfile.TemporaryDirectory(prefix="navi-conv-") as tmp_name:
        tmp = Path(tmp_name)
        for ctx in windows:
            for ram in ram_caches:
                navi = await navi_side(tmp, ctx, ram, turns, answer_tokens)
                print(f"Navi, {ctx:,}-token slots, RAM cache {ram}: " + json.dumps(navi["turns"]), flush=True)
                try:
                    base = await baseline_side(tmp, ctx, ram, navi["body"], navi["turns"])
                except httpx.HTTPError as exc:  # Navi's figures are still worth printing
                    log = tmp / f"llama-base-{ctx}-{ram}.log"
                    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
                    print(f"the baseline failed ({exc!r}); llama-server's log ends:\n{tail}")
                    base = []
                results.append((ctx, ram, navi, base))
    print(
        f"SmolLM2-135M on llama-server, --parallel 2, --cache-reuse 256; {turns} turns; Navi as shipped "
        f"but answers capped at {answer_tokens} tokens."
    )
    for ctx, ram, navi, base in results:
        print()
        print(f"**{ctx:,}-token slots, RAM prompt cache {'on' if ram else 'off (--cache-ram 0)'}**")
        print()
        print("| turn | " + " | ".join(str(i + 1) for i in range(turns)) + " |")
        print("|---|" + "---:|" * turns)
        print("| Navi: prompt tokens read | " + " | ".join(f"{r['read']:,}" for r in navi["turns"]) + " |")
        print("| Navi: calls | " + " | ".join(str(r["calls"]) for r in navi["turns"]) + " |")
        each = " | ".join("<br>".join(r["kinds"]) for r in navi["turns"])
        print(f"| Navi: what each call read | {each} |")
        print("| Navi: answer tokens | " + " | ".join(f"{r['wrote']:,}" for r in navi["turns"]) + " |")
        cells = ["window full" if r.get("full") else f"{r['read']:,}" for r in base]
        cells += ["—"] * (turns - len(cells))
        print("| baseline: prompt tokens read | " + " | ".join(cells) + " |")
        wrote = [f"{r['wrote']:,}" for r in base if not r.get("full")]
        print("| baseline: answer tokens | " + " | ".join(wrote + ["—"] * (turns - len(wrote))) + " |")
        held = [r for r in base if not r.get("full")]  # the turns both could run
        navi_rest = sum(r["read"] for r in navi["turns"][1 : len(held)])
        base_rest = sum(r["read"] for r in held[1:])
        navi_ttft = sum(r["ttft"] for r in navi["turns"][1 : len(held)])
        base_ttft = sum(r["ttft"] for r in held[1:])
        print()
        if len(held) < turns:
            full = next((r.get("error", "") for r in base if r.get("full")), "")
            print(f"The append-only baseline ran out of window at turn {len(held) + 1} ({full!r}).")
        print(
            f"Turns 2–{len(held)}: Navi read {navi_rest:,} tokens, the baseline {base_rest:,} "
            f"({navi_rest / max(base_rest, 1):.2f}×); time to first token {navi_ttft:.1f} s against "
            f"{base_ttft:.1f} s ({navi_ttft / max(base_ttft, 1e-9):.2f}×). A second conversation's "
            f"first turn: {navi['second_answer']:,} tokens for its answer, {navi['second_all']:,} with "
            "its side calls."
        )
