"""Session archives: a whole session as versioned JSON (`session-archive/v1`).

Export writes the session's metadata (profile, model, system prompt, settings), its analytics
(a summary — generated on demand, else the latest compression summary —, an assessment, facts),
the display history and the model context. Context entries that are also in the display history are
written as `{"ref": id}` so nothing is stored twice. Tool calls are linked to their results by call
id, and each result carries its status, duration and stderr (of process tools). Credentials in
tool-call arguments are masked (`navi.sessions.shown`): an archive is a file meant to travel.
Import validates against the JSON Schema shipped next to this module, rebuilds both buffers
exactly, and gives the session a new id.

Archives written by AbstractCore import too: without `context` the context is derived from the
messages (without display-only ones and the archive's own system prompt, which the session keeps
as its own layer of the system prompt Navi composes, `Session.system_prompt`);
messages without ids get new ones, times without a zone are UTC; a profile this Navi does not have
becomes the default one (`settle_profile`). Fields Navi has no use for — session fields beyond the
schema's, a message's metadata keys beyond it (the custom metadata a client sent with a message is
kept the same way) — are kept and written again by the next export.

`parse_archive` takes the archive as text from anyone: it is parsed with `navi.safejson` (nesting
limit, unstorable characters replaced) and its message count checked before the (slow) schema
validation. It is CPU work proportional to the archive: callers in a server run it on a thread.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from navi import __version__, redact, safejson
from navi.llm.messages import Message, ToolCall, new_id, utcnow
from navi.llm.meta import MessageMeta
from navi.llm.tokens import estimate_messages_tokens
from navi.sessions import shown, tree
from navi.sessions.models import ANALYSIS_PARTS, Session, display_only, new_session_id

SCHEMA_VERSION = "session-archive/v1"
_FLAGS = ("is_summary", "is_plan", "is_compression", "stopped")
_OWN_KEYS = {"status", "duration_ms", "stderr"}
# Where a message keeps the metadata keys of an imported archive that Navi has no use for.
CUSTOM_KEY = "custom"
TREE = "tree"  # the session field holding the other branches (Navi's addition to v1)
MAX_SESSION_PROMPT = 16_000  # characters of an imported system prompt: it goes with every model call


class ArchiveError(ValueError):
    """The archive is not a valid `session-archive/v1` document; the message says where."""


@cache
def archive_schema() -> dict[str, Any]:
    text = (
        resources.files("navi.sessions")
        .joinpath("session-archive-v1.schema.json")
        .read_text(encoding="utf-8")
    )
    return dict(json.loads(text))


@cache
def _known(definition: str, *path: str) -> frozenset[str]:
    """The property names the schema lists for `definition` (then `path` inside it)."""
    node = archive_schema()["$defs"][definition]
    for key in path:
        node = node["properties"][key]
    return frozenset(node["properties"])


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _message_out(msg: Message, calls: dict[str, ToolCall]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if msg.name is not None:
        meta["name"] = msg.name
    if msg.metadata.location is not None:
        meta["location"] = msg.metadata.location
    if msg.images:
        meta["images"] = list(msg.images)
    if msg.thinking is not None:
        meta["thinking"] = msg.thinking
    if msg.thinking_signature is not None:
        meta["thinking_signature"] = msg.thinking_signature
    for flag in _FLAGS:
        if getattr(msg, flag):
            meta[flag] = True
    if msg.tool_calls:
        meta["requested_tool_calls"] = [
            {
                "call_id": c.id,
                "name": c.name,
                "arguments": shown.arguments(c.arguments),
                **({"raw_arguments": redact.text(c.raw_arguments)} if c.raw_arguments is not None else {}),
                **({"arguments_error": c.arguments_error} if c.arguments_error is not None else {}),
            }
            for c in msg.tool_calls
        ]
    # The stored values, as they are: an imported archive's may be of any type its schema allows.
    stored = msg.metadata.as_json()
    if msg.role == "tool":
        call = calls.get(msg.tool_call_id or "")
        meta["call_id"] = msg.tool_call_id or ""
        meta["arguments"] = shown.arguments(call.arguments) if call else {}
        meta["status"] = stored.get("status", "ok")
        meta["duration_ms"] = stored.get("duration_ms")
        meta["stderr"] = msg.metadata.stderr
    # A tool result's own keys are the schema's fields above; on another message they are extra (an
    # answer's `duration_ms` is its model call's).
    own = _OWN_KEYS if msg.role == "tool" else set()
    extra = {k: v for k, v in stored.items() if k not in own and k not in (CUSTOM_KEY, "location")}
    if extra:
        meta["extra"] = extra
    if msg.metadata.custom:  # where the archive it came from had them, beside Navi's own keys
        for key, value in msg.metadata.custom.items():
            meta.setdefault(key, value)
    return {
        "id": msg.id,
        "role": msg.role,
        "timestamp": _iso(msg.created_at),
        "content": msg.content,
        "metadata": meta,
    }


def _when(value: str, where: str) -> datetime:
    """An archive's date-time; one without a zone (AbstractCore writes local time so) is UTC."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ArchiveError(f"invalid archive at {where}: {value!r} is not an ISO 8601 date-time") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def _message_in(data: dict[str, Any], where: str, when: datetime) -> Message:
    """One archived message; `when` is its time if it has none (the one before it, or the session's)."""
    meta = data.get("metadata") or {}
    metadata = dict(meta.get("extra") or {})  # validated as `MessageMeta`, which keeps every key
    if data["role"] == "tool":
        metadata["status"] = meta.get("status", "ok")
        if meta.get("duration_ms") is not None:
            metadata["duration_ms"] = meta["duration_ms"]
        if meta.get("stderr"):
            metadata["stderr"] = meta["stderr"]
    custom = {k: v for k, v in meta.items() if k not in _known("message", "metadata")}
    if custom:
        metadata[CUSTOM_KEY] = custom
    if meta.get("location") is not None:
        metadata["location"] = meta["location"]
    stamp = data.get("timestamp")
    return Message(
        id=data.get("id") or new_id(),
        role=data["role"],
        content=data["content"],
        created_at=_when(stamp, f"{where}/timestamp") if stamp else when,
        name=meta.get("name"),
        images=list(meta.get("images") or []),
        thinking=meta.get("thinking"),
        thinking_signature=meta.get("thinking_signature"),
        tool_call_id=meta.get("call_id") if data["role"] == "tool" else None,
        tool_calls=[
            ToolCall(
                id=c["call_id"],
                name=c["name"],
                arguments=c["arguments"],
                raw_arguments=c.get("raw_arguments"),
                arguments_error=c.get("arguments_error"),
            )
            for c in meta.get("requested_tool_calls") or []
        ],
        metadata=MessageMeta.model_validate(metadata),
        **{flag: bool(meta.get(flag)) for flag in _FLAGS},
    )


