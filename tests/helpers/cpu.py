"""Where the suite's CPU goes: `--cpu-report` records the processor time of each test.

On two cores the suite is bound by processor time, not by waiting, so the wall-clock durations
pytest reports (inflated by every other worker) say little about what to cut. With `--cpu-report`
each worker adds up, per test (setup, call and teardown), the CPU seconds of its own process (the
in-process Navi's threads included), of its child processes already ended, and of the ones still
running (a module's Chromium, a llama-server, a `navi serve`) with what their own ended children
used (a Chromium's renderers), read from /proc. The controller keeps them in pytest's cache under
`navi/cpu` and prints the heaviest files. A process started by a session fixture counts for the
tests that kept it busy.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

KEY = "navi/cpu"
TICK = os.sysconf("SC_CLK_TCK")


def _descendants(root: int) -> list[int]:
    """Every process below `root` (by their parent ids in /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _ticks(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rfind(")") + 2 :].split()
    # utime, stime, and those of its own children it has reaped (cutime, cstime): a Chromium's
    # renderers and a `navi serve`'s tool host end inside a test, and their time is only there.
    return sum(int(field) for field in fields[11:15])


def tree_cpu(root: int) -> float:
    """CPU seconds of `root` and every process below it, with what their ended children used."""
    return sum(_ticks(pid) for pid in [root, *_descendants(root)]) / TICK


def cpu_seconds() -> float:
    """This process's CPU, its ended children's, and its running descendants', in seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    running = sum(_ticks(pid) for pid in _descendants(os.getpid()))
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime + running / TICK


class CpuReport:
    """Per test in a worker: CPU seconds from its setup to its teardown; kept by the controller."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seen: dict[str, float] = {}
        self.started: float | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.started = cpu_seconds()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
        outcome = yield
        if call.when == "teardown" and self.started is not None:
            outcome.get_result().user_properties.append(("cpu", round(cpu_seconds() - self.started, 3)))
            self.started = None

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == "cpu" and report.when == "teardown":
                self.seen[report.nodeid] = float(value)

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is None or not self.seen or hasattr(self.config, "workerinput"):
            return
        cache.set(KEY, self.seen)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter) -> None:  # type: ignore[no-untyped-def]
        if not self.seen:
            return
        by_file: dict[str, float] = {}
        for nodeid, seconds in self.seen.items():
            path = nodeid.split("::", 1)[0]
            by_file[path] = by_file.get(path, 0.0) + seconds
        total = sum(self.seen.values())
        terminalreporter.write_sep("=", f"CPU by file: {total:.0f} CPU-s in {len(self.seen)} tests")
        for path, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:25]:
            terminalreporter.write_line(f"{seconds:8.1f}  {path}")
