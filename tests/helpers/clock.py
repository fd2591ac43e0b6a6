"""The suite's time-sensitive modules run again with the clock moved (`--clock-shift=DAYS`, in
`make test`: a year ahead and a year back), so a test that compares a fixed date with the wall clock
fails the day it is written, not the day the calendar reaches its date.

time-machine moves `datetime.now()`, `time.time()` and friends for the whole test process (threads
included) and lets the clock tick from there; `time.monotonic()` (timeouts, asyncio) is untouched.
Programs the test starts keep the real clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import time_machine


@contextmanager
def shifted(days: int) -> Iterator[None]:
    if not days:
        yield
        return
    with time_machine.travel(datetime.now(UTC) + timedelta(days=days), tick=True):
        yield
