"""Schedules and reminders: prompts Navi runs by cron, interval or at one moment.

`models.py` (what a schedule and a run are), `when.py` (when one is due, in the user's zone,
DST-correct), `store.py` (where they are kept, and the atomic claim that keeps a run from happening
twice; the SQL store is navi/storage/schedules.py), `runner.py` (the loop that claims due runs and
hands them to whoever executes them — the API layer, which runs them through the agent like a sent
message), `notify.py` (the optional webhook push). See docs/schedules.md.
"""

from navi.schedules.models import Schedule, ScheduleRun
from navi.schedules.store import InMemoryScheduleStore, ScheduleStore
from navi.schedules.when import ScheduleError

__all__ = [
    "InMemoryScheduleStore",
    "Schedule",
    "ScheduleError",
    "ScheduleRun",
    "ScheduleStore",
]
