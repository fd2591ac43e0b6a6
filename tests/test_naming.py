"""Session names from small models: decoration stripped, fragments and echoes replaced."""

from __future__ import annotations

from navi import prompts
from navi.agent.naming import clean_title, fallback_title, name_session
from navi.llm.errors import BackendTimeout
from navi.testing.script import Reply
from navi.testing.scripted import ScriptedBackend

MODEL = "smollm2:135m"
QUESTION = "How do I check the disks of my Synology NAS for errors?"


CLEANED = [
    ("NAS disk check", "NAS disk check"),
    ("- NAS disk check", "NAS disk check"),
    ("* NAS disk check", "NAS disk check"),
    ("1. NAS disk check", "NAS disk check"),
    ('"NAS disk check."', "NAS disk check"),
    ("“NAS disk check”", "NAS disk check"),
    ("**Title:** NAS disk check", "NAS disk check"),
    ("Title: NAS disk check!", "NAS disk check"),
    ("## NAS disk check", "NAS disk check"),
    ("`NAS disk check`", "NAS disk check"),
    ("Title:\nNAS disk check\n\nThe user asks how to check disks.", "NAS disk check"),
    # A cut fragment whose dangling tail can go, leaving a title that stands on its own.
    ("Checking the NAS disks for", "Checking the NAS disks"),
    ("Checking disks of the", "Checking disks"),
]
NO_TITLES = [
    "- If you are a user, you may be given a",  # SmolLM2-135M, as the first real try named a session
    "If you are a user, you may be given a title",
    "You are a helpful assistant",
    "Give this conversation a short title of 2 to 6 words",
    "Short title",
    "Sure! Here is a title: NAS disks",
    "User: How do I check the disks",
    "The user is asking how to check the disks of their Synology NAS for errors and the assistant",
    "Title:",
    "Untitled",
    "NAS of the",  # a fragment: one good word left after trimming
    "",
    "---",
]


def test_titles_are_cleaned() -> None:
    assert [clean_title(raw) for raw, _ in CLEANED] == [title for _, title in CLEANED]


def test_what_is_no_title_is_rejected() -> None:
    assert {raw: clean_title(raw) for raw in NO_TITLES} == dict.fromkeys(NO_TITLES, "")


def test_a_title_cut_by_the_token_cap_loses_its_half_word() -> None:
    assert clean_title("Checking Synology NAS disks for err", cut_off=True) == "Checking Synology NAS disks"
    assert clean_title("NAS disk che", cut_off=True) == "NAS disk"
    assert clean_title("Disk che", cut_off=True) == ""  # one word is left: a fragment
    # The cap hit later lines: the title line itself was complete.
    assert clean_title("NAS disk check\nThe user asked how to", cut_off=True) == "NAS disk check"
    assert clean_title("NAS disk check.", cut_off=True) == "NAS disk check"


async def test_a_good_title_is_used_and_the_call_is_capped() -> None:
    backend = ScriptedBackend(["- NAS disk check"])
    assert (
        await name_session(backend, MODEL, QUESTION, "Open Storage Manager, then HDD/SSD.")
        == "NAS disk check"
    )
    (request,) = backend.requests
    assert request.system_text == prompts.load("naming")
    assert QUESTION in request.last_user_text and "Storage Manager" in request.last_user_text
    assert backend.options[0].max_tokens == 24
    await name_session(backend.enqueue("NAS"), MODEL, QUESTION, "ok", max_tokens=9)
    assert backend.options[1].max_tokens == 9


async def test_the_real_bad_name_falls_back_to_the_users_words() -> None:
    backend = ScriptedBackend([Reply(text="- If you are a user, you may be given a", finish_reason="length")])
    title = await name_session(backend, MODEL, QUESTION, "Open Storage Manager.")
    assert title == fallback_title(QUESTION) == "How do I check the disks of my Synology…"


async def test_a_cut_title_with_two_good_words_is_kept() -> None:
    backend = ScriptedBackend([Reply(text="Synology NAS disk checks and rep", finish_reason="length")])
    assert await name_session(backend, MODEL, QUESTION, "Open Storage Manager.") == "Synology NAS disk checks"


async def test_a_failed_first_turn_is_named_from_the_question_alone() -> None:
    backend = ScriptedBackend(["NAS disk check"])
    assert await name_session(backend, MODEL, QUESTION, "") == "NAS disk check"
    asked = backend.requests[0].last_user_text
    assert QUESTION in asked and "Assistant:" not in asked  # no empty answer for the model to continue
    # A model that fails outright still leaves the session with a name.
    backend.enqueue(Reply(exception=BackendTimeout("llama-server did not answer")))
    assert await name_session(backend, MODEL, "Hi there", "") == "Hi there"


def test_the_fallback_is_the_users_words_without_their_decoration() -> None:
    assert fallback_title("- milk\n- eggs\n- rye bread") == "milk, eggs, rye bread"
    assert fallback_title("1. flour\n2) sugar\n* butter") == "flour, sugar, butter"
    assert fallback_title('"What is a good name for a cat?"') == "What is a good name for a cat?"
    assert fallback_title("> quoted advice\nis this right?") == "quoted advice is this right?"
    assert fallback_title("Assistant: here is the plan\nUser: thanks") == "here is the plan thanks"
    assert fallback_title("**Urgent**: the backup failed") == "Urgent: the backup failed"
    assert fallback_title("- " + "apples " * 10) == "apples apples apples apples apples…"
    assert fallback_title("-\n>\n  ") == "New conversation"
    question = "How do I check the disks of my Synology NAS?"
    assert fallback_title(question) == "How do I check the disks of my Synology…"
