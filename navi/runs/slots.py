"""Which run holds each session: the runs of this process, and the leases every process sees.

A session has one slot. A run takes it by taking the session's lease (`leases.py`: a row of
`run_leases` on a database, this process's memory without one) and holds it until its last frame is
out; a second taker is refused (`RunActive`). `Slots` keeps this process's runs by session (`here`),
the ended ones a while for a client that reconnects (`kept`), and looks after the leases: renewed
every beat, and those of workers that are gone taken over once (their unanswered turn recorded as
failed, `worker_lost`).

`busy()` is the one answer to "is this session busy?": the leases, which every process on the
database shares, and this process's runs that are taking or letting go of one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog

from navi.runs.bus import Bus, Control
from navi.runs.heartbeat import Heartbeat
from navi.runs.leases import Lease, LeaseKind, Leases, SqlLeases, sleep_beat
from navi.runs.lost import lost_error, record_lost
from navi.runs.run import AgentRun, RunActive
from navi.sessions.store import SessionNotFound, SessionStore
from navi.telemetry import Telemetry

log = structlog.stdlib.get_logger(__name__)

MAX_KEPT_RUNS = 200  # ended runs kept for a reconnect at most, the oldest let go first
HANDOVER_SECONDS = 10.0  # how long a start waits for another worker's answered turn to let go
PRUNE_BEATS = 25  # old run frames are pruned every this many heartbeats


class Slots:
    """`sessions`: where a turn lost with its worker is recorded; `keep_seconds`: how long an ended
    run of this process is kept for a client that reconnects (`kept`)."""

    def __init__(
        self,
        leases: Leases,
        bus: Bus,
        sessions: SessionStore,
        telemetry: Telemetry,
        keep_seconds: float = 300.0,
    ) -> None:
        self.leases = leases
        self.bus = bus
        self.sessions = sessions
        self.telemetry = telemetry
        self.keep_seconds = keep_seconds
        self.here: dict[str, AgentRun] = {}  # session id → the run of this process that holds it
        self._kept: dict[str, tuple[AgentRun, float]] = {}  # run id → an ended run, and when it ended
        # Told of a session a lost turn held, now free (what waits there runs: the run manager's).
        self.freed: Callable[[str], None] = lambda session_id: None
        self._keeper: asyncio.Task[None] | None = None
        self._heartbeat: Heartbeat | None = None

    # --- is this session busy? -----------------------------------------------------------------
    async def busy(self, session_id: str | None = None, *, answering: bool = False) -> set[str]:
        """The sessions with a run going, in any process on the database; with `session_id`, that
        session if it has one (else nothing). `answering`: only runs that have not answered yet
        (a run that has is doing post-turn work, which a new message stops)."""
        if session_id is None:
            leases = await self.leases.held()
        else:
            holder = await self.leases.holder(session_id)
            leases = [] if holder is None else [holder]
        here = [run for sid, run in self.here.items() if session_id in (None, sid)]
        mine = {run.run_id for run in here}  # their leases may lag behind them (answered)
        return {
            lease.session_id
            for lease in leases
            if lease.run_id not in mine and not (answering and lease.answered)
        } | {run.session_id for run in here if not (answering and run.answered)}

    def get(self, session_id: str) -> AgentRun | None:
        """The run of this session in this process, if any."""
        return self.here.get(session_id)

    def kept(self, session_id: str, run_id: str) -> AgentRun | None:
        """Run `run_id` of this session in this process: going, or ended while it is kept."""
        run = self.here.get(session_id)
        if run is not None and run.run_id == run_id:
            return run
        kept = self._kept.get(run_id)
        return kept[0] if kept is not None and kept[0].session_id == session_id else None

    # --- taking and letting go ---------------------------------------------------------------------
    async def take(self, run: AgentRun, kind: LeaseKind, previous: AgentRun | None = None) -> None:
        """Give the session's slot to `run` (held here at once: a second start is busy meanwhile),
        and its lease; or leave the session as it was and raise `RunActive`. `previous`: the run of
        this process it replaces (an answered one)."""
        self.here[run.session_id] = run
        try:
            await self._lease(run.session_id, run.run_id, kind, previous.run_id if previous else None)
        except BaseException:
            self.give_back(run, previous)
            raise
        run.leased = True

    async def _lease(self, session_id: str, run_id: str, kind: LeaseKind, replacing: str | None) -> None:
        """Take the session's lease for `run_id`, or raise `RunActive`. A lease left by a worker
        that is gone is recovered first; another worker's answered turn is stopped (its post-turn
        work abandoned, as a new message does here) and its lease waited for."""
        for _ in range(3):  # the holder may let go between the two looks: look again
            if await self.leases.acquire(session_id, run_id, kind, replacing=replacing) is not None:
                return
            holder = await self.leases.holder(session_id)
            if holder is None:
                continue
            if holder.worker == self.leases.worker:
                if holder.run_id in {r.run_id for r in self.here.values()}:
                    break  # a run of this worker holds it
                replacing = holder.run_id  # a run of this worker that ended and is letting go
            elif await self.recover(holder):
                replacing = None
            elif holder.answered and await self.bus.send(
                holder.worker, Control("stop", session_id, holder.run_id)
            ):
                deadline = asyncio.get_running_loop().time() + HANDOVER_SECONDS
                while asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(0.02)
                    if await self.leases.acquire(session_id, run_id, kind) is not None:
                        return
                break
            else:
                break
        raise RunActive(session_id)

    def give_back(self, run: AgentRun, previous: AgentRun | None) -> None:
        """A run that could not start leaves the session as it found it."""
        if self.here.get(run.session_id) is run:
            if previous is not None and not previous.finished.is_set():
                self.here[run.session_id] = previous
            else:
                del self.here[run.session_id]

    def ended(self, run: AgentRun, *, keep: bool = True) -> None:
        """The run's frames are over: gone from here at once (its lease follows, `release`), kept a
        while for a client that reconnects (unless `keep` is False: it had no frames)."""
        if self.here.get(run.session_id) is run:
            del self.here[run.session_id]
        if not keep:
            return
        now = asyncio.get_running_loop().time()
        for run_id, (_, ended) in list(self._kept.items()):  # oldest first
            if now - ended < self.keep_seconds and len(self._kept) < MAX_KEPT_RUNS:
                break
            del self._kept[run_id]
        if self.keep_seconds > 0:
            self._kept[run.run_id] = (run, now)

    async def answered(self, run: AgentRun) -> None:
        """The run has answered: other workers may stop it for a new message."""
        try:
            await self.leases.answered(run.session_id, run.run_id)
        except Exception as exc:  # other workers take it as still answering: busy a little longer
            log.warning("runs.lease_not_marked", session_id=run.session_id, error=str(exc))

    async def release(self, run: AgentRun) -> None:
        try:
            await self.leases.release(run.session_id, run.run_id)
        except Exception as exc:  # it expires on its own once this worker stops renewing it
            log.warning("runs.lease_not_released", session_id=run.session_id, error=str(exc))

    # --- looking after the leases ------------------------------------------------------------------
    async def open(self) -> None:
        """Look after this worker's leases from now on — once at once, so a Navi started again after
        a crash finds the sessions its predecessor held free."""
        await self.tend()
        if self.bus.shared and isinstance(self.leases, SqlLeases):  # renewed however busy the loop is
            self._heartbeat = Heartbeat(self.leases.db.url, self.leases.worker, self.leases.seconds)
            self._heartbeat.start()
        self._keeper = asyncio.create_task(self._keep())

    async def close(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
            self._keeper = None
        if self._heartbeat is not None:
            await asyncio.to_thread(self._heartbeat.stop)
            self._heartbeat = None

    async def _keep(self) -> None:
        beats = 0
        while True:
            await sleep_beat(self.leases)
            await self.tend()
            beats += 1
            if beats % PRUNE_BEATS == 0:
                try:
                    await self.bus.prune()
                except Exception as exc:
                    log.warning("runs.prune_failed", error=str(exc))

    async def tend(self) -> None:
        """Renew this worker's leases, stop its runs whose lease another worker took, and recover
        the leases of workers that are gone."""
        try:
            leased = [run for run in self.here.values() if run.leased]
            held = await self.leases.renew()
            for run in leased:
                if (
                    run.run_id not in held
                    and self.here.get(run.session_id) is run
                    and not run.finished.is_set()
                ):
                    # Declared lost by another worker (this one stalled past its lease): the turn
                    # was ended for it, and the session may have a new one. Stop, write nothing more.
                    log.warning("runs.lease_lost", session_id=run.session_id, run_id=run.run_id)
                    run.stop_event.set()
            for lease in await self.leases.expired():
                await self.recover(lease)
        except Exception as exc:  # a database hiccup: the next beat tries again
            log.warning("runs.leases_unreachable", error=str(exc))

    async def recover(self, lease: Lease) -> bool:
        """Free the session of a run whose worker is gone (once, whoever gets there first): a
        turn it had not answered is recorded as failed with `worker_lost` (Retry offers it), and
        whoever follows the run gets that error as its last frame."""
        if not await self.leases.take(lease):
            return False
        log.warning("runs.worker_lost", session_id=lease.session_id, run_id=lease.run_id, worker=lease.worker)
        self.telemetry.metrics.lease_takeovers.labels(kind=lease.kind).inc()
        if lease.kind == "turn":
            if not lease.answered:
                with contextlib.suppress(SessionNotFound):
                    await record_lost(self.sessions, lease.session_id)
            # An answered turn's followers had its answer: its frames just end.
            await self.bus.lost(lease, None if lease.answered else lost_error().frame())
            self.freed(lease.session_id)  # what waited behind it runs now
        return True