def export_session(
    session: Session,
    *,
    provider: str = "",
    model: str = "",
    model_params: dict[str, Any] | None = None,
    system_prompt: str = "",
    tools: list[dict[str, Any]] | None = None,
    settings: dict[str, Any] | None = None,
    keep_recent: int | None = None,
) -> dict[str, Any]:
    calls = {c.id: c for m in [*session.messages, *session.others, *session.context] for c in m.tool_calls}
    display_ids = {m.id for m in session.messages}
    by_id = {m.id: m for m in session.messages}
    meta: dict[str, Any] = {
        "id": session.id,
        "name": session.name,
        "created_at": _iso(session.created_at),
        "last_active": _iso(session.last_active),
        "pinned": session.pinned,
        "profile_id": session.profile_id,
        "provider": provider,
        "model": model,
        "model_params": model_params or {},
        "system_prompt": system_prompt,
        **({"session_prompt": session.system_prompt} if session.system_prompt else {}),
        "settings": settings or {},
        "context_token_count": session.context_token_count,
        "planning_logs": session.planning_logs,
    }
    if tools is not None:
        meta["tool_registry"] = tools
    summary = session.summary_message
    if summary is not None:
        meta["summary"] = {
            "created_at": _iso(summary.created_at),
            "text": summary.content or "",
            **({"preserve_recent": keep_recent} if keep_recent is not None else {}),
            "metrics": {k: v for k, v in summary.metadata.as_json().items() if isinstance(v, int | float)},
        }
    meta.update({name: session.analysis[name] for name in ANALYSIS_PARTS if name in session.analysis})
    if session.others:  # other branches: `messages` is the path shown, as a reader of v1 expects
        meta[TREE] = {
            "parents": dict(session.parents),
            "messages": [_message_out(m, calls) for m in session.others],
        }
    for key, value in session.custom.items():
        meta.setdefault(key, value)  # never in place of Navi's own fields
    context: list[dict[str, Any]] = []
    for msg in session.context:
        same = msg.id in display_ids and by_id[msg.id] == msg
        context.append({"ref": msg.id} if same else _message_out(msg, calls))
    return {
        "schema_version": SCHEMA_VERSION,
        "exported_at": _iso(utcnow()),
        "generator": f"navi {__version__}",
        "session": meta,
        "messages": [_message_out(m, calls) for m in session.messages],
        "context": context,
    }


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _first_error(validator: jsonschema.Draft202012Validator, data: Any, prefix: str = "") -> str | None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "/".join([prefix, *(str(p) for p in error.absolute_path)]).strip("/") or "(top level)"
    return f"{where}: {error.message}"


