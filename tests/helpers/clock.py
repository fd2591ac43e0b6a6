"""The suite's time-sensitive modules (`CLOCK_MODULES`) run again with the clock moved, so a test
that compares a fixed date with the wall clock fails the day it is written, not the day the calendar
reaches its date. `make test` passes `--shifted-clock`: each of their tests runs three times in the
one parallel run — now, a year ahead and a year back (`[now]`, `[ahead]`, `[back]` in its id).
`--clock-shift=DAYS` moves the clock of every test of a run instead.

time-machine moves `datetime.now()`, `time.time()` and friends for the whole test process (threads
included) and lets the clock tick from there; `time.monotonic()` (timeouts, asyncio) is untouched.
Programs the test starts keep the real clock: a test of such a module that checks only what those
programs do is marked `real_clock` and runs once, at the real clock (moving the clock of the test
process alone would test nothing more and cost a `navi serve` start each time).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import time_machine

CLOCK_MODULES = frozenset(
    {
        "test_schedule_store.py",
        "test_schedule_runner.py",
        "test_schedules_api.py",
        "test_schedules_cli_tool.py",
        "test_server_uploads.py",
        "test_user_signins.py",
        "security/test_sign_in.py",
        "test_server_security.py",
        "test_memory_extraction.py",
        "test_memory_store_contract.py",
        "test_archive.py",
        "test_test_deps.py",
        "test_search_surfaces.py",
        "test_foreign_import.py",
        "test_memory_api.py",
        "test_memory_earlier.py",
    }
)
CLOCK_SHIFTS = [0, 365, -365]
CLOCK_IDS = ["now", "ahead", "back"]
TESTS = Path(__file__).resolve().parent.parent


def clock_module(path: Path) -> bool:
    """Whether the test module at `path` deals in dates (one of `CLOCK_MODULES`)."""
    try:
        return path.resolve().relative_to(TESTS).as_posix() in CLOCK_MODULES
    except ValueError:
        return False


@contextmanager
def shifted(days: int) -> Iterator[None]:
    if not days:
        yield
        return
    with time_machine.travel(datetime.now(UTC) + timedelta(days=days), tick=True):
        yield
