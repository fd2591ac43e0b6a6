"""A file attached to a user message: one typed value from the edge that took it in to the place
the message is stored.

A message's files come in at the edges — a `message` frame's or REST's `files` (the protocol's
`FileRef`, checked against the session's uploads by navi/api/websocket.py), a mail's or Matrix
message's attachments saved as uploads (navi/channels/worker.py), a stored message edited
(navi/runs/branching.py) — and travel inside as `AttachedFile`: in `CheckedFrame`, `NewMessage`,
the run queue's `Queued`, a steering message, to `with_files` (the note the model reads) and
`user_message` (navi/agent/said.py).

Two places hold them as JSON, each in the shape it always had, converted there only:

- a stored message's `metadata.files` (`FileRef` records, navi/llm/meta.py: `{name, path}` objects
  in the database and in archives): `stored` writes them, `attached` reads them back;
- the run queue's rows (`queued_messages.files`, navi/runs/queue.py): `as_json` and `from_json`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from navi.llm.meta import FileRef


@dataclass(frozen=True, slots=True)
class AttachedFile:
    """A file uploaded to the session a message refers to: the name shown, the path on disk."""

    name: str
    path: str

    def as_json(self) -> dict[str, str]:
        """The `{name, path}` object the queue's rows hold."""
        return {"name": self.name, "path": self.path}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AttachedFile:
        """One of the queue's `{name, path}` objects (a missing key reads as empty)."""
        return cls(name=str(data.get("name", "")), path=str(data.get("path", "")))


def stored(files: Iterable[AttachedFile]) -> list[FileRef]:
    """The files as a stored message's `metadata.files` records."""
    return [FileRef(name=f.name, path=f.path) for f in files]


def attached(refs: Iterable[FileRef] | None) -> list[AttachedFile]:
    """A stored message's `metadata.files` records as the files a new message attaches."""
    return [AttachedFile(name=ref.name, path=ref.path) for ref in refs or ()]
