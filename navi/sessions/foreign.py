"""Bring your history: ChatGPT's and Claude's `conversations.json` exports as Navi sessions.

Both exports are a JSON list of conversations. ChatGPT's keeps each conversation as a tree
(`mapping`: node id → {id, message, parent, children}) with `current_node` the leaf that was shown
last; Claude's as a list (`chat_messages`: {uuid, sender, text, content, created_at}). Each
conversation becomes one session of the importing user, named by its title, with its times kept:
the user and assistant messages a person saw (ChatGPT's hidden system messages, tool calls and
results, reasoning and browsing records are left out). A ChatGPT conversation is the path from its
root to `current_node`, the session's active branch; the other branches of its tree are the
session's other branches (navi/sessions/tree.py), each forking off where it did.

The whole file is checked before anything is stored: a bad one is refused with what is wrong and
where (`ExportError`, an `ArchiveError`), and nothing of it is imported — nor one holding more
messages (ChatGPT: nodes) than the caps allow, per conversation and in the whole file, counted
first. A ChatGPT tree is walked once, each node once and without recursion, whatever its shape.

A conversation's session id is derived from the source, the user and the conversation's id, so
importing the same file again adds nothing, and two users importing one file each get their own
sessions.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from navi import safejson
from navi.llm.messages import Message, new_id, utcnow
from navi.llm.tokens import estimate_messages_tokens
from navi.sessions import tree
from navi.sessions.archive import import_archive
from navi.sessions.models import Session
from navi.sessions.store import SessionStore
from navi.sessions.unpack import DEFAULT_MAX_BYTES, ExportError, kind_of, load_json

Source = Literal["chatgpt", "claude"]
SOURCES: tuple[Source, ...] = ("chatgpt", "claude")
NAMES: dict[str, str] = {"chatgpt": "ChatGPT", "claude": "Claude"}
_NAMESPACE = uuid.UUID("5b0e1b52-3c1f-4b5e-9d0a-6e2f4a1c7d90")
MAX_NAME = 200


@dataclass
class Conversation:
    source: Source
    source_id: str
    title: str | None
    created_at: datetime
    updated_at: datetime
    messages: list[Message]
    branches: list[dict[str, Any]] = field(default_factory=list)


def session_id_for(source: str, owner: str, source_id: str) -> str:
    """The id an imported conversation's session has: the same on every import of it by `owner`."""
    return str(uuid.uuid5(_NAMESPACE, f"{source}\x00{owner}\x00{source_id}"))


def _fail(where: str, what: str) -> ExportError:
    return ExportError(f"{where}: {what}")


