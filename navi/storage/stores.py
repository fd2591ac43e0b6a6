"""Every store Navi keeps its data in, built in one place: SQL on the one database, or in memory.

The composition root opens (and migrates) the database and hands it here; with none (a read-only
command before `navi serve` made one, or tests), every store is the in-memory one of its package.
A store handed in (tests, benchmarks) is used as it is. Browser sign-ins (`signins.py`) are kept by
the API's `SignIns`, which writes them through to the database once the runtime has one.
"""

from __future__ import annotations

from dataclasses import dataclass

from navi.agent.grants import GrantStore, InMemoryGrantStore
from navi.documents.base import DocumentStore
from navi.jobs import InMemoryJobStore, JobStore
from navi.memory.base import MemoryStore
from navi.memory.claims import ExtractionClaims, InMemoryExtractionClaims
from navi.memory.in_memory import InMemoryMemoryStore
from navi.profiles.custom import InMemoryPreferenceStore, PreferenceStore
from navi.push import InMemoryPushStore, PushStore
from navi.push.prefs import InMemoryNotifySettings, NotifySettingsStore
from navi.push.presence import InMemoryPresence, Presence
from navi.schedules.store import InMemoryScheduleStore, ScheduleStore
from navi.sessions.memory_store import InMemorySessionStore
from navi.sessions.state import InMemorySessionStateStore, SessionStateStore
from navi.sessions.store import SessionStore
from navi.storage.browser_states import SqlBrowserStates
from navi.storage.database import Database
from navi.storage.documents import SqlDocumentStore
from navi.storage.grants import SqlGrantStore
from navi.storage.jobs import SqlJobStore
from navi.storage.memory import Embed, SqlMemoryStore
from navi.storage.preferences import SqlPreferenceStore
from navi.storage.presence import SqlNotifySettings, SqlPresence
from navi.storage.push import SqlPushStore
from navi.storage.schedules import SqlScheduleStore
from navi.storage.session_state import SqlExtractionClaims, SqlSessionStateStore
from navi.storage.sessions import SqlSessionStore
from navi.storage.users import SqlUserStore
from navi.tools.builtin.browser.states import BrowserStates, InMemoryBrowserStates
from navi.users.store import InMemoryUserStore, UserStore


@dataclass
class Stores:
    sessions: SessionStore
    memory: MemoryStore
    schedules: ScheduleStore
    users: UserStore
    grants: GrantStore  # "always allow" answers
    # Per-session working state and memory-extraction claims: in the database when the sessions
    # are (their rows go with their session), for every worker; else in this process.
    state: SessionStateStore
    claims: ExtractionClaims
    # Documents people gave Navi (issue 43): on the database only (their bytes and index live
    # there); None without one.
    documents: DocumentStore | None = None
    # Web Push subscriptions (issue 47): every worker sends to the same browsers.
    push: PushStore | None = None
    # Which pages are visible, and each user's notification settings (shared by every worker).
    presence: Presence | None = None
    notify_settings: NotifySettingsStore | None = None
    # Background jobs (docs/jobs.md): claimed by one worker at a time.
    jobs: JobStore | None = None
    # Custom instructions and the profiles people made on the page (issue 49).
    preferences: PreferenceStore | None = None
    # Conversations' browser cookies and storage (issue 46): in the database when the sessions
    # are (their rows go with their session), so the worker of a conversation's next turn has them.
    browser_states: BrowserStates | None = None


def build_stores(
    db: Database | None,
    *,
    files_dir: str,
    embed: Embed | None = None,
    sessions: SessionStore | None = None,
    memory: MemoryStore | None = None,
) -> Stores:
    """The stores on `db` (in memory without one). `files_dir` is where sessions keep uploaded
    files; `embed` gives memory facts embeddings (SQL only)."""
    if db is None:
        return Stores(
            sessions=InMemorySessionStore(files_dir) if sessions is None else sessions,
            memory=InMemoryMemoryStore() if memory is None else memory,
            schedules=InMemoryScheduleStore(),
            users=InMemoryUserStore(),
            grants=InMemoryGrantStore(),
            state=InMemorySessionStateStore(),
            claims=InMemoryExtractionClaims(),
            push=InMemoryPushStore(),
            presence=InMemoryPresence(),
            notify_settings=InMemoryNotifySettings(),
            jobs=InMemoryJobStore(),
            preferences=InMemoryPreferenceStore(),
            browser_states=InMemoryBrowserStates(),
        )
    sessions = SqlSessionStore(db, files_dir) if sessions is None else sessions
    shared = isinstance(sessions, SqlSessionStore) and sessions.db is db
    return Stores(
        sessions=sessions,
        memory=SqlMemoryStore(db, embed=embed) if memory is None else memory,
        schedules=SqlScheduleStore(db),
        users=SqlUserStore(db),
        grants=SqlGrantStore(db),
        state=SqlSessionStateStore(db) if shared else InMemorySessionStateStore(),
        claims=SqlExtractionClaims(db) if shared else InMemoryExtractionClaims(),
        documents=SqlDocumentStore(db),
        push=SqlPushStore(db),
        presence=SqlPresence(db),
        notify_settings=SqlNotifySettings(db),
        jobs=SqlJobStore(db),
        preferences=SqlPreferenceStore(db),
        browser_states=SqlBrowserStates(db) if shared else InMemoryBrowserStates(),
    )
