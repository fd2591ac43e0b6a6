"""Summaries a small model cannot spoil: token caps, and every bad answer retried once, then refused.

The bad answers are the ones SmolLM2-135M and Gemma 3 270M give a summary prompt: the instructions
played back, headings with nothing under them, the conversation copied out, one line looped until
the token cap, nothing at all.
"""

from __future__ import annotations

import pytest

from navi import prompts
from navi.agent.compression.summary import (
    SUMMARY_PREFIX,
    SummaryRejected,
    compress_context,
)
from navi.llm.errors import BackendUnreachable, LLMError
from navi.llm.messages import Message, ToolCall
from navi.llm.tokens import estimate_messages_tokens, estimate_tokens
from navi.testing.script import Reply
from navi.testing.scripted import ScriptedBackend

MODEL = "smollm2:135m"
GOOD = "- Goal: nightly backup of the NAS 192.168.1.10 to Backblaze B2.\n- Done: cron job at 02:00."


def backup_chat() -> list[Message]:
    """Four turns about a NAS backup, then the newest turn that stays verbatim."""
    call = ToolCall(name="write_file", arguments={"path": "/etc/cron.d/nas-backup"})
    return [
        Message.user("I want to back up my NAS at 192.168.1.10 to the cloud every night."),
        Message.assistant("Sure. Which storage provider do you use for the backups?"),
        Message.user("Backblaze B2, the bucket is called navi-backups."),
        Message.assistant("", tool_calls=[call]),
        Message.tool("wrote 1 line", tool_call_id=call.id, name="write_file", metadata={"status": "ok"}),
        Message.assistant("I wrote /etc/cron.d/nas-backup: rclone sync runs every night at 02:00."),
        Message.user("Great. Mail me at sam@example.org when it fails."),
        Message.assistant("Done: the job now mails sam@example.org whenever the sync fails."),
        Message.user("Does it keep old versions?"),
        Message.assistant("Yes: B2 keeps every version for 30 days with the lifecycle rule I set."),
        Message.user("What did we set up?"),
    ]


async def compress(backend: ScriptedBackend, context: list[Message], **kw: object):
    options: dict[str, object] = {"keep_recent": 1, "max_input_tokens": 3000, "max_tokens": 200}
    options.update(kw)
    return await compress_context(context, backend, MODEL, **options)  # type: ignore[arg-type]


async def test_a_good_summary_replaces_the_old_turns_and_every_call_is_capped() -> None:
    backend = ScriptedBackend([GOOD])
    context = backup_chat()
    result = await compress(backend, context, max_tokens=123)
    assert result is not None and result.calls == 1
    assert result.context[0].content == f"{SUMMARY_PREFIX}\n{GOOD}"
    assert result.context[1:] == [context[-1]]
    (request,) = backend.requests
    assert request.system_text == prompts.load("summary")
    assert "User: Backblaze B2, the bucket is called navi-backups." in request.last_user_text
    assert [o.max_tokens for o in backend.options] == [123]
    # A model that fails outright is no bad summary: no retry, the error goes to the caller.
    backend.enqueue(Reply(exception=BackendUnreachable("cannot reach llama-server")), GOOD)
    with pytest.raises(BackendUnreachable):
        await compress(backend, context)
    assert len(backend.requests) == 2


async def test_the_input_cap_is_in_tokens_and_nothing_is_cut() -> None:
    # 40 turns of dense text: the old cap counted 10,051 characters where the model saw 7,554
    # tokens. Every call's whole input (instructions, summary so far, chunk) must fit the cap.
    context: list[Message] = []
    for i in range(40):
        context += [
            Message.user(f"Step {i}: set vm.swappiness={i} on host-{i:02d} and log it to /var/log/s{i}.log"),
            Message.assistant(f"Set vm.swappiness={i} on host-{i:02d}; logged to /var/log/s{i}.log."),
        ]
    context.append(Message.user("Now what?"))
    replies = [
        f"- Hosts tuned up to the latest step; first was host-00.\n- Batch {n} done." for n in range(20)
    ]
    backend = ScriptedBackend(replies)
    result = await compress(backend, context, max_input_tokens=600, max_tokens=64)
    assert result is not None
    assert len(backend.requests) >= 3
    for request in backend.requests:
        assert estimate_messages_tokens(request.messages) <= 600
    assert all("Summary so far" in r.last_user_text for r in backend.requests[1:])
    seen = "\n".join(r.last_user_text for r in backend.requests)
    for i in range(40):  # every line reached the summariser: chunked, never truncated
        assert f"Step {i}: set vm.swappiness={i} on host-{i:02d}" in seen
    assert all(o.max_tokens == 64 for o in backend.options)


