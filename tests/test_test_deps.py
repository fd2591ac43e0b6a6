"""The suite's own promises about the machine: `scripts/test-deps` is the one list of system
programs the tests run, a test that runs anything else fails naming it, and no test's dates depend
on the day it runs (the moved-clock runs in `make test`)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from navi.schedules import ScheduleRun
from tests.helpers.programs import DEPS_SCRIPT, ProgramGuard, UnlistedProgram, listed_programs, suite_guard

ROOT = Path(__file__).resolve().parents[1]


def test_the_list_names_each_program_with_its_package() -> None:
    packaged, base = listed_programs()
    assert packaged["bwrap"] == "bubblewrap"
    assert packaged["tmux"] == "tmux"
    assert packaged["chromium"] == "chromium"
    assert packaged["initdb"] == packaged["pg_ctl"] == "postgresql"
    assert {"sh", "bash", "ls"} <= base and "bwrap" not in base


def test_every_listed_program_is_here_after_make_test_ran_the_script() -> None:
    check = subprocess.run([str(DEPS_SCRIPT), "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_a_missing_package_is_named_in_one_line_without_root(tmp_path: Path) -> None:
    script = tmp_path / "test-deps"
    text = DEPS_SCRIPT.read_text().replace("tmux: tmux\n", "tmux: tmux\nnavi-nothing: navi-no-such-program\n")
    script.write_text(text)
    script.chmod(0o755)
    check = subprocess.run([str(script), "--check"], capture_output=True, text=True)
    assert check.returncode == 1
    assert check.stderr.strip() == "the tests need: navi-nothing"


def test_a_program_not_on_the_list_fails_naming_it(tmp_path: Path) -> None:
    guard = ProgramGuard(*listed_programs())
    assert guard.allowed("bwrap") and guard.allowed("/usr/bin/tmux") and guard.allowed("sh")
    assert guard.allowed(str(tmp_path / "made-by-the-test"))  # the test's own programs
    assert not guard.allowed("/opt/elsewhere/redis-server")
    with pytest.raises(UnlistedProgram, match=r"redis-server.*scripts/test-deps does not list"):
        guard.check("/opt/elsewhere/redis-server")
    assert guard.take_violations() and not guard.take_violations()


def test_the_suite_guard_stops_an_unlisted_program_before_it_runs() -> None:
    with pytest.raises(UnlistedProgram, match="navi-unlisted-program"):
        subprocess.run(["/usr/sbin/navi-unlisted-program", "--version"])
    # Recorded too, so a test whose code under test swallows the error still fails: taken here so
    # this test itself passes.
    assert any("navi-unlisted-program" in v for v in suite_guard().take_violations())


def test_a_schedule_run_never_reads_the_wall_clock_for_its_start() -> None:
    due = datetime(2030, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError, match="started_at"):
        ScheduleRun(schedule_id="s", due_at=due)  # type: ignore[call-arg]
    run = ScheduleRun(schedule_id="s", due_at=due, started_at=due + timedelta(seconds=1))
    assert run.started_at == due + timedelta(seconds=1)
