"""Shared fixtures: an isolated working directory, settings, the fake model server."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from navi.config import Settings, load_settings
from navi.storage import migrate
from navi.storage.database import Database, postgres_url
from navi.testing.fake_server import FakeModelServer
from navi.testing.postgres import PostgresCluster
from tests.helpers import cli_cache, sqlite_template
from tests.helpers.browser_pages import PageServer
from tests.helpers.clock import CLOCK_IDS, CLOCK_SHIFTS, clock_module, shifted
from tests.helpers.cpu import CpuReport
from tests.helpers.programs import suite_guard
from tests.helpers.synapse import Synapse, start_synapse
from tests.helpers.tiers import Durations, deselect_slow, heaviest_first

_NAVI_ENV_PREFIXES = (
    "OLLAMA_",
    "OPENAI_",
    "ANTHROPIC_",
    "NAVI_",
    "DB_PATH",
    "TZ",
    "DATABASE_URL",
    "LOG_",
    "TOOLS_DIR",
    "MANUALS_DIR",
    "SESSION_FILES_",
    "CONTEXT_",
    "FS_ALLOWED",
    "TERMINAL_ALLOWED",
    "SANDBOX_",
    "SSH_HOSTS",
    "MEMORY_",
    "DEFAULT_LLM",
    "LLM_",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        action="store_true",
        help="record each test's CPU seconds, its programs' included (tests/helpers/cpu.py)",
    )
    parser.addoption(
        "--clock-shift",
        type=int,
        default=0,
        metavar="DAYS",
        help="run every test with the clock moved this many days (negative: back): tests/helpers/clock.py",
    )
    parser.addoption(
        "--shifted-clock",
        action="store_true",
        help="run the time-sensitive modules (CLOCK_MODULES) twice more in the same run, with the clock "
        "a year ahead and a year back: tests/helpers/clock.py",
    )
    parser.addoption(
        "--quick-only",
        type=float,
        default=None,
        metavar="SECONDS",
        help="leave out the tests that took longer than this when last run (tests/helpers/tiers.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    cli_cache.install()
    sqlite_template.install()
    sys.addaudithook(suite_guard().hook)  # for the whole run: an audit hook cannot be removed
    # Every message is planned, as the scripted conversations of the tests expect (their planning
    # calls answer from `AgentScript.plans`), in this process and every Navi a test starts; the
    # shipped rule that skips planning for short messages is tested where a test sets it
    # (tests/test_planning_skip.py) and measured by bench/conversation.py.
    os.environ["PLANNING_SKIP_WORDS"] = "0"
    config.pluginmanager.register(Durations(config), "navi-durations")
    if config.getoption("--cpu-report"):
        config.pluginmanager.register(CpuReport(config), "navi-cpu")


# A parallel run (pytest-xdist) hands each test to whichever worker is free, except that tests which
# share one expensive server, or a Chromium, go to one worker together and run one after another
# there: the real models' llama-servers, Synapse and the mail servers once per run, and a browser
# test module (its Chromium is started for the module: Playwright's sync API keeps its event loop
# marked as running in the thread, which the asyncio tests after it on that worker must not see).
# Every other shared server (the fake model server, the PostgreSQL cluster) is started once per
# worker. xdist's own `xdist_group` marks are not used: with pytest 9 they no longer reach its
# scheduler (it renames the tests' ids, which pytest 9 no longer lets it do).
_GROUPS = {
    "tests/real_model/test_compression.py": "llama-server-gemma3",  # the longest: a worker of its own
    "tests/real_model/": "llama-server",
    "tests/test_channel_matrix": "synapse",  # test_channel_matrix.py and test_channel_matrix_trust.py
    "tests/test_channel_email.py": "mail",
    "tests/ui/": None,  # one group per module
    "tests/security/test_page_policy.py": None,  # its browser tests
    "tests/test_browser_tool.py": None,  # one Chromium for the module
    "tests/test_browser_secrets.py": None,  # one Chromium for the module
    "tests/security/test_input_limits.py": None,  # three `navi serve` for the module, started once
    "tests/test_voice.py": None,  # the voice models, loaded once for the module
    "tests/test_voice_api.py": None,  # one Navi (and its voice models) for the module
}


def run_group(nodeid: str) -> str:
    """The tests a parallel run keeps together on one worker: a group's name, else the test alone."""
    path = nodeid.split("::", 1)[0]
    for prefix, group in _GROUPS.items():
        if path.startswith(prefix):
            return group or path
    return nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if config.getoption("dist") not in ("load", "loadgroup"):
        return None  # another --dist asked for: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        """xdist's scope scheduling, with `run_group` as the scope; the scopes that took longest in
        the last run start first (`heaviest_first`; untimed ones by an estimate).

        The work queue is ordered here rather than the collections: xdist sends each worker the
        indexes of its tests in that worker's own collection (`registered_collections`), so those
        must stay as the workers collected them. (Reordering them instead, as before, sent every
        worker other tests than the ones scheduled: groups were scattered over the workers, and
        each started its own Chromium or llama-server.)"""

        def _split_scope(self, nodeid: str) -> str:
            return run_group(nodeid)

        def schedule(self) -> None:
            if self.collection is not None or not self.collection_is_completed:
                super().schedule()
                return
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            if not self.collection:
                return
            for nodeid in heaviest_first(self.collection, Durations(config).recorded(), run_group):
                self.workqueue.setdefault(run_group(nodeid), {})[nodeid] = False
            for _ in range(len(self.nodes) - len(self.workqueue)):  # more workers than work
                unused, _assigned = self.assigned_work.popitem()
                unused.shutdown()
            for node in self.nodes:
                self._assign_work_unit(node)
            for node in self.nodes:  # each starts with two units where there are enough
                self._reschedule(node)
            if not self.workqueue:
                for node in self.nodes:
                    node.shutdown()

    return Grouped(config, log)  # type: ignore[arg-type]


# Tiers by what a test uses, so `make check` (the unit tier) can leave the others out: a test of the
# PostgreSQL cluster is marked `postgres`, one of Chromium `browser`, wherever it is.
_TIER_FIXTURES = {
    "pg_url": "postgres",
    "pg_empty_url": "postgres",
    "pg_cluster": "postgres",
    "browser": "browser",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    quick = config.getoption("--quick-only")
    if quick is not None:
        deselect_slow(config, items, quick)
    for item in items:
        if clock_module(item.path):
            item.add_marker(pytest.mark.clock)
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in _TIER_FIXTURES:
                item.add_marker(_TIER_FIXTURES[fixture])


@pytest.fixture(autouse=True)
def listed_programs_only() -> Iterator[None]:
    """Fails the test that started a program scripts/test-deps does not list (tests/helpers/programs.py)."""
    suite_guard().take_violations()
    yield
    violations = suite_guard().take_violations()
    if violations:
        pytest.fail(violations[0], pytrace=False)


@pytest.fixture
def clock_shift(request: pytest.FixtureRequest) -> int:
    """Days the clock is moved for this test: its parameter under --shifted-clock, else --clock-shift."""
    return int(getattr(request, "param", request.config.getoption("--clock-shift")))


@pytest.fixture(autouse=True)
def moved_clock(clock_shift: int) -> Iterator[None]:
    with shifted(clock_shift):
        yield


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if (
        metafunc.config.getoption("--shifted-clock")
        and clock_module(metafunc.definition.path)
        and metafunc.definition.get_closest_marker("real_clock") is None
    ):
        metafunc.parametrize("clock_shift", CLOCK_SHIFTS, ids=CLOCK_IDS, indirect=True)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs in its own directory with no Navi variables inherited from the shell."""
    for name in list(os.environ):
        if name.startswith(_NAVI_ENV_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    # Keyword-only memory and documents unless a test asks for a model (the shipped default, the
    # built-in sentence encoder, is tested where a test sets it or removes this): every Navi a test
    # starts would otherwise load it on its first memory search or document.
    monkeypatch.setenv("MEMORY_EMBED_MODEL", "")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def make_settings(tmp_path: Path):
    def make(**overrides: object) -> Settings:
        base: dict[str, object] = {"db_path": str(tmp_path / "navi.db")}
        base.update(overrides)
        return load_settings(**base)

    return make


def _serving() -> Iterator[FakeModelServer]:
    server = FakeModelServer().start()
    try:
        yield server
    finally:
        server.stop()


def _fresh(server: FakeModelServer) -> Iterator[FakeModelServer]:
    server.reset()
    yield server
    server.reset()


@pytest.fixture(scope="session")
def fake_server_session() -> Iterator[FakeModelServer]:
    yield from _serving()


@pytest.fixture
def fake_server(fake_server_session: FakeModelServer) -> Iterator[FakeModelServer]:
    """The shared fake model server with a fresh script for this test."""
    yield from _fresh(fake_server_session)


@pytest.fixture(scope="session")
def other_server_session() -> Iterator[FakeModelServer]:
    """A second fake model server, for tests with more than one model endpoint."""
    yield from _serving()


@pytest.fixture
def other(other_server_session: FakeModelServer) -> Iterator[FakeModelServer]:
    """The second fake model server with a fresh script for this test."""
    yield from _fresh(other_server_session)


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """One Synapse homeserver for the Matrix tests of the run (each test registers its own users)."""
    yield from start_synapse(tmp_path_factory.mktemp("synapse"))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL cluster for the whole run (each test gets its own database)."""
    cluster = PostgresCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def pg_template(pg_cluster: PostgresCluster) -> str:
    """A database migrated to the newest revision once per run (the real migrations, on
    PostgreSQL), that each test's database is copied from: migrating an empty database costs about
    0.4 s of CPU between Alembic and the server, a copy 0.02 s."""
    name = "navi_template"
    url = pg_cluster.create_database(name)

    async def migrate_it() -> None:
        db = Database(postgres_url(url))
        try:
            await migrate.upgrade(db)  # not a SQLite file: the real migrations
        finally:
            await db.dispose()

    # In a thread with its own event loop: an async test's loop may be running already.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, migrate_it()).result()
    return name


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster, pg_template: str) -> Iterator[str]:
    """A fresh database on the shared cluster, at the newest schema (a copy of `pg_template`)."""
    url = pg_cluster.create_database(template=pg_template)
    try:
        yield url
    finally:
        pg_cluster.drop_database(url)


@pytest.fixture
def pg_empty_url(pg_cluster: PostgresCluster) -> Iterator[str]:
    """A fresh, empty database on the shared cluster: for tests that migrate it themselves (to an
    older revision first)."""
    url = pg_cluster.create_database()
    try:
        yield url
    finally:
        pg_cluster.drop_database(url)


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    """The test site for a module's tests (tests/helpers/browser_pages.py); a module may define its own."""
    server = PageServer().start()
    yield server
    server.stop()
