from __future__ import annotations

import base64

from navi.llm.messages import Message, ToolCall, image_media_type, strip_data_uri


def test_tool_call_from_json_text() -> None:
    call = ToolCall.from_raw("todo", '{"action": "read"}', call_id="call_1")
    assert call.id == "call_1" and call.arguments == {"action": "read"} and call.arguments_error is None


def test_tool_call_rejects_non_objects_without_inventing_arguments() -> None:
    for raw, reason in (
        ("[1, 2]", "must be a JSON object"),
        ("{oops", "not valid JSON"),
        ('"text"', "object"),
    ):
        call = ToolCall.from_raw("todo", raw)
        assert call.arguments == {}
        assert call.raw_arguments == raw
        assert reason in (call.arguments_error or "")
        assert call.arguments_json() == raw


def test_tool_call_empty_arguments_are_an_empty_object() -> None:
    assert ToolCall.from_raw("list_tools", "").arguments == {}
    assert ToolCall.from_raw("list_tools", None).arguments_error is None


def test_generated_ids_are_unique() -> None:
    ids = {ToolCall(name="x").id for _ in range(200)}
    assert len(ids) == 200
    assert all(i.startswith("call_") for i in ids)


def test_message_round_trips_through_json() -> None:
    msg = Message.assistant(
        "done",
        thinking="why",
        tool_calls=[ToolCall(name="todo", arguments={"a": 1})],
        is_plan=True,
        metadata={"k": "v"},
    )
    again = Message.model_validate_json(msg.model_dump_json())
    assert again == msg


def test_image_media_types() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 20).decode()
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0" + b"0" * 20).decode()
    webp = base64.b64encode(b"RIFF1234WEBPVP8 " + b"0" * 20).decode()
    assert image_media_type(png) == "image/png"
    assert image_media_type(f"data:image/png;base64,{jpeg}") == "image/jpeg"
    assert image_media_type(webp) == "image/webp"
    assert strip_data_uri(f"data:image/png;base64,{png}") == png
