"""`user_notes`: notes about the user and their things, kept in a JSON file beside this tool.

The notes outlive sessions, restarts and tool reloads because they live in `user_notes.json` next to
this file, never in module state (the module is re-executed on every reload). The file is replaced
atomically, and a file that cannot be parsed is reported rather than overwritten, so notes are
never lost to a bad write.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

name = "user_notes"
description = (
    "Notes kept across sessions: facts, preferences, reminders the user wants kept. `add` stores "
    "`text`; `list` shows all; `search` finds notes with every word of `query`; `delete` removes "
    "note `id`."
)
parameters = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "list", "search", "delete"]},
        "text": {"type": "string", "minLength": 1, "maxLength": 10000},
        "query": {"type": "string", "minLength": 1},
        "id": {"type": "integer", "minimum": 1},
    },
    "required": ["action"],
    "additionalProperties": False,
}
timeout = 10

NOTES_FILE = Path(__file__).with_name("user_notes.json")
MAX_LISTED = 200


def _load() -> dict[str, Any]:
    try:
        text = NOTES_FILE.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"next_id": 1, "notes": []}
    try:
        data = json.loads(text)
        notes = data["notes"]
        if not isinstance(notes, list):
            raise TypeError("`notes` is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(
            f"the notes file {NOTES_FILE} is damaged ({exc}); it was left untouched: fix or move it"
        ) from None
    highest = max((int(n.get("id", 0)) for n in notes), default=0)
    data["next_id"] = max(int(data.get("next_id", 1)), highest + 1)
    return data


def _save(data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=NOTES_FILE.parent, prefix=".user_notes.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, NOTES_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _show(notes: list[dict[str, Any]]) -> str:
    return "\n".join(f"#{n['id']} ({n['created_at']}): {n['text']}" for n in notes)


async def execute(params: dict[str, Any]) -> str:
    action = params["action"]
    data = _load()
    notes: list[dict[str, Any]] = data["notes"]
    if action == "add":
        text = (params.get("text") or "").strip()
        if not text:
            raise ValueError("`add` needs `text`, the note to store")
        note = {
            "id": data["next_id"],
            "text": text,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        notes.append(note)
        data["next_id"] += 1
        _save(data)
        return f"Saved note #{note['id']}."
    if action == "delete":
        if "id" not in params:
            raise ValueError("`delete` needs `id`, the note's number")
        kept = [n for n in notes if n.get("id") != params["id"]]
        if len(kept) == len(notes):
            raise ValueError(f"there is no note #{params['id']}; use `list` to see the notes")
        data["notes"] = kept
        _save(data)
        return f"Deleted note #{params['id']}."
    if action == "search":
        terms = (params.get("query") or "").lower().split()
        if not terms:
            raise ValueError("`search` needs `query`, the words to look for")
        found = [n for n in notes if all(t in str(n.get("text", "")).lower() for t in terms)]
        if not found:
            return f"No notes contain all of: {' '.join(terms)}."
        return f"{len(found)} matching note(s):\n{_show(found)}"
    if not notes:
        return "There are no notes yet."
    shown = notes[-MAX_LISTED:]
    more = f" (showing the newest {len(shown)})" if len(notes) > len(shown) else ""
    return f"{len(notes)} note(s){more}:\n{_show(shown)}"
