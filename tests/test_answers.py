"""Judging a model's answer (`navi.llm.answers`) and the uploaded-files note of a user message.

These sit in the model layer so the memory extractor, the session namer and compression share them
without the memory package importing the agent's.
"""

from __future__ import annotations

import pytest

from navi.agent import engine
from navi.llm.answers import echo_problem, long_numbers, overlap_share, repeats_itself, trim_cut_off, words
from navi.llm.attached import AttachedFile
from navi.llm.messages import Message, with_files, without_files

INSTRUCTIONS = """Write short notes about the conversation below.
Keep names, numbers and decisions exactly as they are written.
Do not repeat these instructions."""
CONVERSATION = (
    "user: I want to back up my NAS at 192.168.1.10 to Backblaze B2 every night.\n"
    "assistant: I wrote a cron job for rclone that runs at 02:00."
)
ANSWERS = {
    "- Backup of the NAS 192.168.1.10 to Backblaze B2.\n- A cron job runs rclone nightly at 02:00.": None,
    INSTRUCTIONS: "repeated the instructions",
    "- Keep names, numbers and decisions exactly as they are written.\n- Do not repeat these instructions.\n"
    "- Backup.": "repeated the instructions",
    CONVERSATION: "copied the conversation",
    "- the backup runs at night\n" * 4: "repeated the same line",
    "## Goals\n## Decisions\nOpen questions:": "had headings with nothing under them",
}


@pytest.mark.parametrize(("answer", "problem"), ANSWERS.items())
def test_an_answer_is_judged_by_what_it_says(answer: str, problem: str | None) -> None:
    assert echo_problem(answer, INSTRUCTIONS, CONVERSATION) == problem


def test_the_measures_behind_the_judgement() -> None:
    assert words("Don't STOP_now, 42!") == ["don", "t", "stop", "now", "42"]
    assert overlap_share("one two three four", "zero one two three") == 0.5
    assert overlap_share("one two", "one two") == 0.0  # under three words says nothing
    assert repeats_itself("a b c d e f g h\n" * 3)
    assert not repeats_itself("The backup runs nightly.\nIt mails on failure.\nOld versions stay.")
    assert long_numbers("NAS 192.168.1.10 at 02:00, 3 disks, port 8080") == {"192.168.1.10", "02:00", "8080"}


def test_an_answer_cut_by_the_cap_keeps_its_whole_lines_or_sentences() -> None:
    assert trim_cut_off("- one\n- two\n- thr") == "- one\n- two"
    assert trim_cut_off("First sentence. Second one is cut") == "First sentence."
    assert trim_cut_off("nothing whole here") == ""


def test_the_files_note_comes_off_what_the_person_typed() -> None:
    files = [AttachedFile(name="x.txt", path="session_files/s/x.txt")]
    typed = with_files("hi", files)
    assert typed == "hi\n\n[Uploaded files on disk:\n- x.txt → session_files/s/x.txt]"
    assert typed == engine.with_files("hi", files)  # the engine's copy writes the same note
    assert without_files(Message.user(typed, metadata={"files": [f.as_json() for f in files]})) == "hi"
    # Without files in its metadata, the text is the person's own, note-like lines and all.
    assert without_files(Message.user(typed)) == typed
    assert with_files("hi", None) == "hi"