# What SmolLM2-135M-Instruct (Q4_1) and Gemma 3 270M (Q4_K_M, official instruct template) answered
# the summary prompt for `backup_chat()`, served by llama-server 0.3.36 at temperature 0.3 with a
# 256-token cap, as recorded on the development machine. None of them is a summary.
SMOL_COPY = (
    "User: I want to back up my NAS at 192.168.1.10 to the cloud every night.\n"
    "Assistant: Sure. Which storage provider do you use for the backups?\n"
    "User: Backblaze B2, the bucket is called navi-backups.\n"
    "→ write_file returned: wrote 1 line\n"
    "Assistant: I wrote /etc/cron.d/nas-backup: rclone sync runs every night at 02:00.\n"
    "User: Great. Mail me at sam@example.org when it fails.\n"
    "Assistant: Done: the job now mails sam@example.org whenever the sync fails."
)
SMOL_COPY_AND_NOTE = (
    "User: I want to back up my NAS at 192.168.1.1.10 to the cloud every night.\n"
    "Assistant: Sure. Which storage provider do you use for the backups?\n"
    "User: Backblaze B2, the bucket is called navi-backups.\n\n"
    "Note: The user's goal was to back up their NAS to a cloud storage service. The user was asked "
    "to backup their NAS to a cloud storage service."
)
SMOL_DIALOGUE_LOOP = (
    "User: I want to back up my NAS at 192.168.1.1 to the cloud every night.\n"
    "Assistant: Sure, I can do that. What's the type of storage you're using?\n"
    "User: Backblaze B2, bucket is called navi-backups.\n"
    "Assistant: I used to use B2, but I've switched to B2.\n"
    + "User: What's the type of storage you're using?\nAssistant: I'm using B2.\n" * 7
    + "User: What's the type of storage"
)
SMOL_USER_LOOP = (
    "User: I want to back up my NAS at 192.168.1.10 to the cloud every night.\n"
    "Assistant: Yeah. I'm sure you'll get it done.\nUser: Thanks.\nAssistant:\n\nYou can't.\n\n"
    + "User:\n\n" * 3
    + "user:\n\n" * 40
)
SMOL_MAIL_LOOP = (
    "The user wants to back up their NAS at 192.168.1.1.10 to the cloud every night.\n"
    "The user uses " + "Mail to " * 120
)
SMOL_NUMBERED_LOOP = (
    "User: I want to back up my NAS at 192.168.1.1 to the cloud every night.\n"
    "Assistant: Sure. Which storage provider do you use for the backups?\n"
    "User: Backblaze B2, the bucket is called navi-backups.\n\nNote:\n"
    + "".join(f"{n}. The user requested a summary.\n" for n in range(1, 20))
    + "20. The user requested a"
)
# The trimmed first line of SMOL_MAIL_LOOP: reads well, but the NAS's address is not the one said.
SMOL_WRONG_ADDRESS = "The user wants to back up their NAS at 192.168.1.1.10 to the cloud every night."
GEMMA_ECHO = (
    "You are compressing the earlier part of a conversation into short notes. The assistant will keep "
    "only your notes and the newest messages.\n\n"
    'Write at most 12 lines, each starting with "- ".\n'
    "Note the user's goal, what was done, what is left, and each name, number, path, address and date,\n"
    "copied exactly.\n"
    "Write in your own words. Leave out greetings and small talk.\n"
    "If there is a summary so far, keep what still matters from it.\n\n"
    "Conversation to summarise:\n\n"
    "User: I want to back up my NAS at 192.168.1.10 to the cloud every night.\n"
    "Assistant: Sure. Which storage provider do you use for the backups?\n"
    "User: Backblaze B2, the bucket is called navi-backups.\n"
    '→ write_file({"path": "/etc/cron.d/nas-backup"})\n'
    "← write_file returned: wrote 1 line\n"
    "Assistant: I wrote /etc/cron.d/nas-backup: rclone sync runs every night at 02:00.\n"
    "User: Great. Mail me at sam@example.org when it fails.\n"
    "Assistant: Done: the job now mails"
)
# The old prompt's sections played back with nothing under them.
OLD_PROMPT_ECHO = (
    "## Current goal\n\n## Work state\n- Done:\n- Pending:\n- Blockers:\n\n## Key facts\n\n## Outputs"
)
CUT = "length"
BAD = [
    (Reply(text=SMOL_COPY), "copied the conversation"),
    (Reply(text=SMOL_COPY_AND_NOTE), "copied the conversation"),
    (Reply(text=SMOL_DIALOGUE_LOOP, finish_reason=CUT), "repeated the same line"),
    (Reply(text=SMOL_USER_LOOP, finish_reason=CUT), "repeated the same line"),
    (Reply(text=SMOL_MAIL_LOOP, finish_reason=CUT), "repeated the same line"),
    (Reply(text=SMOL_NUMBERED_LOOP, finish_reason=CUT), "repeated the same line"),
    (Reply(text=SMOL_WRONG_ADDRESS), "changed numbers from the conversation"),
    (Reply(text=GEMMA_ECHO, finish_reason=CUT), "repeated the instructions"),
    (Reply(text=OLD_PROMPT_ECHO), "had headings with nothing under them"),
    (Reply(text=""), "was empty"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD)
async def test_a_bad_summary_is_retried_once_with_a_nudge(bad: Reply, reason: str) -> None:
    backend = ScriptedBackend([bad, GOOD])
    result = await compress(backend, backup_chat())
    assert result is not None and result.calls == 2
    assert result.summary.content == f"{SUMMARY_PREFIX}\n{GOOD}"
    first, second = backend.requests
    assert "could not be used" not in first.last_user_text
    assert f"Your last answer could not be used: it {reason}." in second.last_user_text
    assert second.last_user_text.startswith(first.last_user_text)  # the same request, plus the nudge


@pytest.mark.parametrize(("bad", "reason"), BAD)
async def test_two_bad_summaries_raise_and_leave_the_context_alone(bad: Reply, reason: str) -> None:
    # The second answer is a real retry answer: SmolLM2 copied again and played the nudge back.
    retry = SMOL_COPY + "\n\nYour last answer could not be used: it copied the conversation. Do not copy"
    backend = ScriptedBackend([bad, retry, GOOD])
    context = backup_chat()
    before = [m.model_copy(deep=True) for m in context]
    with pytest.raises(SummaryRejected) as caught:
        await compress(backend, context)
    assert isinstance(caught.value, LLMError) and caught.value.kind == "summary_rejected"
    assert str(caught.value) == "the model's summary copied the conversation, twice in a row"
    assert len(backend.requests) == 2  # retried once, not more
    assert context == before


# Good summaries keep facts, names, numbers and identifiers word for word: that is no copy.
GOOD_FACT_LISTS = [
    "- NAS: 192.168.1.10\n- Bucket: navi-backups on Backblaze B2\n- Cron: /etc/cron.d/nas-backup, "
    "rclone sync at 02:00\n- Failures mailed to sam@example.org\n- B2 keeps versions 30 days",
    "- 192.168.1.10\n- navi-backups\n- /etc/cron.d/nas-backup\n- 02:00\n- sam@example.org",
    "- Goal: nightly backup of the NAS at 192.168.1.10 to Backblaze B2 (bucket navi-backups).\n"
    '- Done: "rclone sync runs every night at 02:00" from /etc/cron.d/nas-backup.\n'
    '- The user said: "Mail me at sam@example.org when it fails." Set up.',
    "- User: wants failures mailed to sam@example.org",
]


@pytest.mark.parametrize("good", GOOD_FACT_LISTS)
async def test_a_fact_list_that_quotes_exactly_is_accepted(good: str) -> None:
    backend = ScriptedBackend([good])
    result = await compress(backend, backup_chat())
    assert result is not None and result.calls == 1  # accepted at once, no retry
    assert result.summary.content == f"{SUMMARY_PREFIX}\n{good}"


def twelve_turns() -> list[Message]:
    """Twelve turns; the first holds a fact a good summary keeps word for word."""
    context: list[Message] = []
    for i in range(12):
        said = "Remember FACT:blue_door_42 for later." if i == 0 else f"Question {i}: what about topic {i}?"
        context += [Message.user(said), Message.assistant(f"Topic {i} is covered; nothing more to add.")]
    return [*context, Message.user("What was the fact?")]


async def test_one_bullet_keeping_a_fact_verbatim_is_a_summary() -> None:
    backend = ScriptedBackend(["- FACT:blue_door_42"])
    result = await compress(backend, twelve_turns())
    assert result is not None and result.calls == 1
    assert result.summary.content == f"{SUMMARY_PREFIX}\n- FACT:blue_door_42"


# The conversation written out again without speaker labels, and most of it carried back with a
# note around it: copies all the same.
UNLABELLED_COPY = "\n".join(
    line.split(": ", 1)[1] if line.startswith(("User: ", "Assistant: ")) else line
    for line in SMOL_COPY.splitlines()
)
CARRIED_BACK = (
    "- Notes on the NAS backup so far:\n"
    "- I want to back up my NAS at 192.168.1.10 to the cloud every night.\n"
    "- Backblaze B2, the bucket is called navi-backups.\n"
    "- I wrote /etc/cron.d/nas-backup: rclone sync runs every night at 02:00.\n"
    "- Done: the job now mails sam@example.org whenever the sync fails.\n"
    "- Yes: B2 keeps every version for 30 days with the lifecycle rule I set."
)


@pytest.mark.parametrize("copy", [UNLABELLED_COPY, CARRIED_BACK])
async def test_prose_written_out_again_is_a_copy_even_without_labels(copy: str) -> None:
    backend = ScriptedBackend([copy, copy])
    with pytest.raises(SummaryRejected, match="copied the conversation"):
        await compress(backend, backup_chat())


async def test_a_summary_must_be_shorter_than_what_it_replaces() -> None:
    context = [Message.user("Hi"), Message.assistant("Hello!"), Message.user("Plans for today?")]
    padded = "- The user greeted the assistant, who greeted the user back in a friendly way."
    backend = ScriptedBackend([padded, padded])
    with pytest.raises(SummaryRejected, match="not shorter than the conversation"):
        await compress(backend, context)


async def test_a_summary_cut_by_the_cap_keeps_its_complete_lines() -> None:
    cut = GOOD + "\n- Pending: test a restore of /etc/cro"
    backend = ScriptedBackend([Reply(text=cut, finish_reason="length")])
    result = await compress(backend, backup_chat())
    assert result is not None and result.calls == 1
    assert result.summary.content == f"{SUMMARY_PREFIX}\n{GOOD}"


async def test_a_summary_cut_before_its_first_line_ended_is_retried() -> None:
    backend = ScriptedBackend(
        [
            Reply(text="- Goal: nightly backup of the NAS at 192.168.1.10 to Backbl", finish_reason="length"),
            GOOD,
        ]
    )
    result = await compress(backend, backup_chat())
    assert result is not None and result.calls == 2
    assert "it was cut off by the token limit" in backend.requests[1].last_user_text


async def test_an_earlier_summary_is_the_summary_so_far() -> None:
    earlier = Message.user(f"{SUMMARY_PREFIX}\n- The NAS is at 192.168.1.10.", is_summary=True)
    context = [earlier, *backup_chat()[6:]]
    # Keeping the earlier summary's own lines is no copy of the conversation.
    kept = "- The NAS is at 192.168.1.10.\n- Failures are mailed to sam@example.org."
    backend = ScriptedBackend([kept])
    result = await compress(backend, context)
    assert result is not None and result.summary.content == f"{SUMMARY_PREFIX}\n{kept}"
    (request,) = backend.requests
    assert request.last_user_text.startswith("Summary so far (keep what still matters):\n- The NAS is at")
    assert "Earlier summary" not in request.last_user_text


def test_the_prompt_is_short_and_plain() -> None:
    text = prompts.load("summary")
    assert estimate_tokens(text) < 200  # a 135M model reads it; the old one was ~430 tokens
    # Every section SPEC.md names is asked for, in plain words.
    for asked in (
        "goal",
        "what was done",
        "what is left",
        "blocks",
        "copied exactly",
        "files",
        "commands",
        "error",
        "fixed",
        "preferences",
        "corrections",
    ):
        assert asked in text, asked
    assert "##" not in text  # no headings a small model can echo back empty
    assert text.startswith("You are compressing the earlier part")  # how scripted fakes recognise it


async def test_a_summary_may_write_at_most_half_of_what_it_summarises() -> None:
    # SmolLM2 wrote to the 768-token cap twice (looping) over ~1,100 tokens of conversation: 50 s
    # of a 4,096-token window's turn. The cap is now half the source, never below 128 tokens.
    backend = ScriptedBackend([GOOD])
    context = backup_chat()
    await compress(backend, context, max_tokens=768)
    source = backend.requests[0].last_user_text
    (cap,) = [o.max_tokens for o in backend.options]
    assert cap is not None and 128 <= cap <= max(128, estimate_tokens(source) // 2 + 8) < 768
    long = [Message.user(f"Line {i}: " + "word " * 60) for i in range(30)] + [Message.user("Now?")]
    backend.enqueue("- The user sent many lines of words.")
    await compress(backend, long, max_tokens=300)  # much to summarise: the configured cap holds
    assert backend.options[-1].max_tokens == 300
