"""When a schedule is due: cron expressions (through `cronsim`), intervals and one moment.

Cron expressions are evaluated on aware datetimes in the schedule's own zone, so daylight saving
time is handled the way cron does it: a time skipped by the spring-forward jump runs right after
the jump (02:30 → 03:00 that day), and a time that happens twice on the fall-back day runs once
(the first time). Intervals count elapsed seconds, whatever the wall clock does: a run every 3600
seconds stays 3600 s apart across a DST change. Everything returned is an aware UTC instant.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from navi.schedules.models import MIN_EVERY_SECONDS, Schedule, utc

MAX_CRON_LENGTH = 200


class ScheduleError(ValueError):
    """A schedule that cannot be (a bad cron, a moment in the past, two kinds at once…)."""


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`, or `ScheduleError` saying it is not one."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"{name!r} is not a time zone name (like Europe/Berlin or UTC)") from None


def system_zone_name() -> str:
    """This machine's zone name (`/etc/localtime`'s target, or `/etc/timezone`); "UTC" when it
    cannot be told. What `TZ` defaults to."""
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            name = target.split("zoneinfo/", 1)[1]
            zone(name)
            return name
        name = Path("/etc/timezone").read_text(encoding="utf-8").strip()
        zone(name)
        return name
    except (OSError, ScheduleError):
        return "UTC"


def check_cron(expression: str) -> str:
    """A five-field cron expression, normalised (single spaces), or `ScheduleError`."""
    text = " ".join(expression.split())
    if not text or len(text) > MAX_CRON_LENGTH:
        raise ScheduleError("cron must be a five-field expression like '0 9 * * 1-5'")
    if len(text.split(" ")) != 5:
        raise ScheduleError(
            f"cron {text!r} must have five fields (minute hour day month weekday), like '0 9 * * 1-5'"
        )
    try:
        CronSim(text, datetime(2000, 1, 1))
    except (CronSimError, ValueError) as exc:
        raise ScheduleError(f"cron {text!r} is not valid: {exc}") from None
    return text


def cron_after(expression: str, after: datetime, tz: tzinfo) -> datetime | None:
    """The first instant strictly after `after` the expression names in zone `tz` (None: never,
    e.g. 30 February)."""
    start = utc(after).astimezone(tz)
    try:
        return utc(next(iter(CronSim(expression, start))))
    except StopIteration:
        return None


def interval_after(anchor: datetime, every_seconds: int, after: datetime) -> datetime:
    """The first `anchor + k * every_seconds` (k >= 1) strictly after `after`: intervals keep their
    phase, and a long pause or downtime does not make them run many times over."""
    anchor, after = utc(anchor), utc(after)
    step = timedelta(seconds=every_seconds)
    if after < anchor:
        return anchor + step
    k = int((after - anchor) / step) + 1
    return anchor + k * step


def first_run(schedule: Schedule, now: datetime) -> datetime | None:
    """When a schedule made (or re-timed) at `now` first runs."""
    if schedule.kind == "at":
        assert schedule.at is not None
        return utc(schedule.at)
    return next_run(schedule, now, anchor=now)


def next_run(schedule: Schedule, after: datetime, *, anchor: datetime | None = None) -> datetime | None:
    """The next instant strictly after `after` (None for a one-off: it runs once). `anchor` is
    where an interval counts from (default: its current `next_run_at`)."""
    if schedule.kind == "cron":
        assert schedule.cron is not None
        return cron_after(schedule.cron, after, zone(schedule.timezone))
    if schedule.kind == "interval":
        assert schedule.every_seconds is not None
        base = anchor or schedule.next_run_at or after
        return interval_after(base, schedule.every_seconds, after)
    return None


_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(sec|min|hr|s|m|h|d|w)", re.IGNORECASE)


def parse_every(text: str) -> int:
    """An interval as people write it — "3h", "90m", "2h30m", "1.5h", "1d", "45s" or plain seconds
    ("7200") — in seconds; a `ScheduleError` saying how to write it otherwise."""
    cleaned = text.strip().lower().replace(" ", "")
    if cleaned.isdigit():
        return int(cleaned)
    parts = _DURATION.findall(cleaned)
    if not parts or "".join(f"{n}{u}" for n, u in parts).lower() != cleaned:
        raise ScheduleError(
            f"cannot read the interval '{text}' — write e.g. 30m, 3h, 2h30m, 1d or a number of seconds"
        )
    return round(sum(float(n) * _UNITS[u.lower()] for n, u in parts))


def every_words(seconds: int) -> str:
    """'every 2 hours', 'every 90 minutes', 'every day': the largest whole unit, as the page says it."""
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if seconds % size == 0:
            count = seconds // size
            return f"every {unit}" if count == 1 else f"every {count} {unit}s"
    raise AssertionError("every count of seconds divides by 1")  # pragma: no cover


def check_every(seconds: int) -> int:
    if seconds < MIN_EVERY_SECONDS:
        raise ScheduleError(f"every_seconds must be at least {MIN_EVERY_SECONDS}")
    if seconds > 366 * 24 * 3600:
        raise ScheduleError("every_seconds must be at most a year (31622400)")
    return seconds


def check_at(moment: datetime, now: datetime, tz: tzinfo) -> datetime:
    """A one-off's moment as a UTC instant (a naive one is read in `tz`); in the past: an error."""
    aware = moment.replace(tzinfo=tz) if moment.tzinfo is None else moment
    if utc(aware) <= utc(now):
        shown = aware.astimezone(tz).strftime("%a %d %b %Y %H:%M")
        raise ScheduleError(f"at {shown} is in the past")
    return utc(aware)


def describe(moment: datetime, zone_name: str) -> str:
    """`Thu 26 Nov 2026 09:00 (Europe/Berlin)`: an instant as the user reads it."""
    local = utc(moment).astimezone(zone(zone_name))
    return f"{local:%a %d %b %Y %H:%M} ({zone_name})"
