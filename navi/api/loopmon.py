"""Event-loop monitor (`NAVI_LOOP_MONITOR=true`), for benchmarks and diagnosis.

Two measures, served at `GET /debug/loop` (`?reset=1` starts afresh):
- **steps**: how long each callback the loop runs holds it (the asyncio loop's `Handle._run` is
  timed, so Navi then runs on the plain asyncio loop rather than uvloop). A step over 5 ms is
  counted and attributed to the coroutine or function that ran.
- **lateness**: how late a 1 ms timer fires — the backlog a request would see.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

INTERVAL = 0.001
SLOW_STEP = 0.005


def _describe(handle: Any) -> str:
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return getattr(coro, "__qualname__", repr(coro))
    return getattr(callback, "__qualname__", repr(callback))


@dataclass
class LoopMonitor:
    steps: int = 0
    worst_step_ms: float = 0.0
    slow_steps: int = 0
    slow_by: Counter[str] = field(default_factory=Counter)
    late_samples: int = 0
    worst_late_ms: float = 0.0
    gc_runs: int = 0
    worst_gc_ms: float = 0.0
    worst_gc_generation: int = -1
    _gc_start: float = 0.0

    def record_step(self, seconds: float, handle: Any) -> None:
        self.steps += 1
        if seconds * 1000 > self.worst_step_ms:
            self.worst_step_ms = seconds * 1000
        if seconds > SLOW_STEP:
            self.slow_steps += 1
            self.slow_by[_describe(handle)] += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "worst_step_ms": round(self.worst_step_ms, 3),
            "steps_over_5ms": self.slow_steps,
            "slow_steps_by": dict(self.slow_by.most_common(10)),
            "late_samples": self.late_samples,
            "worst_late_ms": round(self.worst_late_ms, 3),
            "gc_runs": self.gc_runs,
            "worst_gc_ms": round(self.worst_gc_ms, 3),
            "worst_gc_generation": self.worst_gc_generation,
            "frozen_objects": gc.get_freeze_count(),
        }

    def reset(self) -> None:
        self.steps, self.worst_step_ms, self.slow_steps = 0, 0.0, 0
        self.slow_by.clear()
        self.late_samples, self.worst_late_ms = 0, 0.0
        self.gc_runs, self.worst_gc_ms = 0, 0.0

    def install(self) -> None:
        """Time every callback of the asyncio event loop (not available on uvloop)."""
        original = asyncio.events.Handle._run
        monitor = self

        def timed_run(handle: asyncio.events.Handle) -> None:
            start = time.perf_counter()
            original(handle)
            monitor.record_step(time.perf_counter() - start, handle)

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign,assignment]
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gc_runs += 1
            took = (time.perf_counter() - self._gc_start) * 1000
            if took > self.worst_gc_ms:
                self.worst_gc_ms, self.worst_gc_generation = took, int(info.get("generation", -1))

    async def run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(INTERVAL)
            late = max(0.0, time.perf_counter() - start - INTERVAL) * 1000
            self.late_samples += 1
            self.worst_late_ms = max(self.worst_late_ms, late)
