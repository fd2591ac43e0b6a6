"""A new SQLite database in a test starts as a copy of one migrated once per test process.

Migrating an empty file through every Alembic revision costs about 0.2 s, and the suite makes a
fresh database for most of its tests (each live Navi, each store test). Here `migrate.upgrade` to
head on a SQLite file that does not exist yet copies a template instead: the first such call in a
process migrates a file of its own the real way, later ones copy it with SQLite's online backup
(SQLite itself writes the new file; no descriptor of a database anyone has open is touched, as the
file did not exist). The schema is the one the migrations make — the template *is* their result —
and the migrations themselves still run: once per process, and in every test that migrates an
existing file or to another revision (tests/test_migrations*.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import threading
from pathlib import Path

from navi.storage import migrate
from navi.storage.database import Database, sqlite_url

_real_upgrade = migrate.upgrade
_template: Path | None = None
_lock = threading.Lock()  # tests run many event loops; the template is made once for all of them


def _made() -> Path:
    global _template
    with _lock:
        if _template is None:
            path = Path(tempfile.mkdtemp(prefix="navi-template-")) / "template.db"

            async def migrate_it() -> None:
                db = Database(sqlite_url(path))
                try:
                    await _real_upgrade(db)
                finally:
                    await db.dispose()

            asyncio.run(migrate_it())
            _template = path
    return _template


def _copy(template: Path, target: Path) -> None:
    source = sqlite3.connect(template)
    try:
        made = sqlite3.connect(target)
        try:
            source.backup(made)
        finally:
            made.close()
    finally:
        source.close()


async def upgrade(db: Database, revision: str = "head") -> None:
    path = getattr(db, "_path", None)
    if revision != "head" or not db.is_sqlite or path is None or path.exists() or not path.parent.is_dir():
        await _real_upgrade(db, revision)
        return
    template = await asyncio.to_thread(_made)  # its own event loop, in a thread
    await asyncio.to_thread(_copy, template, path)
    await _real_upgrade(db, revision)  # at head already: checks, and makes the file Navi's (0600)


def install() -> None:
    migrate.upgrade = upgrade  # every caller goes through the module
