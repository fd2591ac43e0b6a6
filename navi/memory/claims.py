"""Which worker reads a session for memory, and which of its messages were read already.

Every worker runs memory extraction (periodically, after a new session, on `POST /memory/extract`),
and two may find the same idle session due at once. Before reading one, a worker claims it: the
claim names the session's display messages it will read — those written after the ones read before
(`since`), up to the count it saw (`upto`) — and holds for `lease` seconds. While a claim holds no
other worker gets one; when the messages up to `upto` were read already, nobody does. `done`
records them as read; `release` (the model failed) leaves them to be read again.

`SqlExtractionClaims` (navi/storage/session_state.py) keeps claims in `extraction_claims` rows,
claimed under a row lock; `InMemoryExtractionClaims` is for runtimes without a database (one
process, so one worker).
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass

LEASE_SECONDS = 900.0  # a claim not done by then belongs to a worker that is gone (a CPU model is slow)


def worker_id() -> str:
    """An id for this process's claims."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Claim:
    session_id: str
    since: int  # display messages (in the order written) read before
    upto: int  # … read by this claim's extraction


class ExtractionClaims(ABC):
    @abstractmethod
    async def claim(self, session_id: str, upto: int) -> Claim | None:
        """Claim reading `session_id`'s messages up to `upto` (how many it has) for this worker;
        None while another worker's claim holds, or when they were read already."""

    @abstractmethod
    async def done(self, claim: Claim) -> None:
        """The messages up to `claim.upto` were read: record it and end the claim."""

    @abstractmethod
    async def release(self, claim: Claim) -> None:
        """End the claim without recording anything (the messages are read again later)."""


class InMemoryExtractionClaims(ExtractionClaims):
    def __init__(self, lease: float = LEASE_SECONDS) -> None:
        self.lease = lease
        self._read: dict[str, int] = {}
        self._held: dict[str, float] = {}  # session → when its claim lapses (monotonic)

    async def claim(self, session_id: str, upto: int) -> Claim | None:
        since = self._read.get(session_id, 0)
        if self._held.get(session_id, 0.0) > time.monotonic() or upto <= since:
            return None
        self._held[session_id] = time.monotonic() + self.lease
        return Claim(session_id, since, upto)

    async def done(self, claim: Claim) -> None:
        self._read[claim.session_id] = max(claim.upto, self._read.get(claim.session_id, 0))
        self._held.pop(claim.session_id, None)

    async def release(self, claim: Claim) -> None:
        self._held.pop(claim.session_id, None)
