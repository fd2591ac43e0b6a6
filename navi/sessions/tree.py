"""A conversation is a tree: every display message has a parent (None for the first), a session has
an active leaf, and what is shown is the path from the root to a leaf.

Messages are appended below the active leaf, so a session that never branches is one chain, as
sessions always were. Editing a user message or regenerating an answer moves the active leaf up
(to the edited message's parent, to the answered question) before the new turn appends: the new
messages become siblings of the old ones, and nothing is ever deleted.

These are pure functions over `parents` (message id -> parent id, in the order the messages were
written), shared by every store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from pydantic import BaseModel, Field


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


M = TypeVar("M", bound=_HasId)

# The active leaf of a session whose next message starts a new root (an edit of its first message).
ROOT = ""


class BranchNotFound(LookupError):
    """A branch (a message id) that the session does not hold."""

    def __init__(self, message_id: str) -> None:
        super().__init__(message_id)
        self.message_id = message_id

    def __str__(self) -> str:
        shown = self.message_id if len(self.message_id) <= 64 else f"{self.message_id[:64]}…"
        return f"no message '{shown}' in this session"


class Siblings(BaseModel):
    """A shown message's place among its parent's children: `siblings` in the order written."""

    siblings: list[str] = Field(default_factory=list)
    sibling_index: int = 0


def children(parents: Mapping[str, str | None]) -> dict[str | None, list[str]]:
    """Each parent's children, in the order they were written (None: the roots)."""
    kids: dict[str | None, list[str]] = {}
    for message_id, parent in parents.items():
        kids.setdefault(parent, []).append(message_id)
    return kids


def newest_leaf(message_id: str, kids: Mapping[str | None, Sequence[str]]) -> str:
    """The leaf below `message_id` reached by always taking the newest child."""
    seen = {message_id}
    while kids.get(message_id):
        message_id = kids[message_id][-1]
        if message_id in seen:  # a cycle could only come from a damaged store: stop, never loop
            break
        seen.add(message_id)
    return message_id


def path_to(message_id: str, parents: Mapping[str, str | None]) -> list[str]:
    """The ids from the root down to `message_id` (which must be in `parents`)."""
    path: list[str] = []
    seen: set[str] = set()
    current: str | None = message_id
    while current is not None and current not in seen and current in parents:
        seen.add(current)
        path.append(current)
        current = parents[current]
    path.reverse()
    return path


def leaf_of(
    parents: Mapping[str, str | None], active_leaf: str | None, branch: str | None = None
) -> str | None:
    """The leaf a display shows: the newest leaf below `branch` when one is asked for (a message of
    the session: `BranchNotFound` otherwise), else the active leaf, else the newest message."""
    if branch is not None:
        if branch not in parents:
            raise BranchNotFound(branch)
        return newest_leaf(branch, children(parents))
    if active_leaf == ROOT:
        return None
    if active_leaf is not None and active_leaf in parents:
        return active_leaf
    return list(parents)[-1] if parents else None


def parent_of_next(parents: Mapping[str, str | None], active_leaf: str | None) -> str | None:
    """The parent a message appended now gets."""
    return leaf_of(parents, active_leaf)


def path_ids(
    parents: Mapping[str, str | None], active_leaf: str | None, branch: str | None = None
) -> list[str]:
    leaf = leaf_of(parents, active_leaf, branch)
    return [] if leaf is None else path_to(leaf, parents)


def siblings(path: Sequence[str], parents: Mapping[str, str | None]) -> dict[str, Siblings]:
    """For each message of `path`, its siblings (itself included) and its index among them."""
    kids = children(parents)
    out: dict[str, Siblings] = {}
    for message_id in path:
        family = kids.get(parents.get(message_id), [message_id])
        out[message_id] = Siblings(siblings=list(family), sibling_index=family.index(message_id))
    return out


def chain(ids: Sequence[str], first_parent: str | None = None) -> dict[str, str | None]:
    """Parents for messages written one after another below `first_parent`."""
    parents: dict[str, str | None] = {}
    previous = first_parent
    for message_id in ids:
        parents[message_id] = previous
        previous = message_id
    return parents


def written_order(messages: Sequence[M], parents: Mapping[str, str | None]) -> list[M]:
    """`messages` (of any branch) in the order they were written, as `parents` lists them; those it
    does not list keep their order, after."""
    by_id = {m.id: m for m in messages}
    ordered = [by_id[i] for i in parents if i in by_id]
    listed = set(parents)
    return ordered + [m for m in messages if m.id not in listed]
