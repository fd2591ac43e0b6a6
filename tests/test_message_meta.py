"""A message's metadata as typed fields (`navi.llm.meta.MessageMeta`), stored as the same JSON.

Rows written before the fields were typed load into them and are written back unchanged; keys Navi
does not know, and known keys with values of another type, are kept as they came.
"""

from __future__ import annotations

import json

import pytest

from navi.llm.messages import Message
from navi.llm.meta import FileRef, MessageMeta, TokenUsage, TurnError

# Message rows as the stores held them while metadata was a plain dict (`Message.model_dump_json`).
ROW = (
    '{{"id": "m1", "role": "{role}", "content": "x", "images": [], "tool_calls": [], "tool_call_id": null, '
    '"name": null, "is_summary": false, "is_plan": false, "is_compression": false, "thinking": null, '
    '"thinking_signature": null, "stopped": false, "created_at": "2026-01-02T03:04:05Z", "metadata": {meta}}}'
)
STORED = {
    "failed turn": ("assistant", {"error": {"code": "model_error", "message": "boom"}, "failed_turn": "u1"}),
    "retried answer": (
        "assistant",
        {"usage": {"prompt_tokens": 120, "completion_tokens": 7, "estimated": False}, "retry_of": "u1"},
    ),
    "cut answer": ("assistant", {"usage": {"prompt_tokens": 9}, "finish_reason": "length"}),
    "broken answer": ("assistant", {"interrupted": "the stream dropped"}),
    "uploads": ("user", {"files": [{"name": "a.txt", "path": "session_files/s/a.txt"}]}),
    "tool image": ("user", {"synthetic": "image", "tool_call_id": "call_1"}),
    "tool result": ("tool", {"status": "ok", "duration_ms": 812.5, "stderr": "warning\n"}),
    "shortened": (
        "tool",
        {"status": "error", "duration_ms": 3, "truncated_from": 20000, "recall_key": "msg_1"},
    ),
    "summary": (
        "user",
        {"messages_summarized": 6, "tokens_before": 900, "tokens_after": 40, "summary_calls": 2},
    ),
    "condensed": ("user", {"condensed": True, "messages_summarized": 4, "tokens_before": 300}),
    "marker": ("assistant", {"messages_before": 6, "messages_after": 2}),
    "imported": ("user", {"location": "Lyon, France", "custom": {"device": "phone"}}),
    "nothing": ("user", {}),
}


@pytest.mark.parametrize("name", STORED)
def test_a_stored_row_loads_and_is_written_back_unchanged(name: str) -> None:
    role, meta = STORED[name]
    row = ROW.format(role=role, meta=json.dumps(meta))
    message = Message.model_validate_json(row)
    assert json.loads(message.model_dump_json()) == json.loads(row)
    assert message.metadata.as_json() == meta
    assert dict(message.metadata.items()) == meta  # the mapping view reads the stored values


def test_the_fields_are_typed() -> None:
    failed = Message.model_validate_json(
        ROW.format(role="assistant", meta=json.dumps(STORED["failed turn"][1]))
    )
    assert failed.metadata.error == TurnError(code="model_error", message="boom")
    assert failed.metadata.failed_turn == "u1" and failed.metadata.is_failure_record
    assert failed.metadata["error"] == {"code": "model_error", "message": "boom"}  # JSON, as clients see it
    uploads = Message.model_validate({"role": "user", "metadata": STORED["uploads"][1]})
    assert uploads.metadata.files == [FileRef(name="a.txt", path="session_files/s/a.txt")]
    tool = Message.model_validate({"role": "tool", "metadata": STORED["tool result"][1]})
    assert tool.metadata.status == "ok" and tool.metadata.duration_ms == 812.5
    assert tool.metadata.usage is None and "usage" not in tool.metadata


def test_fields_set_by_code_are_what_is_stored() -> None:
    reply = Message.assistant("hi")
    reply.metadata.usage = TokenUsage(prompt_tokens=5, completion_tokens=2, estimated=True)
    reply.metadata.retry_of = "u9"
    reply.metadata["mood"] = "cheerful"  # a key Navi has no field for
    stored = json.loads(reply.model_dump_json())["metadata"]
    assert stored == {
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "estimated": True},
        "retry_of": "u9",
        "mood": "cheerful",
    }
    assert Message.model_validate_json(reply.model_dump_json()) == reply


def test_a_value_of_another_type_is_kept_and_reads_as_unset() -> None:
    odd = {"status": "skipped", "duration_ms": "slow", "files": "a.txt", "stderr": "real"}
    message = Message.model_validate({"role": "tool", "content": "x", "metadata": odd})
    assert message.metadata.status is None and message.metadata.files is None
    assert message.metadata.stderr == "real"
    assert message.metadata["status"] == "skipped" and "files" in message.metadata
    assert json.loads(message.model_dump_json())["metadata"] == odd
    message.metadata.status = "error"  # set by code: typed again
    assert message.metadata.as_json()["status"] == "error"


def test_a_wrong_value_set_by_code_is_refused() -> None:
    meta = MessageMeta()
    with pytest.raises(ValueError):
        meta.status = "maybe"  # type: ignore[assignment]
    assert "status" not in meta and meta.as_json() == {}


def test_a_copy_with_changes_leaves_the_original_alone() -> None:
    original = MessageMeta(status="ok", duration_ms=4)
    shortened = original.but(truncated_from=5000, recall_key="msg_1")
    assert original.as_json() == {"status": "ok", "duration_ms": 4}
    assert shortened.as_json() == {
        "status": "ok",
        "duration_ms": 4,
        "truncated_from": 5000,
        "recall_key": "msg_1",
    }
