"""Runs: the agent's turns as a part of their own, outside the HTTP layer.

`RunManager` (`manager.py`) starts at most one run per session and owns the parts that do the
rest, each its own object: `slots` (which run holds each session: `slots.py`; `busy()`),
`followers` (`follow.py`: the one way to follow a run, wherever it runs), `controls` (stop,
approvals, waiting: `control.py`), `queueing` (a message sent while a turn runs waits in the
session's queue: `queue.py`, `queueing.py`) and `driver` (one turn driven: `drive.py`). Each run
(`run.py`) publishes its frames to the clients that follow it and keeps them for a client that
arrives mid-run. `feed.py` delivers frames that belong to no run (`session_updated`,
`schedule_run`) to every connection; `scheduled.py` runs a due schedule like a sent message. The
API (`navi/api/`) is one client of all this among others (`navi mcp`, the tests).
"""

from navi.runs.feed import SessionFeed
from navi.runs.manager import RunManager
from navi.runs.run import AgentRun, Followable, RunActive, Subscriber, user_message

__all__ = ["AgentRun", "Followable", "RunActive", "RunManager", "SessionFeed", "Subscriber", "user_message"]
