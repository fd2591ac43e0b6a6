"""tests/conftest.py's groups for a parallel run: which tests share a worker."""

from __future__ import annotations

from tests.conftest import run_group
from tests.helpers.tiers import KEY, Durations, deselect_slow, heaviest_first


def test_the_tests_of_one_expensive_server_share_one_group() -> None:
    assert {
        run_group(
            "tests/real_model/test_greeting.py::test_greeting_ends_with_stream_end_and_no_error[gemma3]"
        ),
        run_group("tests/real_model/test_scenarios.py::test_planning_then_an_answer"),
    } == {"llama-server"}
    gemma = run_group("tests/real_model/test_compression.py::test_a_long_conversation")
    assert gemma == "llama-server-gemma3"
    assert {
        run_group("tests/test_channel_matrix.py::test_an_allowed_user_asks"),
        run_group("tests/test_channel_matrix_trust.py::test_a_schedule_is_not_delivered"),
    } == {"synapse"}


def test_a_browser_module_is_a_group_of_its_own() -> None:
    first = run_group("tests/ui/test_chat.py::test_one")
    assert first == run_group("tests/ui/test_chat.py::test_two[phone]") == "tests/ui/test_chat.py"
    assert run_group("tests/ui/test_queue.py::test_one") != first


def test_any_other_test_goes_alone() -> None:
    nodeid = "tests/test_archive.py::test_round_trip[sqlite]"
    assert run_group(nodeid) == nodeid


class _Cache:
    def __init__(self, data: dict[str, object]) -> None:
        self.data = data

    def get(self, key: str, default: object) -> object:
        return self.data.get(key, default)

    def set(self, key: str, value: object) -> None:
        self.data[key] = value


class _Hooks:
    def __init__(self) -> None:
        self.deselected: list[object] = []

    def pytest_deselected(self, items: list[object]) -> None:
        self.deselected += items


class _Config:
    def __init__(self, cache: _Cache) -> None:
        self.cache = cache
        self.hook = _Hooks()


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_the_unit_tier_leaves_out_what_was_slow_last_time_and_keeps_new_tests() -> None:
    config = _Config(_Cache({KEY: {"t.py::slow": 4.2, "t.py::quick": 0.05}}))
    items = [_Item("t.py::slow"), _Item("t.py::quick"), _Item("t.py::new")]
    deselect_slow(config, items, 1.0)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ["t.py::quick", "t.py::new"]
    assert [i.nodeid for i in config.hook.deselected] == ["t.py::slow"]  # type: ignore[attr-defined]


def test_a_run_records_setup_and_call_and_keeps_what_it_did_not_run() -> None:
    config = _Config(_Cache({KEY: {"t.py::old": 2.0, "t.py::a": 9.0}}))
    durations = Durations(config)  # type: ignore[arg-type]

    class Report:
        def __init__(self, when: str, duration: float, outcome: str = "passed") -> None:
            self.nodeid, self.when, self.duration, self.outcome = "t.py::a", when, duration, outcome

    for report in (Report("setup", 0.5), Report("call", 0.25), Report("teardown", 3.0)):
        durations.pytest_runtest_logreport(report)  # type: ignore[arg-type]
    durations.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert config.cache.data[KEY] == {"t.py::old": 2.0, "t.py::a": 0.75}


def test_the_scopes_that_took_longest_are_handed_out_first() -> None:
    ids = [
        "tests/test_a.py::quick",
        "tests/real_model/test_x.py::one",
        "tests/test_b.py::slow",
        "tests/real_model/test_y.py::two",
        "tests/test_c.py::never_timed",
    ]
    recorded = {
        "tests/test_a.py::quick": 0.1,
        "tests/real_model/test_x.py::one": 40.0,
        "tests/real_model/test_y.py::two": 50.0,
        "tests/test_b.py::slow": 30.0,
    }
    order = heaviest_first(ids, recorded, run_group)
    # The llama-server group (90 s) first, its tests together in their order; then the 30 s test;
    # the untimed one (an estimate: 0.3 s) before the 0.1 s one.
    assert order == [
        "tests/real_model/test_x.py::one",
        "tests/real_model/test_y.py::two",
        "tests/test_b.py::slow",
        "tests/test_c.py::never_timed",
        "tests/test_a.py::quick",
    ]
    # Nothing timed yet: a shared server's group counts as slow per test, and ties keep their order.
    assert heaviest_first(ids, {}, run_group)[:2] == [
        "tests/real_model/test_x.py::one",
        "tests/real_model/test_y.py::two",
    ]
    assert sorted(heaviest_first(ids, {}, run_group)) == sorted(ids)


class _Node:
    """A worker as xdist's scheduler sees it: it is sent indexes into its own collection."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent += indexes

    def shutdown(self) -> None:
        self.shutting_down = True


class _XdistConfig:
    option = type("Option", (), {"loadscopereorder": True, "maxschedchunk": None})()
    cache = _Cache({KEY: {"tests/test_b.py::slow": 30.0, "tests/real_model/test_y.py::two": 50.0}})

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def getoption(self, name: str) -> object:
        return {"dist": "load"}[name]

    def getvalue(self, name: str) -> object:
        return {"tx": [f"{self.workers}*popen"]}[name]


def test_each_worker_runs_the_groups_it_was_given_whole() -> None:
    """The heaviest group goes out first, and the tests a worker is sent (indexes into its own
    collection) are the tests of the groups scheduled on it — a group never split."""
    from tests.conftest import pytest_xdist_make_scheduler

    collection = [
        "tests/test_a.py::quick",
        "tests/real_model/test_x.py::one",
        "tests/test_b.py::slow",
        "tests/real_model/test_y.py::two",
        "tests/ui/test_chat.py::first",
        "tests/ui/test_chat.py::second",
        "tests/test_c.py::never_timed",
    ]
    scheduler = pytest_xdist_make_scheduler(_XdistConfig(2), None)  # type: ignore[arg-type]
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        scheduler.add_node(node)
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    ran = {node.gateway.id: [collection[i] for i in node.sent] for node in nodes}
    assert ran["gw0"][:2] == ["tests/real_model/test_x.py::one", "tests/real_model/test_y.py::two"]
    for group in ("llama-server", "tests/ui/test_chat.py"):
        holders = {name for name, tests in ran.items() if any(run_group(t) == group for t in tests)}
        assert len(holders) == 1, (group, ran)
    for name, tests in ran.items():
        for test in tests:  # a worker holds every test of each group it was given
            assert all(t in tests for t in collection if run_group(t) == run_group(test)), (name, ran)
