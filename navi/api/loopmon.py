"""Event-loop stall monitor (`NAVI_LOOP_MONITOR=true`): how late the loop wakes a 1 ms timer.

A stall is the time a synchronous step kept the loop from running anything else. The monitor
keeps the worst stall and a histogram; `GET /debug/loop` returns them (and resets with ?reset=1).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

INTERVAL = 0.001


@dataclass
class LoopMonitor:
    samples: int = 0
    worst_ms: float = 0.0
    over_5ms: int = 0
    buckets: dict[str, int] = field(default_factory=lambda: {"<1ms": 0, "1-5ms": 0, "5-20ms": 0, ">20ms": 0})

    def record(self, lag: float) -> None:
        ms = lag * 1000
        self.samples += 1
        self.worst_ms = max(self.worst_ms, ms)
        key = "<1ms" if ms < 1 else "1-5ms" if ms < 5 else "5-20ms" if ms < 20 else ">20ms"
        self.buckets[key] += 1
        if ms > 5:
            self.over_5ms += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "worst_ms": round(self.worst_ms, 3),
            "over_5ms": self.over_5ms,
            "buckets": dict(self.buckets),
        }

    def reset(self) -> None:
        self.samples, self.worst_ms, self.over_5ms = 0, 0.0, 0
        self.buckets = dict.fromkeys(self.buckets, 0)

    async def run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(INTERVAL)
            self.record(max(0.0, time.perf_counter() - start - INTERVAL))
