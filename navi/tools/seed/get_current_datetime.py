"""`get_current_datetime`: what time it is now, here or in any IANA time zone.

Models do not know the current date; this is the tool they should call instead of guessing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

name = "get_current_datetime"
description = (
    "Current date and time, with weekday and UTC offset. Use it whenever the answer depends on "
    "today's date or the time."
)
parameters = {
    "type": "object",
    "properties": {
        "timezone": {
            "type": "string",
            "description": "IANA name, e.g. 'Europe/Berlin'; default: server local time",
        }
    },
    "additionalProperties": False,
}
timeout = 5


def _zone(key: str) -> ZoneInfo:
    try:
        return ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"unknown time zone {key!r}: use an IANA name such as 'Europe/London', 'America/Chicago', "
            "'Asia/Kolkata' or 'UTC'"
        ) from None


def _offset(now: datetime) -> str:
    delta = now.utcoffset()
    if delta is None:
        return "UTC"
    minutes = int(delta.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{mins:02d}"


async def execute(params: dict[str, Any]) -> str:
    key = (params.get("timezone") or "").strip()
    if key:
        now = datetime.now(_zone(key))
        zone_name = key
    else:
        now = datetime.now().astimezone()
        zone_name = f"server local time ({now.tzname() or _offset(now)})"
    abbreviation = f" {now.tzname()}" if now.tzname() else ""
    return "\n".join(
        [
            f"{now:%A, %d %B %Y, %H:%M:%S}{abbreviation} ({_offset(now)})",
            f"ISO 8601: {now.isoformat(timespec='seconds')}",
            f"Time zone: {zone_name}",
        ]
    )
