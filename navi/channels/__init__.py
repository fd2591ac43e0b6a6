"""Channels: Navi reached from outside conversations (an email thread; later a Matrix room).

`base.py` is what one channel is (a single module each: `email.py`); `store.py` who may talk to
Navi through a channel and which outside message belongs to which session; `worker.py` turns what
arrives into runs of the `RunManager` and sends their answers back. The composition root builds
the channels from the settings and owns the worker's task.
"""

from navi.channels.base import Attachment, Channel, Incoming, Outgoing
from navi.channels.store import ChannelStore, InMemoryChannelStore

__all__ = ["Attachment", "Channel", "ChannelStore", "InMemoryChannelStore", "Incoming", "Outgoing"]
