"""The relational schema, in SQLAlchemy Core, shared by SQLite and PostgreSQL.

Each buffer is its own table of (session, position) rows holding one message as JSON text, so a
turn inserts rows and compression replaces only `session_context` rows. On SQLite the row tables
are WITHOUT ROWID: the primary key is the table, so an insert touches one b-tree, not two. Migrations under
`migrations/versions` create these tables; this module is what the code queries.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("profile_id", String(64), nullable=False),
    Column("name", Text, nullable=True),
    Column("pinned", Boolean, nullable=False, default=False),
    Column("context_token_count", Integer, nullable=False, default=0),
    Column("display_count", Integer, nullable=False, default=0),
    Column("context_count", Integer, nullable=False, default=0),
    Column("planning_count", Integer, nullable=False, default=0),
    Column("context_rev", Integer, nullable=False, default=0),
    # The display leaf the next turn appends below (migration 0016; None: the newest message).
    Column("active_leaf", String(64), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_active", DateTime(timezone=True), nullable=False),
    # An imported archive's own system prompt, a layer of the session's (migration 0020).
    Column("system_prompt", Text, nullable=True),
    # The model picked for this conversation, "backend:model" (migration 0035; None: its profile's).
    Column("model", String(300), nullable=True),
    # Where it sits (migration 0032): a folder's name, archived (hidden from the list), temporary.
    Column("folder", String(100), nullable=True),
    Column("archived", Boolean, nullable=False, default=False),
    Column("temporary", Boolean, nullable=False, default=False),
)


def _buffer(name: str, *extra: Column[Any]) -> Table:
    return Table(
        name,
        metadata,
        Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
        Column("position", Integer, primary_key=True),
        Column("message_id", String(64), nullable=False),
        Column("role", String(16), nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("data", Text, nullable=False),
        *extra,
        sqlite_with_rowid=False,
    )


# A display message's parent is the message id it follows on its branch (None: the first message).
session_messages = _buffer("session_messages", Column("parent_id", String(64), nullable=True))
session_context = _buffer("session_context")
# Recall keys name a message by its id (navi/sessions/keys.py): found without reading the buffers.
Index("ix_session_messages_message_id", session_messages.c.message_id)

# The searched text of display messages (migration 0015): written by triggers on
# `session_messages`, indexed by an FTS5 table (`message_search_fts`) on SQLite and a generated
# `tsvector` column (`search`) on PostgreSQL, which the queries in navi/storage/search.py name.
message_search = Table(
    "message_search",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("owner", String(128), nullable=False),
    Column("position", Integer, nullable=False),
    Column("message_id", String(64), nullable=False),
    Column("role", String(16), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("body", Text, nullable=False),
    UniqueConstraint("session_id", "position", name="uq_message_search_session_position"),
)
# Per owner, how many of their searched messages hold each word, and under the empty word how many
# they have: kept by triggers on `message_search` (migration 0034), read for search's word weights.
message_search_words = Table(
    "message_search_words",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("word", Text, primary_key=True),
    Column("n", Integer, nullable=False),
)

session_planning_logs = Table(
    "session_planning_logs",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("data", Text, nullable=False),
    sqlite_with_rowid=False,
)

memory_facts = Table(
    "memory_facts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("owner", String(128), nullable=False),
    Column("category", String(64), nullable=False),
    Column("key", String(128), nullable=False),
    Column("value", Text, nullable=False),
    Column("session_id", String(64), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("confirmations", Integer, nullable=False, default=1),
    # How the value came in: extracted, remembered, added, edited (see navi.memory.base.Source).
    Column("source", String(32), nullable=False, default="extracted"),
    # A retired row is history: replaced by a newer value (`replaced_by`, the current fact) or
    # forgotten. (owner, category, key) is unique among current rows only (migration 0014).
    Column("retired_at", DateTime(timezone=True), nullable=True),
    Column("replaced_by", Integer, nullable=True),
    # Last, so that the columns before it stay on the row's page (migration 0040): with its
    # attribute's, a vector is about 4 KB, more than SQLite keeps of a row there.
    Column("embedding", Text, nullable=True),
)

memory_summary = Table(
    "memory_summary",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("content", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

session_memory_state = Table(
    "session_memory_state",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("extracted_at", DateTime(timezone=True), nullable=False),
)

# "Always allow" answers to approvals, per owner: a tool ("" subject) or, for `terminal`, one
# program (the command's argv[0] as typed). See navi/agent/grants.py.
approval_grants = Table(
    "approval_grants",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("tool", String(128), primary_key=True),
    Column("subject", String(512), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Browser sign-ins: the cookie carries a random id; only its SHA-256 digest (bound to the access
# token, so a new token signs every browser out) is kept, with when it expires. See
# navi/api/signins.py.
browser_sessions = Table(
    "browser_sessions",
    metadata,
    Column("digest", String(64), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    # Whom the sign-in acts as (migration 0009): the owner, or a user with the digest of the token
    # they signed in with (NULL for the owner), which must still be theirs on every request.
    Column("owner", String(128), nullable=False, server_default="local"),
    Column("user_token_sha256", String(64), nullable=True),
)

# Parts of a session's archive that its buffers do not hold, one JSON object per row: analytics
# generated on demand or imported ("summary", "assessment", "facts") and an imported archive's
# session fields Navi has no use for ("custom"). See navi/sessions/archive.py.
session_archive_parts = Table(
    "session_archive_parts",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("name", String(32), primary_key=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("data", Text, nullable=False),
    sqlite_with_rowid=False,
)

# Users besides the owner: each name is an owner id of every store above; only the SHA-256 of the
# user's token is kept (a token is looked up by its digest). See navi/users/store.py.
users = Table(
    "users",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

# Schedules: a prompt run by cron, interval or at one moment, per owner; `next_run_at` is the one
# instant the runner acts on, moved atomically when a run is claimed. Runs are unique per
# (schedule, due instant), a second guard against running one due instant twice. See
# navi/schedules/.
schedules = Table(
    "schedules",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("title", Text, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("profile_id", String(64), nullable=False),
    Column("session_id", String(36), nullable=True),
    Column("kind", String(16), nullable=False),
    Column("cron", String(200), nullable=True),
    Column("every_seconds", Integer, nullable=True),
    Column("at", DateTime(timezone=True), nullable=True),
    Column("timezone", String(64), nullable=False),
    Column("missed", String(8), nullable=False),
    Column("paused", Boolean, nullable=False, default=False),
    Column("done", Boolean, nullable=False, default=False),
    Column("next_run_at", DateTime(timezone=True), nullable=True, index=True),
    Column("last_run_at", DateTime(timezone=True), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # Where the answer is also delivered (migration 0018): JSON {"channel": …, "to": …}, or NULL.
    Column("deliver", Text, nullable=True),
)

schedule_runs = Table(
    "schedule_runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("schedule_id", String(32), ForeignKey("schedules.id", ondelete="CASCADE"), nullable=False),
    Column("owner", String(128), nullable=False),
    Column("due_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("status", String(24), nullable=False),
    Column("manual", Boolean, nullable=False, default=False),
    Column("session_id", String(36), nullable=True),
    Column("preview", Text, nullable=True),
    Column("error", Text, nullable=True),
    UniqueConstraint("schedule_id", "due_at", name="uq_schedule_runs_due"),
)
Index("ix_schedule_runs_schedule_started", schedule_runs.c.schedule_id, schedule_runs.c.started_at)

# Sessions a scheduled run answered in since their owner last looked (the page's unread badge).
session_unread = Table(
    "session_unread",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("marked_at", DateTime(timezone=True), nullable=False),
)

# Which run holds a session, for every Navi process on this database (navi/runs/leases.py): one row
# per session with a run going; `expires_at` (seconds since the epoch, the database's clock) is
# moved on by the worker's heartbeat, and a row past it belongs to a worker that is gone.
run_leases = Table(
    "run_leases",
    metadata,
    Column("session_id", String(36), primary_key=True),
    Column("run_id", String(32), nullable=False),
    Column("worker", String(300), nullable=False, index=True),
    Column("kind", String(8), nullable=False),
    Column("answered", Boolean, nullable=False, default=False),
    Column("expires_at", Float, nullable=False),
    Column("started_at", Float, nullable=False),
)

# The frames of runs, for workers that follow a run they do not run and for replays after a
# reconnect (PostgreSQL deployments, navi/runs/pg.py): one row per frame, `seq` counting from 1 per
# run; a row without a frame ends the run. Deleted RUN_EVENTS_KEEP_SECONDS after the run ended.
run_events = Table(
    "run_events",
    metadata,
    Column("run_id", String(32), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("session_id", String(36), nullable=False),
    Column("frame", Text, nullable=True),
    Column("at", Float, nullable=False),
)
Index(
    "ix_run_events_ends",
    run_events.c.at,
    postgresql_where=run_events.c.frame.is_(None),
    sqlite_where=run_events.c.frame.is_(None),
)
Index(
    "ix_run_events_starts",
    run_events.c.at,
    postgresql_where=run_events.c.seq == 1,
    sqlite_where=run_events.c.seq == 1,
)

# Tool calls waiting for the user's answer, as `approval_required` described them, with the run
# and worker that wait: any worker answers one by deleting its row and telling that worker.
run_approvals = Table(
    "run_approvals",
    metadata,
    Column("session_id", String(36), primary_key=True),
    Column("call_id", String(200), primary_key=True),
    Column("run_id", String(32), nullable=False, index=True),
    Column("worker", String(300), nullable=False),
    Column("view", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

# MCP servers' questions runs wait on (`elicitation_required`), where workers share PostgreSQL:
# any worker lists them and stores an answer once; the run's worker takes it (navi/runs/pg.py).
run_elicitations = Table(
    "run_elicitations",
    metadata,
    Column("session_id", String(36), primary_key=True),
    Column("elicitation_id", String(200), primary_key=True),
    Column("run_id", String(32), nullable=False, index=True),
    Column("worker", String(300), nullable=False),
    Column("view", Text, nullable=False),
    Column("answer", Text, nullable=True),
    Column("created_at", Float, nullable=False),
)

# The tasks of Navi's own MCP server (navi/mcp/tasks.py): any worker answers `tasks/get` and takes
# `tasks/cancel`; the running worker beats a working task and reads `cancel` (navi/storage/mcp_tasks.py).
mcp_tasks = Table(
    "mcp_tasks",
    metadata,
    Column("task_id", String(64), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("tool", String(200), nullable=False),
    Column("status", String(20), nullable=False),
    Column("message", Text, nullable=True),
    Column("result", Text, nullable=True),
    Column("error", Text, nullable=True),
    Column("created", String(40), nullable=False),
    Column("updated", String(40), nullable=False),
    Column("started", Float, nullable=False),
    Column("beat", Float, nullable=False),
    Column("cancel", Boolean, nullable=False, server_default=false()),
)

# Failed sign-ins per client (an address, an IPv6 /64), where workers share the database: the
# throttle counts them whichever worker they reached (navi/storage/throttle.py).
signin_failures = Table(
    "signin_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("client", String(64), nullable=False),
    Column("at", Float, nullable=False),
)
Index("ix_signin_failures_client_at", signin_failures.c.client, signin_failures.c.at)

# Uploaded files' bytes, where workers on several machines share the database: a run on any of them
# reads a file uploaded through another (navi/storage/files.py). Capped as uploads are.
session_files = Table(
    "session_files",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("name", String(200), primary_key=True),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", Float, nullable=False),
)

# Messages sent while a turn runs (migration 0017, navi/runs/queue.py): queued to run after it
# ("queue") or to reach its next model call ("steer"), in the order sent (`id`), until they do.
queued_messages = Table(
    "queued_messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_id", String(64), nullable=False, unique=True),
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("mode", String(8), nullable=False),
    Column("content", Text, nullable=False),
    Column("images", Text, nullable=False),
    Column("files", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # The message's name, location and metadata as JSON, NULL for none (migration 0020).
    Column("sender", Text, nullable=True),
    Index("ix_queued_messages_session", "session_id", "id"),
)
# Channels (navi/channels/): who may talk to Navi from outside — an address of a channel, as a Navi
# user — and which outside message (an email's Message-ID) belongs to which session.
channel_allow = Table(
    "channel_allow",
    metadata,
    Column("channel", String(32), primary_key=True),
    Column("address", String(320), primary_key=True),
    Column("user", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

channel_threads = Table(
    "channel_threads",
    metadata,
    Column("channel", String(32), primary_key=True),
    Column("key", String(512), primary_key=True),
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("owner", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_channel_threads_session", channel_threads.c.session_id)

# Per-session working state every worker sees (migration 0023, navi/sessions/state.py): one JSON
# value per (session, name) — the todo list, the scratchpad, the memory snapshot the session's
# prompt carries, what compression learnt about the session.
session_state = Table(
    "session_state",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("name", String(32), primary_key=True),
    Column("data", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    sqlite_with_rowid=False,
)

# Memory extraction of a session, claimed by one worker at a time (navi/memory/claims.py): `through`
# display messages (in the order written) were read; a claim held by `worker` until `until` (the
# database's clock, seconds since the epoch) reads those after them.
extraction_claims = Table(
    "extraction_claims",
    metadata,
    Column("session_id", String(36), ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("through", Integer, nullable=False, default=0),
    Column("worker", String(64), nullable=True),
    Column("until", Float, nullable=True),
)

# Model endpoints that failed, skipped by every worker until `until` (migration 0031,
# navi/storage/breaker.py): the circuit breaker of the model chains (docs/models.md).
model_breakers = Table(
    "model_breakers",
    metadata,
    Column("endpoint", String(64), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("until", Float, nullable=False),
    Column("reason", String(500), nullable=False),
)