def part_problem(name: str, data: Any) -> str | None:
    """Why `data` is not a valid analytics part `name` of an archive's session (None when it is)."""
    schema = archive_schema()
    return _first_error(_validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}), data, name)


def validate_archive(data: Any, *, max_messages: int | None = None) -> None:
    if not isinstance(data, dict):
        raise ArchiveError("an archive must be a JSON object")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ArchiveError(f"unsupported schema_version {version!r}; this Navi reads {SCHEMA_VERSION!r}")
    if max_messages is not None:
        for part in ("messages", "context"):
            entries = data.get(part)
            if isinstance(entries, list) and len(entries) > max_messages:
                raise ArchiveError(
                    f"the archive's {part} hold {len(entries):,} entries; at most {max_messages:,} "
                    "can be imported (NAVI_IMPORT_MAX_MESSAGES)"
                )
    problem = _first_error(_validator(archive_schema()), data)
    if problem is not None:
        raise ArchiveError(f"invalid archive at {problem}")


def parse_archive(text: str | bytes, *, max_messages: int, owner: str | None = None) -> Session:
    """Parse an archive's JSON text and rebuild its session (`import_archive`). Raises
    `ArchiveError` on anything wrong with it, JSON included. Blocking: run it on a worker thread."""
    try:
        data = safejson.loads(text)
    except safejson.UnsafeJSON as exc:
        raise ArchiveError(f"invalid archive: {exc}") from None
    except ValueError as exc:
        raise ArchiveError(f"the archive is not JSON: {exc}") from None
    return import_archive(data, owner=owner, max_messages=max_messages)


def import_archive(data: Any, *, owner: str | None = None, max_messages: int | None = None) -> Session:
    """Rebuild a session from an archive, under a new id. Raises `ArchiveError` on bad input.

    The session's `profile_id` is the archive's, or "" when it has none: `settle_profile` makes it
    one this Navi has.
    """
    validate_archive(data, max_messages=max_messages)
    meta = data["session"]
    created = _when(meta["created_at"], "session/created_at")
    messages: list[Message] = []
    for i, entry in enumerate(data["messages"]):
        messages.append(_message_in(entry, f"messages/{i}", messages[-1].created_at if messages else created))
    others, parents = _tree_in(meta.get(TREE), messages, created)
    by_id = {m.id: m for m in [*messages, *others]}
    if "context" in data:
        context = _context_in(data["context"], by_id, created)
        tokens = int(meta.get("context_token_count", 0))
    else:
        context = derived_context(messages, meta.get("system_prompt"))
        tokens = int(meta.get("context_token_count", estimate_messages_tokens(context)))
    last_active = meta.get("last_active")
    return Session(
        id=new_session_id(),
        owner=owner or "local",
        profile_id=meta.get("profile_id", ""),
        name=meta.get("name"),
        pinned=bool(meta.get("pinned", False)),
        context_token_count=tokens,
        created_at=created,
        last_active=_when(last_active, "session/last_active")
        if last_active
        else max([created, *(m.created_at for m in messages)]),
        messages=messages,
        others=others,
        parents=parents,
        active_leaf=messages[-1].id if messages else None,
        context=context,
        planning_logs=list(meta.get("planning_logs") or []),
        message_count=len(messages) + len(others),
        analysis=_analysis_in(meta, context),
        custom={k: v for k, v in meta.items() if k not in _known("session") and k != TREE},
        system_prompt=_session_prompt(data),
    )


