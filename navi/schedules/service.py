"""Making and changing schedules, checked the same way wherever the request comes from (REST, the
`schedule` tool, `navi schedules`).

Checks: exactly one of `cron`, `every_seconds`, `at`; a valid cron expression; at least 5 seconds
between interval runs; a moment in the future; a known profile; a fixed session the owner has.
Each failure is a `ScheduleError` whose message says what to fix. Times without a zone are read in
the user's zone (`TZ`); one-off times may also be simple phrases ("tomorrow 9am", "in 2 hours",
"next friday 18:00") read by `dateparser` — the tool echoes what it understood.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from navi.llm.messages import utcnow
from navi.profiles.registry import ProfileRegistry
from navi.schedules import when
from navi.schedules.models import (
    MISSED_POLICIES,
    PROMPT_MAX,
    TITLE_MAX,
    Delivery,
    Kind,
    Schedule,
    default_title,
    utc,
)
from navi.schedules.store import ScheduleStore
from navi.schedules.when import ScheduleError
from navi.sessions.models import is_session_id
from navi.sessions.store import SessionStore

_BARE_HOUR = re.compile(r"\bat (\d{1,2})(?![\d:.apAP ])\b|\bat (\d{1,2})$")


def parse_moment(text: str, zone_name: str, now: datetime) -> datetime:
    """An ISO date-time (a naive one in `zone_name`) or a simple phrase, as an aware instant;
    `ScheduleError` when it cannot be read."""
    raw = " ".join(text.split())
    if not raw or len(raw) > 200:
        raise ScheduleError("at must be a date and time, like 2026-11-26T09:00 or 'tomorrow 9am'")
    tz = when.zone(zone_name)
    try:
        moment = datetime.fromisoformat(raw)
        return moment.replace(tzinfo=tz) if moment.tzinfo is None else moment
    except ValueError:
        pass
    import dateparser  # a phrase: loaded only when one comes (it takes a fraction of a second)

    # "tomorrow at 9" would keep the current hour in dateparser; "at 9:00" is what was meant.
    phrase = _BARE_HOUR.sub(lambda m: f"at {m.group(1) or m.group(2)}:00", raw)
    local_now = utc(now).astimezone(tz).replace(tzinfo=None)
    found = dateparser.parse(
        phrase,
        settings={
            "PREFER_DATES_FROM": "future",
            "TIMEZONE": zone_name,
            "RETURN_AS_TIMEZONE_AWARE": True,
            "RELATIVE_BASE": local_now,
        },
    )
    if found is None:
        raise ScheduleError(
            f"could not read {raw!r} as a time: give an ISO date-time like 2026-11-26T09:00 "
            "or a phrase like 'tomorrow 9am' or 'in 2 hours'"
        )
    return found


@dataclass(frozen=True, kw_only=True)
class NewSchedule:
    """A schedule as asked for, before it is checked: what to ask (`prompt`), as which profile
    (None: the session's, else the first), in which session (None: a new one each run), exactly
    one timing (`cron`, `every_seconds` or `at`), and the optional title, missed-run policy,
    paused state and channel delivery."""

    prompt: str
    profile_id: str | None = None
    session_id: str | None = None
    cron: str | None = None
    every_seconds: int | None = None
    at: datetime | str | None = None
    title: str | None = None
    missed: str | None = None
    paused: bool = False
    deliver: Mapping[str, Any] | None = None


class ScheduleService:
    def __init__(
        self,
        store: ScheduleStore,
        *,
        sessions: SessionStore,
        profiles: ProfileRegistry,
        zone_name: str,
        now: Callable[[], datetime] = utcnow,
        delivery_problem: Callable[[str], str | None] = lambda channel: None,
    ) -> None:
        when.zone(zone_name)
        # Why a channel cannot deliver a schedule's answer (it is not set up: what to set), or None.
        self.delivery_problem = delivery_problem
        self.store = store
        self.sessions = sessions
        self.profiles = profiles
        self.zone_name = zone_name
        self.now = now
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """`listener()` after a schedule was made or changed (the runner looks for due runs)."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    async def create(self, owner: str, new: NewSchedule) -> Schedule:
        """`new` checked and made `owner`'s schedule, timed from now; `ScheduleError` says what to fix."""
        now = self.now()
        prompt = new.prompt.strip()
        if not prompt or len(prompt) > PROMPT_MAX:
            raise ScheduleError(f"prompt must be non-empty text of at most {PROMPT_MAX} characters")
        kind, timing = self._timing(new.cron, new.every_seconds, new.at, now)
        profile_id = await self._profile(new.profile_id, new.session_id, owner)
        schedule = Schedule(
            owner=owner,
            title=self._title(new.title, prompt),
            prompt=prompt,
            profile_id=profile_id,
            session_id=new.session_id,
            kind=kind,
            timezone=self.zone_name,
            missed=self._missed(new.missed, kind),
            paused=new.paused,
            deliver=self._deliver(new.deliver),
            **timing,
        )
        schedule.next_run_at = when.first_run(schedule, now)
        await self.store.create(schedule)
        self._changed()
        return schedule

    async def edit(self, schedule_id: str, owner: str | None, changes: Mapping[str, Any]) -> Schedule | None:
        """Apply a PATCH: `paused` and any editable field; changing the timing (one of cron,
        every_seconds, at) replaces the old one and re-times the schedule (a done one-off given a
        new `at` runs again). None when there is no such schedule (of `owner`)."""
        current = await self.store.get(schedule_id, owner=owner)
        if current is None:
            return None
        now = self.now()
        fields: dict[str, Any] = {}
        if "prompt" in changes:
            prompt = str(changes["prompt"] or "").strip()
            if not prompt or len(prompt) > PROMPT_MAX:
                raise ScheduleError(f"prompt must be non-empty text of at most {PROMPT_MAX} characters")
            fields["prompt"] = prompt
        if "title" in changes:
            fields["title"] = self._title(changes["title"], fields.get("prompt", current.prompt))
        if "session_id" in changes or "profile_id" in changes:
            session_id = changes.get("session_id", current.session_id)
            wanted = changes.get("profile_id") or (None if "session_id" in changes else current.profile_id)
            fields["profile_id"] = await self._profile(wanted, session_id, current.owner)
            fields["session_id"] = session_id
        timing_keys = {"cron", "every_seconds", "at"} & {k for k, v in changes.items() if v is not None}
        if timing_keys:
            kind, timing = self._timing(
                changes.get("cron"), changes.get("every_seconds"), changes.get("at"), now
            )
            fields.update({"kind": kind, "cron": None, "every_seconds": None, "at": None, **timing})
            fields["done"] = False
            fields["timezone"] = self.zone_name
        if "missed" in changes and changes["missed"] is not None:
            fields["missed"] = self._missed(changes["missed"], fields.get("kind", current.kind))
        if "deliver" in changes:
            delivery = self._deliver(changes["deliver"])
            fields["deliver"] = None if delivery is None else delivery.model_dump()
        if "paused" in changes and changes["paused"] is not None:
            fields["paused"] = bool(changes["paused"])
        retimed = current.model_copy(update=fields)
        if timing_keys or (current.paused and fields.get("paused") is False and retimed.kind != "at"):
            # New timing, or a resumed recurring schedule: from now on (no burst of what the pause
            # covered). A resumed one-off keeps its moment: past by now, it runs as missed says.
            fields["next_run_at"] = when.first_run(retimed, now) if not retimed.done else None
        changed = await self.store.update(schedule_id, fields, owner=owner)
        self._changed()
        return changed

    def _timing(
        self, cron: str | None, every_seconds: int | None, at: datetime | str | None, now: datetime
    ) -> tuple[Kind, dict[str, Any]]:
        given = [
            name
            for name, v in (("cron", cron), ("every_seconds", every_seconds), ("at", at))
            if v is not None
        ]
        if len(given) != 1:
            raise ScheduleError(
                "give exactly one of cron, every_seconds or at"
                + (f" (got {' and '.join(given)})" if given else "")
            )
        if cron is not None:
            return "cron", {"cron": when.check_cron(cron)}
        if every_seconds is not None:
            return "interval", {"every_seconds": when.check_every(int(every_seconds))}
        assert at is not None
        moment = parse_moment(at, self.zone_name, now) if isinstance(at, str) else at
        return "at", {"at": when.check_at(moment, now, when.zone(self.zone_name))}

    async def _profile(self, profile_id: str | None, session_id: str | None, owner: str) -> str:
        if session_id is not None:
            session = (
                await self.sessions.get(session_id, owner=owner, display=False)
                if is_session_id(session_id)
                else None
            )
            if session is None:
                raise ScheduleError(f"no session '{session_id[:64]}' of yours to run in")
            profile_id = profile_id or session.profile_id
        profile_id = profile_id or self.profiles.default_id
        if profile_id not in self.profiles:
            raise ScheduleError(f"no profile '{profile_id[:64]}' (known: {', '.join(self.profiles.ids())})")
        return profile_id

    @staticmethod
    def _title(title: Any, prompt: str) -> str:
        text = " ".join(str(title or "").split())
        if len(text) > TITLE_MAX:
            raise ScheduleError(f"title must be at most {TITLE_MAX} characters")
        return text or default_title(prompt)

    def _deliver(self, raw: Any) -> Delivery | None:
        """`{"channel": …, "to": …}` checked, on a channel this Navi has set up (None: no delivery);
        `ScheduleError` says what is wrong, and for a channel not set up, what to configure."""
        if raw is None:
            return None
        try:
            delivery = raw if isinstance(raw, Delivery) else Delivery.model_validate(dict(raw))
        except (TypeError, ValueError) as exc:
            raise ScheduleError(
                'deliver must be {"channel": …, "to": …}: an email address or a Matrix room id '
                '("!room:example.org") on that channel\'s allowlist'
            ) from exc
        if (problem := self.delivery_problem(delivery.channel)) is not None:
            raise ScheduleError(f"deliver to {delivery.channel}: {problem}")
        return delivery

    @staticmethod
    def _missed(missed: Any, kind: str) -> Any:
        if missed is None:
            return "once" if kind == "at" else "skip"  # a missed reminder still reminds
        if missed not in MISSED_POLICIES:
            raise ScheduleError(f"missed must be one of {', '.join(MISSED_POLICIES)}")
        return missed

    def describe(self, schedule: Schedule) -> str:
        """When it runs, in words: 'every day at…' is the cron's; the next instant in the user's zone."""
        nxt = (
            when.describe(schedule.next_run_at, schedule.timezone)
            if schedule.next_run_at
            else "no further run"
        )
        if schedule.kind == "cron":
            return f"cron '{schedule.cron}', next {nxt}"
        if schedule.kind == "interval":
            return f"{when.every_words(schedule.every_seconds or 0)}, next {nxt}"
        assert schedule.at is not None
        return when.describe(schedule.at, schedule.timezone) + (" (done)" if schedule.done else "")
