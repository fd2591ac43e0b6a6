"""`navi schedules add --every` takes an interval as people write it (3h, 90m, 2h30m, 1d, or
seconds), and an interval schedule is listed in words ("every 2 hours"), as the page says it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from navi.cli.main import _register, app
from navi.schedules.when import ScheduleError, every_words, parse_every

_register()
runner = CliRunner()


@pytest.mark.parametrize(
    ("written", "seconds"),
    [
        ("3h", 10800),
        ("90m", 5400),
        ("2h30m", 9000),
        ("1.5h", 5400),
        ("1d", 86400),
        ("45s", 45),
        ("7200", 7200),
        (" 3 H ", 10800),
        ("1w", 604800),
        ("10min", 600),
    ],
)
def test_intervals_as_people_write_them(written: str, seconds: int) -> None:
    assert parse_every(written) == seconds


@pytest.mark.parametrize("written", ["", "h", "3x", "-5", "3h and more", "soon"])
def test_an_interval_that_cannot_be_read_says_how_to_write_one(written: str) -> None:
    with pytest.raises(ScheduleError, match=r"write e\.g\. 30m, 3h, 2h30m, 1d or a number of seconds"):
        parse_every(written)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (7200, "every 2 hours"),
        (3600, "every hour"),
        (5400, "every 90 minutes"),
        (86400, "every day"),
        (172800, "every 2 days"),
        (45, "every 45 seconds"),
        (60, "every minute"),
    ],
)
def test_intervals_in_words(seconds: int, words: str) -> None:
    assert every_words(seconds) == words


def test_schedules_add_every_3h_and_list_it_in_words(tmp_path: Path) -> None:
    env = {"DB_PATH": str(tmp_path / "navi.db"), "LOG_LEVEL": "WARNING", "TZ": "Europe/Berlin"}

    def cli(*args: str) -> object:
        return runner.invoke(app, ["schedules", *args], env=env)

    added = cli("add", "Stretch", "--every", "3h", "--title", "Stretch")
    assert added.exit_code == 0, added.output
    assert "Stretch — every 3 hours, next " in added.stdout
    assert "every 3 hours, next" in cli("list").stdout
    assert cli("add", "Water", "--every", "7200").exit_code == 0  # plain seconds still work
    assert "every 2 hours, next" in cli("list").stdout

    bad = cli("add", "x", "--every", "3 hours please")
    assert bad.exit_code == 2
    assert bad.stderr == (
        "navi: cannot read the interval '3 hours please' — write e.g. 30m, 3h, 2h30m, 1d or a number "
        "of seconds\n"
    )
    too_often = cli("add", "x", "--every", "2s")
    assert too_often.exit_code == 1 and "every_seconds must be at least 5" in too_often.stderr
