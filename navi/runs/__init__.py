"""Runs: the agent's turns as a part of their own, outside the HTTP layer.

`RunManager` (`manager.py`) starts at most one run per session and drives the agent (a message
sent while one runs waits in the session's queue, `queue.py` / `queueing.py`); each run
(`run.py`) publishes its frames to the clients that follow it and keeps them for a client that
arrives mid-run. `feed.py` delivers frames that belong to no run (`session_updated`,
`schedule_run`) to every connection; `scheduled.py` runs a due schedule like a sent message. The
API (`navi/api/`) is one client of all this among others (`navi mcp`, the tests).
"""

from navi.runs.feed import SessionFeed
from navi.runs.manager import RunManager
from navi.runs.run import AgentRun, RunActive, Subscriber, user_message

__all__ = ["AgentRun", "RunActive", "RunManager", "SessionFeed", "Subscriber", "user_message"]
