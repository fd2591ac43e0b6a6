"""The stores, opened from `Settings` without the agent: what a command that runs none works with.

`open_stores()` opens (and migrates) the database, builds every store on it
(`navi.storage.stores.build_stores`), the model backends and the profiles (with the ones people made
on the page), memory's embedding model and the schedule service. `build_runtime()` builds its
runtime on the same `OpenStores`, so each part is built one way. Nothing here imports the agent, a
tool, a channel or a model SDK: `navi sessions list`, `navi memory list`, `navi docs`, `navi
schedules`… open these and nothing else (tests/test_cli_store_path.py checks what they import).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from navi.compose.channels import delivery_problem
from navi.compose.database import open_database
from navi.compose.models import build_backends, build_profiles, describe_memory_search, embedder
from navi.config import Settings
from navi.documents.extract.common import Limits
from navi.logging import get_logger
from navi.profiles.custom import InMemoryPreferenceStore, as_profile
from navi.schedules.service import ScheduleService
from navi.schedules.when import system_zone_name
from navi.storage.breaker import SqlBreaker
from navi.storage.memory import SqlMemoryStore
from navi.storage.stores import build_stores

if TYPE_CHECKING:
    from navi.documents.base import DocumentStore
    from navi.llm.registry import BackendRegistry
    from navi.memory.base import MemoryStore
    from navi.memory.embedders import Embedder
    from navi.memory.extractor import MemoryExtractor
    from navi.profiles.custom import PreferenceStore
    from navi.profiles.registry import ProfileRegistry
    from navi.sessions.store import SessionStore
    from navi.storage.database import Database
    from navi.storage.stores import Stores
    from navi.telemetry import Telemetry
    from navi.users import UserStore

log = get_logger(__name__)


@dataclass(frozen=True)
class DocumentSettings:
    """How documents are taken and read, as plain values (DOCUMENTS_*)."""

    limits: Limits  # the size, pages and seconds one document may cost
    indexing: bool  # index in this process's background


def document_settings(settings: Settings) -> DocumentSettings:
    return DocumentSettings(
        limits=Limits(
            max_bytes=settings.documents_max_bytes,
            max_pages=settings.documents_max_pages,
            seconds=settings.documents_extract_seconds,
        ),
        indexing=settings.documents_indexing,
    )


def schedule_zone(settings: Settings) -> str:
    """The zone schedules are read in: TZ, else this machine's zone, else UTC."""
    return settings.tz or system_zone_name()


@dataclass
class OpenStores:
    """Every store on the one database (in memory without one), and what reading them needs."""

    settings: Settings
    # The database the stores share, when it was opened here (None when the sessions and memory
    # stores were handed in, or a read-only command found no database yet).
    db: Database | None
    stores: Stores
    backends: BackendRegistry  # no SDK imported: a backend's loads on its first call
    profiles: ProfileRegistry  # the built-in ones, then the ones people made on the page
    preferences: PreferenceStore
    schedules: ScheduleService
    embedder: Embedder | None  # memory's embedding model, which indexes and searches documents too
    document_settings: DocumentSettings

    @property
    def sessions(self) -> SessionStore:
        return self.stores.sessions

    @property
    def memory(self) -> MemoryStore:
        return self.stores.memory

    @property
    def users(self) -> UserStore:
        return self.stores.users

    @property
    def documents(self) -> DocumentStore | None:
        return self.stores.documents

    @cached_property
    def extractor(self) -> MemoryExtractor:
        """Memory extraction for a command, which runs no turn (`navi memory add` rewrites the
        summary through it)."""
        return memory_extractor(self, is_running=lambda _session_id: False)


def memory_extractor(opened: OpenStores, *, is_running: Callable[[str], bool]) -> MemoryExtractor:
    """Reads sessions into memory facts and writes the summary, through `opened`'s models;
    `is_running(session_id)`: a session mid-turn, read once its turn is over."""
    from navi.memory.extractor import MemoryExtractor

    return MemoryExtractor(
        sessions=opened.sessions,
        memory=opened.memory,
        backends=opened.backends,
        profiles=opened.profiles,
        stale_minutes=opened.settings.memory_stale_minutes,
        is_running=is_running,
        claims=opened.stores.claims,  # one worker reads a session, and never the same messages twice
        max_tokens=opened.settings.llm_max_tokens_extraction,
    )


async def open_stores(
    settings: Settings,
    cleanup: AsyncExitStack,
    *,
    create_database: bool = True,
    backends: BackendRegistry | None = None,
    sessions: SessionStore | None = None,
    memory: MemoryStore | None = None,
    telemetry: Telemetry | None = None,
) -> OpenStores:
    """The stores, open; `cleanup` closes them (and the database, and the backends built here).

    `create_database=False` (read-only commands) makes no SQLite file: with none there yet, the
    stores are empty in-memory ones. Stores and backends handed in are used as they are (opened
    and closed here all the same). `telemetry` sees every model call (and is shut down by
    `cleanup`). A database that cannot be used is raised as `SetupError`.
    """
    if backends is None:
        backends = build_backends(settings)
        cleanup.push_async_callback(backends.aclose)
    if telemetry is not None:
        cleanup.callback(telemetry.shutdown)
        backends.observer = telemetry.calls  # every model call measured (and traced)
    profiles = build_profiles(settings, backends)
    db = None
    if sessions is None or memory is None:
        db = await open_database(settings, create=create_database)
        if db is not None:
            cleanup.push_async_callback(db.dispose)
    if db is not None and backends.models is not None:  # every worker skips the same failed models
        backends.models.breaker = SqlBreaker(db)
    embed = embedder(settings, backends)
    stores = build_stores(
        db, files_dir=settings.session_files_dir, embed=embed, sessions=sessions, memory=memory
    )
    preferences = stores.preferences or InMemoryPreferenceStore()
    for custom in await preferences.profiles():  # the profiles people made on the page
        profiles.register(as_profile(custom))
    await stores.sessions.open()
    cleanup.push_async_callback(stores.sessions.aclose)
    await stores.memory.open()
    cleanup.push_async_callback(stores.memory.aclose)
    memory = stores.memory
    hybrid = isinstance(memory, SqlMemoryStore) and memory.embed is not None
    log.info(
        "memory_search",
        mode="hybrid" if hybrid else "keyword-only",
        detail=describe_memory_search(embed if hybrid else None, db.dialect if db else None),
    )
    schedules = ScheduleService(
        stores.schedules,
        sessions=stores.sessions,
        profiles=profiles,
        zone_name=schedule_zone(settings),
        delivery_problem=delivery_problem(settings),
    )
    return OpenStores(
        settings=settings,
        db=db,
        stores=stores,
        backends=backends,
        profiles=profiles,
        preferences=preferences,
        schedules=schedules,
        embedder=embed,
        document_settings=document_settings(settings),
    )
