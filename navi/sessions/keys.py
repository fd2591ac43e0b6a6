"""Recall keys: how a stored message is named when a model's context holds only part of it.

A key is `msg_` followed by the message's id, the id it has in both buffers (`Message.id`): for
example `msg_3f2a9c0e4b1d4e7f9a8b6c5d4e3f2a1b`. Ids are stored with the message, so a key means the
same message after a restart, after compression rewrote the context, and in any later run; nothing
about the run that first showed it is in the key. Keys written before this format (a tool result's
bare id) still name the same message.

A key is resolved for one owner only (`SessionStore.find_message`): the owner's messages can be
recalled, from any of their sessions; another owner's key finds nothing.
"""

from __future__ import annotations

PREFIX = "msg_"
MAX_KEY_CHARS = 200  # message ids are at most 64 characters; anything much longer is not a key


def recall_key(message_id: str) -> str:
    return f"{PREFIX}{message_id}"


def message_ids(key: str) -> list[str]:
    """The message ids `key` may name, most likely first; none for text that cannot be a key.

    `msg_<id>` names `<id>`; a bare id (the older form) names itself. An id that itself begins
    with `msg_` (one imported from an archive, say) is tried as written too.
    """
    key = key.strip().strip("\"'`")
    if not key or len(key) > MAX_KEY_CHARS:
        return []
    if key.startswith(PREFIX) and len(key) > len(PREFIX):
        return [key[len(PREFIX) :], key]
    return [key]