def _epoch(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(where, f"a time must be seconds since 1970, not {str(value)[:40]!r}")
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise _fail(where, f"{value} is not a time") from None


def _iso(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(where, f"a time must be ISO 8601 text, not {type(value).__name__}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _fail(where, f"{value[:40]!r} is not an ISO 8601 time") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _text_id(value: Any, where: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(where, f"`{what}` must be a non-empty string")
    return value


def _message_id(value: Any) -> str:
    """The source's id when it is one Navi can store (at most 64 printable characters), else a new one."""
    if isinstance(value, str) and 0 < len(value) <= 64 and value.isprintable():
        return value
    return new_id()


def _title(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _fail(where, "the title must be text")
    name = " ".join((value or "").split())[:MAX_NAME]
    return name or None


# --- ChatGPT -------------------------------------------------------------------------------------


def _chatgpt_text(message: dict[str, Any]) -> str | None:
    """What a person saw of a ChatGPT message, or None for what the page did not show."""
    meta = message.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("is_visually_hidden_from_conversation") or message.get("recipient", "all") != "all":
        return None
    content = message.get("content")
    if not isinstance(content, dict):
        return None
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        parts = content.get("parts")
        if not isinstance(parts, list):
            return None
        texts = [p if isinstance(p, str) else "[image]" for p in parts if isinstance(p, str | dict)]
        text = "\n".join(t for t in texts if t)
    elif kind == "code":
        code = content.get("text")
        text = code if isinstance(code, str) else ""
    else:  # reasoning, browsing and tool records, system errors: not the conversation
        return None
    return safejson.clean_text(text).strip() or None


def _chatgpt_node_message(node: dict[str, Any], where: str, when: datetime) -> Message | None:
    message = node.get("message")
    if message is None:
        return None
    if not isinstance(message, dict):
        raise _fail(where, "`message` must be an object or null")
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if not isinstance(role, str):
        raise _fail(where, "the message has no `author.role`")
    if role not in ("user", "assistant"):
        return None
    text = _chatgpt_text(message)
    if text is None:
        return None
    created = _epoch(message.get("create_time"), f"{where}/create_time") or when
    return Message(
        id=_message_id(message.get("id") or node.get("id")),
        role="user" if role == "user" else "assistant",
        content=text,
        created_at=created,
    )


def _chatgpt_tree(
    mapping: dict[str, Any], current: Any, where: str, start: datetime
) -> tuple[list[tuple[str, Message]], list[dict[str, Any]]]:
    """The messages a person saw on the path from the root to `current` (the last leaf when there
    is none), as (node, message), and the tree's other branches: each the messages of a run of
    nodes off the path, hung after the nearest message above them (None: a root of its own).

    Each node is walked once, without recursion: the path from `current` up, then from each other
    leaf up to the first node already walked (the path, or a branch before it). A tree shaped like a
    comb — a long path with a leaf off every node — costs what its nodes do, not their number times
    the path's length. A message without a time has its predecessor's (in a branch, the message it
    hangs after if that is a branch's too, else the conversation's start)."""
    if current is not None and current not in mapping:
        raise _fail(where, f"`current_node` {str(current)[:64]!r} is not in the mapping")
    leaves = [k for k, n in mapping.items() if not n.get("children")]
    if current is None and leaves:
        current = leaves[-1]
    # node: the id of the message at or nearest above it (None: nothing above it was shown)
    above: dict[str, str | None] = {}
    times: dict[str, datetime] = {}  # the branches' messages' times, for those hung after them

    def up(leaf: str) -> list[str]:
        """The nodes from `leaf` up to the first one walked before (or a root), top first."""
        run, seen, at = [], set(), leaf
        while at is not None and at not in above:
            if at in seen:
                raise _fail(f"{where}/mapping/{at}", "the parents form a loop")
            seen.add(at)
            run.append(at)
            at = mapping[at].get("parent")
        run.reverse()
        return run

    def shown(run: list[str], after: str | None, when: datetime) -> list[tuple[str, Message]]:
        out: list[tuple[str, Message]] = []
        for key in run:
            message = _chatgpt_node_message(
                mapping[key], f"{where}/mapping/{key}", out[-1][1].created_at if out else when
            )
            if message is not None:
                out.append((key, message))
                after = message.id
            above[key] = after
        return out

    main = shown(up(current), None, start) if current is not None else []
    branches = []
    for leaf in leaves:
        if leaf in above:
            continue
        run = up(leaf)
        parent = mapping[run[0]].get("parent")
        after = above[parent] if parent is not None else None
        extra = [m for _, m in shown(run, after, times.get(after or "", start))]
        if extra:
            times.update((m.id, m.created_at) for m in extra)
            fields = {"id", "role", "content", "created_at"}
            branches.append(
                {"after": after, "messages": [m.model_dump(mode="json", include=fields) for m in extra]}
            )
    return main, branches


def _chatgpt_conversation(data: Any, where: str, max_messages: int) -> Conversation:
    if not isinstance(data, dict):
        raise _fail(where, "a conversation must be an object")
    source_id = _text_id(data.get("conversation_id") or data.get("id"), where, "id")
    title = _title(data.get("title"), f"{where}/title")
    where = f"{where} ({title or source_id})"
    created = _epoch(data.get("create_time"), f"{where}/create_time")
    updated = _epoch(data.get("update_time"), f"{where}/update_time")
    mapping = data.get("mapping")
    if not isinstance(mapping, dict):
        raise _fail(where, "`mapping` must be an object of nodes")
    if len(mapping) > max_messages:
        raise _fail(where, f"{len(mapping):,} nodes; at most {max_messages:,} (NAVI_IMPORT_MAX_MESSAGES)")
    for key, node in mapping.items():
        here = f"{where}/mapping/{key}"
        if not isinstance(node, dict):
            raise _fail(here, "a node must be an object")
        parent, children = node.get("parent"), node.get("children", [])
        if parent is not None and parent not in mapping:
            raise _fail(here, f"its parent {str(parent)[:64]!r} is not in the mapping")
        if not isinstance(children, list) or any(
            not isinstance(c, str) or c not in mapping for c in children
        ):
            raise _fail(here, "`children` must list nodes of the mapping")
    start = created or utcnow()
    main, branches = _chatgpt_tree(mapping, data.get("current_node"), where, start)
    messages = [m for _, m in main]
    return Conversation(
        "chatgpt",
        source_id,
        title,
        created or (messages[0].created_at if messages else start),
        updated or (messages[-1].created_at if messages else start),
        messages,
        branches,
    )


# --- Claude --------------------------------------------------------------------------------------


def _claude_text(message: dict[str, Any], where: str) -> str | None:
    content = message.get("content")
    texts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
    elif content is not None:
        raise _fail(where, "`content` must be a list of blocks")
    if not texts and isinstance(message.get("text"), str):
        texts = [message["text"]]
    return safejson.clean_text("\n\n".join(t for t in texts if t)).strip() or None


def _claude_conversation(data: Any, where: str, max_messages: int) -> Conversation:
    if not isinstance(data, dict):
        raise _fail(where, "a conversation must be an object")
    source_id = _text_id(data.get("uuid"), where, "uuid")
    title = _title(data.get("name"), f"{where}/name")
    where = f"{where} ({title or source_id})"
    created = _iso(data.get("created_at"), f"{where}/created_at")
    updated = _iso(data.get("updated_at"), f"{where}/updated_at")
    entries = data.get("chat_messages")
    if not isinstance(entries, list):
        raise _fail(where, "`chat_messages` must be a list")
    if len(entries) > max_messages:
        raise _fail(where, f"{len(entries):,} messages; at most {max_messages:,} (NAVI_IMPORT_MAX_MESSAGES)")
    start = created or utcnow()
    messages: list[Message] = []
    for i, entry in enumerate(entries):
        here = f"{where}/chat_messages/{i}"
        if not isinstance(entry, dict):
            raise _fail(here, "a message must be an object")
        sender = entry.get("sender")
        if sender not in ("human", "assistant"):
            raise _fail(here, f'`sender` must be "human" or "assistant", not {str(sender)[:40]!r}')
        when = _iso(entry.get("created_at"), f"{here}/created_at") or (
            messages[-1].created_at if messages else start
        )
        text = _claude_text(entry, here)
        if text is not None:
            messages.append(
                Message(
                    id=_message_id(entry.get("uuid")),
                    role="user" if sender == "human" else "assistant",
                    content=text,
                    created_at=when,
                )
            )
    return Conversation(
        "claude",
        source_id,
        title,
        created or (messages[0].created_at if messages else start),
        updated or (messages[-1].created_at if messages else start),
        messages,
    )


# --- both ----------------------------------------------------------------------------------------


def _entries(data: list[Any], source: str) -> int:
    """How many messages (ChatGPT: nodes) the file's conversations hold in all, before any is read."""
    field = "mapping" if source == "chatgpt" else "chat_messages"
    return sum(
        len(entries)
        for item in data
        if isinstance(item, dict) and isinstance(entries := item.get(field), dict | list)
    )


def parse_export(
    source: str,
    text: str | bytes,
    *,
    max_messages: int,
    max_file_messages: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[Conversation]:
    """Every conversation of an export file (`source`: "chatgpt" or "claude"), checked whole;
    `ExportError` on anything wrong. The file is the export's `conversations.json`, or the `.zip`
    the service sends, which holds it (navi/sessions/unpack.py). At most `max_messages` messages
    (ChatGPT: nodes) in a conversation and `max_file_messages` in the whole file. Blocking (CPU
    work proportional to the file): a server runs it on a worker thread."""
    if source not in NAMES:
        raise ExportError(f"Navi imports exports of {' and '.join(NAMES.values())}, not {source[:40]!r}")
    data = load_json(text, f"not a {NAMES[source]} export", max_bytes=max_bytes)
    return conversations_of(source, data, max_messages=max_messages, max_file_messages=max_file_messages)


def parse_any(
    data: bytes, *, max_messages: int, max_file_messages: int, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[str, list[Conversation] | Session]:
    """What a person gave the page's Import: a ChatGPT or Claude export (the zip, or its
    conversations.json) → ("chatgpt" | "claude", its conversations), or a Navi archive → ("navi",
    its session, under a new id). `ExportError` (an `ArchiveError`) on anything else."""
    what = "not an export of ChatGPT or Claude, nor a Navi archive"
    parsed = load_json(data, what, max_bytes=max_bytes)
    kind = kind_of(parsed)
    if kind is None:
        raise ExportError(
            f"{what}: a ChatGPT or Claude export's conversations.json is a list of conversations"
        )
    if kind == "navi":
        return kind, import_archive(parsed, max_messages=max_messages)
    found = conversations_of(kind, parsed, max_messages=max_messages, max_file_messages=max_file_messages)
    return kind, found


def conversations_of(
    source: str, data: Any, *, max_messages: int, max_file_messages: int | None = None
) -> list[Conversation]:
    """`parse_export` of the file's JSON, already parsed."""
    name = NAMES[source]
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]  # some tools wrap the list
    if not isinstance(data, list):
        raise ExportError(f"not a {name} export: conversations.json holds a list of conversations")
    if max_file_messages is not None and (found := _entries(data, source)) > max_file_messages:
        raise ExportError(
            f"not imported: the file holds {found:,} messages{' (nodes)' if source == 'chatgpt' else ''}"
            f" in all; at most {max_file_messages:,} (NAVI_IMPORT_MAX_FILE_MESSAGES)"
        )
    parse = _chatgpt_conversation if source == "chatgpt" else _claude_conversation
    conversations = [parse(item, f"conversation {i}", max_messages) for i, item in enumerate(data)]
    seen: set[str] = set()
    for conv in conversations:
        if conv.source_id in seen:
            raise ExportError(f"not a {name} export: two conversations have the id {conv.source_id[:64]!r}")
        seen.add(conv.source_id)
    return conversations


def _tree(conv: Conversation) -> tuple[list[Message], dict[str, str | None]]:
    """A ChatGPT conversation's other branches as messages off the path, and every message's
    parent, in the order they were said (so ‹ 1/2 › counts the older version first)."""
    others: list[Message] = []
    parents = tree.chain([m.id for m in conv.messages])
    for branch in conv.branches:
        said = [Message.model_validate(m) for m in branch["messages"]]
        others.extend(said)
        parents.update(tree.chain([m.id for m in said], branch["after"]))
    when = {m.id: m.created_at for m in [*conv.messages, *others]}
    return others, {i: parents[i] for i in sorted(parents, key=lambda i: when[i])}


def to_session(conv: Conversation, *, owner: str, profile_id: str) -> Session:
    origin: dict[str, Any] = {"source": conv.source, "id": conv.source_id}
    others, parents = _tree(conv)
    return Session(
        id=session_id_for(conv.source, owner, conv.source_id),
        owner=owner,
        profile_id=profile_id,
        name=conv.title,
        created_at=conv.created_at,
        last_active=max(conv.updated_at, conv.created_at),
        messages=conv.messages,
        others=others,
        parents=parents,
        active_leaf=conv.messages[-1].id if conv.messages else None,
        context=list(conv.messages),
        context_token_count=estimate_messages_tokens(conv.messages),
        custom={"imported_from": origin},
    )


@dataclass
class ImportReport:
    imported: list[Session] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # ids of sessions an earlier import made


async def bring_in(
    store: SessionStore, conversations: list[Conversation], *, owner: str, profile_id: str
) -> ImportReport:
    """Store each conversation as a session of `owner`, unless an earlier import stored it already."""
    report = ImportReport()
    for conv in conversations:
        session = to_session(conv, owner=owner, profile_id=profile_id)
        if await store.get(session.id, owner=owner, display=False) is not None:
            report.skipped.append(session.id)
            continue
        try:
            await store.insert(session)
        except Exception:
            if await store.get(session.id, owner=owner, display=False) is None:
                raise
            report.skipped.append(session.id)  # a concurrent import of the same file got there first
            continue
        report.imported.append(session)
    return report
