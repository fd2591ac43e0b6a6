"""The unit tier of `make check`: the tests that were quick in the last run of the suite.

Every run records how long each test's call took (pytest's cache, `.pytest_cache`, under
`navi/durations`; with xdist the controller sees every worker's reports). `--quick-only=SECONDS`
then leaves out the tests that took longer than that last time — a test that starts `navi serve`,
a CLI process or a homeserver — so the inner loop stays within minutes. A test never run before
is kept: a new test runs in the inner loop until a full run has timed it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

KEY = "navi/durations"


class Durations:
    """Collects call durations in this run and keeps them, merged with the ones recorded before."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seen: dict[str, float] = {}

    def recorded(self) -> dict[str, float]:
        cache = getattr(self.config, "cache", None)
        return dict(cache.get(KEY, {})) if cache is not None else {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.seen[report.nodeid] = self.seen.get(report.nodeid, 0.0) + report.duration
        elif report.when == "setup":
            self.seen[report.nodeid] = report.duration  # a slow fixture makes a slow test too

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is None or not self.seen or hasattr(self.config, "workerinput"):
            return  # a worker of a parallel run: the controller records
        cache.set(KEY, {**self.recorded(), **{k: round(v, 3) for k, v in self.seen.items()}})


def deselect_slow(config: pytest.Config, items: list[pytest.Item], seconds: float) -> None:
    """Leave out the tests that took longer than `seconds` when last timed."""
    recorded = Durations(config).recorded()
    keep, drop = [], []
    for item in items:
        (drop if recorded.get(item.nodeid, 0.0) > seconds else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# Seconds assumed for a test never timed: one of a shared server's group (a browser, a homeserver, a
# real model) is usually slow, any other test quick.
UNTIMED_IN_GROUP, UNTIMED_ALONE = 3.0, 0.3


def heaviest_first(
    nodeids: list[str], recorded: dict[str, float], scope_of: Callable[[str], str]
) -> list[str]:
    """The tests in the order a parallel run should hand out their scopes (`scope_of`: the tests a
    worker runs together): the scopes that took longest last time first, so no worker starts a
    long group near the end while the others sit idle (longest-processing-time-first). Within a
    scope the tests keep their order."""
    scopes: dict[str, list[str]] = {}
    for nodeid in nodeids:
        scopes.setdefault(scope_of(nodeid), []).append(nodeid)

    def weight(scope: str) -> float:
        members = scopes[scope]
        untimed = UNTIMED_ALONE if members == [scope] else UNTIMED_IN_GROUP
        return sum(recorded.get(n, untimed) for n in members)

    ordered = sorted(scopes, key=weight, reverse=True)  # stable: ties keep collection order
    return [nodeid for scope in ordered for nodeid in scopes[scope]]
