"""tests/conftest.py's groups for a parallel run: which tests share a worker."""

from __future__ import annotations

from tests.conftest import run_group


def test_the_tests_of_one_expensive_server_share_one_group() -> None:
    assert {
        run_group(
            "tests/real_model/test_greeting.py::test_greeting_ends_with_stream_end_and_no_error[gemma3]"
        ),
        run_group("tests/real_model/test_scenarios.py::test_planning_then_an_answer"),
    } == {"llama-server"}
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
