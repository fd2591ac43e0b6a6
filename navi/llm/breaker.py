"""The circuit breaker of model endpoints: one that failed is skipped for a cool-down.

A failure before the first token (the server down, the model missing, 429/5xx, a timeout) or in
the middle of a stream trips the endpoint: chains skip it until `until`, then try it again (one
call; a success clears it, another failure trips it for twice as long, up to `MAX_DOUBLINGS`).
Where workers share a database the trips live there (navi/storage/breaker.py), so one worker's
failure spares the others the same wait; `MemoryBreaker` keeps them in this process.

Times are the caller's clock (seconds since the epoch), handed in: tests inject theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

MAX_DOUBLINGS = 4  # the cool-down grows to 16× the setting at most


@dataclass(frozen=True, slots=True)
class Trip:
    """An endpoint that failed: how many times in a row, until when it is skipped, and why."""

    endpoint: str
    failures: int
    until: float
    reason: str

    def open(self, now: float) -> bool:
        return now < self.until


def next_trip(previous: Trip | None, endpoint: str, reason: str, now: float, cooldown: float) -> Trip:
    """The trip after one more failure of `endpoint`."""
    failures = (previous.failures if previous is not None else 0) + 1
    return Trip(endpoint, failures, now + cooldown * 2 ** min(failures - 1, MAX_DOUBLINGS), reason[:500])


class Breaker(Protocol):
    async def trips(self) -> dict[str, Trip]:
        """Every endpoint's latest trip (open or not) that no success has cleared yet."""
        ...

    async def failed(self, endpoint: str, reason: str, now: float, cooldown: float) -> Trip: ...

    async def cleared(self, endpoint: str) -> None: ...


class MemoryBreaker:
    """Trips kept in this process."""

    def __init__(self) -> None:
        self._trips: dict[str, Trip] = {}

    async def trips(self) -> dict[str, Trip]:
        return dict(self._trips)

    async def failed(self, endpoint: str, reason: str, now: float, cooldown: float) -> Trip:
        trip = self._trips[endpoint] = next_trip(self._trips.get(endpoint), endpoint, reason, now, cooldown)
        return trip

    async def cleared(self, endpoint: str) -> None:
        self._trips.pop(endpoint, None)