def _session_prompt(data: dict[str, Any]) -> str | None:
    """The layer of the system prompt an imported session keeps: an archive of Navi's names it
    (`session_prompt`; its `system_prompt` is the whole prompt Navi composed, persona and all), any
    other archive's `system_prompt` is it. Too long to send with every call is refused."""
    meta = data["session"]
    navi = str(data.get("generator", "")).startswith("navi ")
    text = ((meta.get("session_prompt") if navi else meta.get("system_prompt")) or "").strip()
    if len(text) > MAX_SESSION_PROMPT:
        raise ArchiveError(
            f"the archive's system prompt has {len(text):,} characters; at most {MAX_SESSION_PROMPT:,} "
            "can be kept, since it goes with every model call of the session"
        )
    return text or None


def _tree_in(
    data: Any, path: list[Message], created: datetime
) -> tuple[list[Message], dict[str, str | None]]:
    """The other branches of an archive (`session.tree`: `parents`, every message's parent in the
    order written, and `messages`, those off the path) and the parents of all. An archive without
    one is one branch: `messages` as a chain."""
    chain = tree.chain([m.id for m in path])
    if data is None:
        return [], chain
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise ArchiveError("invalid archive at session/tree: an object with messages and parents")
    raw = data.get("parents")
    if not isinstance(raw, dict) or not all(isinstance(v, str | None) for v in raw.values()):
        raise ArchiveError("invalid archive at session/tree/parents: an object of message ids (or null)")
    validator = _validator({"$defs": archive_schema()["$defs"], "$ref": "#/$defs/message"})
    others: list[Message] = []
    for i, entry in enumerate(data["messages"]):
        problem = _first_error(validator, entry, f"session/tree/messages/{i}")
        if problem is not None:
            raise ArchiveError(f"invalid archive at {problem}")
        others.append(_message_in(entry, f"session/tree/messages/{i}", created))
    known = {m.id for m in [*path, *others]}
    if len(known) < len(path) + len(others):
        raise ArchiveError("invalid archive at session/tree/messages: a message id appears twice")
    parents: dict[str, str | None] = {i: (p if p in known else None) for i, p in raw.items() if i in known}
    for message_id in known - set(parents):  # not listed: below the path's end, or a root
        parents[message_id] = chain.get(message_id)
    if path and tree.path_to(path[-1].id, parents) != [m.id for m in path]:
        raise ArchiveError("invalid archive at session/tree/parents: messages is not a path of the tree")
    return others, parents


def _context_in(entries: list[dict[str, Any]], by_id: dict[str, Message], created: datetime) -> list[Message]:
    context: list[Message] = []
    for i, entry in enumerate(entries):
        if "ref" in entry:
            if entry["ref"] not in by_id:
                raise ArchiveError(f"context refers to message {entry['ref']!r}, which is not in messages")
            context.append(by_id[entry["ref"]].model_copy(deep=True))
        else:
            context.append(_message_in(entry, f"context/{i}", context[-1].created_at if context else created))
    return context


def derived_context(messages: list[Message], system_prompt: str | None) -> list[Message]:
    """The context of an archive that has none (AbstractCore's): what the model would have seen —
    the messages without display-only ones, and without the archive's own system prompt, since
    Navi composes its own for every call."""
    return [
        m.model_copy(deep=True)
        for m in messages
        if not display_only(m) and not (m.role == "system" and system_prompt and m.content == system_prompt)
    ]


def _analysis_in(meta: dict[str, Any], context: list[Message]) -> dict[str, dict[str, Any]]:
    """The analytics to keep. A summary that is the context's compression summary (Navi exports
    that when none was generated) is not kept: the next export derives it again, newest first."""
    parts = {name: meta[name] for name in ANALYSIS_PARTS if name in meta}
    summary = parts.get("summary")
    compressed = next((m for m in reversed(context) if m.is_summary), None)
    if (
        summary
        and compressed is not None
        and summary["text"] == compressed.content
        and not summary.get("focus")
    ):
        del parts["summary"]
    return parts


def settle_profile(session: Session, known: Collection[str], default: str) -> Session:
    """`session` in a profile this Navi has: an archive's unknown profile (or none) becomes `default`."""
    if session.profile_id not in known:
        session.profile_id = default
    return session
