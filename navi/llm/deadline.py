"""A time limit on waits that repeat many times a second, kept by one timer.

A streamed reply waits for each chunk, and each wait has a limit (the model's idle timeout, a
socket's read timeout). An `asyncio.timeout` per wait arms and cancels a timer for every chunk;
`Deadline` notes the time at each wait and arms a timer only when none is armed early enough: with
one limit, once per limit's length. When a wait outlasts its limit, `expired` is called (it must
interrupt the wait: cancel the waiting task, fail the stream it reads).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

EARLY = 0.001  # a timer may fire this much before its time: still due


class Deadline:
    def __init__(self, expired: Callable[[], None]) -> None:
        self.loop = asyncio.get_running_loop()
        self.due: float | None = None  # the current wait's end; None: no wait under way
        self._expired = expired
        self._timer: asyncio.TimerHandle | None = None

    def start(self, limit: float) -> None:
        """A wait begins that may last `limit` seconds."""
        due = self.loop.time() + limit
        self.due = due
        timer = self._timer
        if timer is None or timer.when() > due:  # none, or armed for a longer limit
            if timer is not None:
                timer.cancel()
            self._timer = self.loop.call_at(due, self._check)

    def clear(self) -> None:
        """The wait ended in time."""
        self.due = None

    def _check(self) -> None:
        self._timer = None
        due = self.due
        if due is None:
            return  # nothing waits: the next wait arms it again
        if self.loop.time() < due - EARLY:  # a later wait began since it was armed
            self._timer = self.loop.call_at(due, self._check)
            return
        self.due = None
        self._expired()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
