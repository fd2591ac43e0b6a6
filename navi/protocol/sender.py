"""Who sent a message, from where, and what else its client says about it.

The reference's `add_message(role, content, name=…, location=…, **metadata)` (AbstractCore's
sessions) keeps these with a message; Navi takes them in a `message` frame and in
`POST /sessions/{id}/messages`. They are stored with the message (`Message.name`,
`MessageMeta.location`, `MessageMeta.custom`), returned with its history and written to archives
as the message's `metadata` (`name`, `location`, and each metadata key beside them) — and never
sent to the model: the reference puts them in the archive, not in the conversation.

Limits, so a client cannot grow every row of a session without bound: `name` at most 64
characters, `location` 256, `metadata` a JSON object of at most 4,096 bytes whose keys are
non-empty text of at most 64 characters and not one of the archive's own metadata keys.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_NAME = 64
MAX_LOCATION = 256
MAX_METADATA_BYTES = 4096
MAX_METADATA_KEY = 64
# The keys an archived message's metadata holds already (navi/sessions/session-archive-v1.schema.json):
# a client's metadata key of the same name would be lost or misread on the way through an archive.
RESERVED_KEYS = frozenset(
    {
        "name",
        "location",
        "images",
        "thinking",
        "thinking_signature",
        "is_summary",
        "is_plan",
        "is_compression",
        "stopped",
        "requested_tool_calls",
        "call_id",
        "arguments",
        "status",
        "duration_ms",
        "stderr",
        "extra",
    }
)


class Sender(BaseModel):
    """A message's `name` (who wrote it), `location` (where they were, in their words) and
    `metadata` (the client's own keys), as checked by `sender_problem`."""

    model_config = ConfigDict(frozen=True)

    name: str | None = Field(default=None, max_length=MAX_NAME)
    location: str | None = Field(default=None, max_length=MAX_LOCATION)
    metadata: dict[str, Any] | None = None
    # Document collections (ids, the owner's) the message reads besides its conversation's: set by
    # Navi (the OpenAI-compatible API's `X-Navi-Collection`), never read from a client's frame.
    collections: tuple[str, ...] | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Sender | None:
        """The sender a checked frame or request body names (None when it names nothing)."""
        name, location, metadata = data.get("name"), data.get("location"), data.get("metadata")
        if name is None and location is None and not metadata:
            return None
        return cls(
            name=name.strip() if name else None,
            location=location.strip() if location else None,
            metadata=metadata or None,
        )


def _text_problem(field: str, value: Any, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        return f"{field} must be non-empty text"
    if len(value.strip()) > limit:
        return f"{field} must be at most {limit} characters (it has {len(value.strip())})"
    if any(unicodedata.category(c) == "Cc" for c in value):
        return f"{field} must be one line of text, without control characters"
    return None


def sender_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with the `name`, `location` and `metadata` of `data` (None: nothing)."""
    problem = _text_problem("name", data.get("name"), MAX_NAME) or _text_problem(
        "location", data.get("location"), MAX_LOCATION
    )
    if problem is not None:
        return problem
    metadata = data.get("metadata")
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        return "metadata must be a JSON object"
    for key in metadata:
        if not isinstance(key, str) or not key.strip() or len(key) > MAX_METADATA_KEY:
            return f"metadata keys must be non-empty text of at most {MAX_METADATA_KEY} characters"
        if key in RESERVED_KEYS:
            return f"metadata key {key!r} is reserved (a message's own field); choose another name"
    size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_METADATA_BYTES:
        return f"metadata must be at most {MAX_METADATA_BYTES:,} bytes as JSON (it has {size:,})"
    return None
