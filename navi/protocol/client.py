"""Client frames: what a client sends on `ws://host/ws/sessions/{id}`.

`parse_client_frame` reads one (parsed JSON) into its model, or raises `BadFrame` with a sentence
that says what is wrong, in the words the server has always answered with (`bad_frame`). What only
the server can check (an image's bytes, a file among the session's uploads) it checks after.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from navi.protocol.sender import MAX_LOCATION, MAX_NAME, Sender, sender_problem
from navi.protocol.server import DECISIONS, Decision, QueueMode
from navi.protocol.voice import SpeechFormat

MAX_IMAGES = 10
MAX_CALL_ID = 200


class BadFrame(ValueError):
    """A client frame Navi cannot use; the text says why (it goes back as an `error` frame of code
    `bad_frame`)."""


class _ClientFrame(BaseModel):
    model_config = ConfigDict(frozen=True, json_schema_extra={"x-navi-side": "client"})

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class FileRef(BaseModel):
    """A file uploaded to the session (`POST /sessions/{id}/files` gives both)."""

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    path: str


class MessageFrame(_ClientFrame):
    """Starts a turn. `images` are base64 or data: URIs (PNG, JPEG, GIF, WebP, BMP; at most 10, 15 MB
    each); `files` must have been uploaded to this session. Sent while a turn runs, it waits:
    `mode` "queue" (the default) runs it when the turn ends, "steer" gives it to the running
    turn's next model call. `name`, `location` and `metadata` (navi/protocol/sender.py) are kept
    with the message, in its history and archives, and never sent to the model."""

    type: Literal["message"] = "message"
    content: str = Field(min_length=1)
    images: list[str] | None = Field(default=None, max_length=MAX_IMAGES)
    files: list[FileRef] | None = None
    mode: QueueMode | None = Field(
        default=None, description='While a turn runs: "queue" (the default) or "steer".'
    )
    name: str | None = Field(default=None, max_length=MAX_NAME, description="Who wrote the message.")
    location: str | None = Field(
        default=None, max_length=MAX_LOCATION, description="Where its writer is, in their words."
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="The client's own keys (a JSON object of at most 4,096 bytes)."
    )

    def sender(self) -> Sender | None:
        return Sender.of({"name": self.name, "location": self.location, "metadata": self.metadata})

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        """Today's checks, in today's order, with today's words."""
        if not isinstance(data, dict):
            return data
        content = data.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ValueError("content is required and must be non-empty text")
        images = data.get("images")
        if images is not None:
            if not isinstance(images, list) or len(images) > MAX_IMAGES:
                raise ValueError(f"images must be a list of at most {MAX_IMAGES} base64 strings")
            for i, item in enumerate(images):
                if not isinstance(item, str):
                    raise ValueError(f"images[{i}] must be a base64 string")
        if data.get("mode") not in (None, "queue", "steer"):
            raise ValueError('mode must be "queue" or "steer"')
        files = data.get("files")
        if files is not None:
            if not isinstance(files, list):
                raise ValueError("files must be a list of {name, path} objects")
            for i, item in enumerate(files):
                if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                    raise ValueError(f"files[{i}] must be an object with a path")
                if not isinstance(item.get("name", ""), str | None):
                    raise ValueError(f"files[{i}].name must be text")
        if (problem := sender_problem(data)) is not None:
            raise ValueError(problem)
        return data


class RetryFrame(_ClientFrame):
    """Runs the session's latest failed turn again, without storing its message twice."""

    type: Literal["retry"] = "retry"


class ApprovalFrame(_ClientFrame):
    """Answers a tool call that waits for the user (`approval_required`)."""

    type: Literal["approval"] = "approval"
    call_id: str = Field(min_length=1, max_length=MAX_CALL_ID)
    decision: Decision

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        call_id = data.get("call_id")
        if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_CALL_ID:
            raise ValueError(
                f"call_id must be the text id of the tool call (at most {MAX_CALL_ID} characters)"
            )
        if data.get("decision") not in DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}")
        return data


MAX_ELICITATION_ID = 200


class ElicitationFrame(_ClientFrame):
    """Additive: answers an MCP server's question (`elicitation_required`): `accept` with
    `content` (form mode: the fields, checked against the form), `decline`, or `cancel`."""

    type: Literal["elicitation"] = "elicitation"
    elicitation_id: str = Field(min_length=1, max_length=MAX_ELICITATION_ID)
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None


MAX_MESSAGE_ID = 64


def _message_id(data: Any) -> Any:
    if isinstance(data, dict):
        value = data.get("message_id")
        if not isinstance(value, str) or not value or len(value) > MAX_MESSAGE_ID:
            raise ValueError(f"message_id must be the id of a message (at most {MAX_MESSAGE_ID} characters)")
    return data


class EditFrame(_ClientFrame):
    """Edits a user message: a new branch from its parent with `content` (its images and files
    kept), run at once. The old branch stays (`switch` goes back)."""

    type: Literal["edit"] = "edit"
    message_id: str = Field(min_length=1, max_length=MAX_MESSAGE_ID)
    content: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        data = _message_id(data)
        if isinstance(data, dict) and (
            not isinstance(data.get("content"), str) or not data["content"].strip()
        ):
            raise ValueError("content is required and must be non-empty text")
        return data


class RegenerateFrame(_ClientFrame):
    """A new answer to a question, as a sibling of the old one: `message_id` names the answer (any
    message of it) or the user message it answers."""

    type: Literal["regenerate"] = "regenerate"
    message_id: str = Field(min_length=1, max_length=MAX_MESSAGE_ID)

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        return _message_id(data)


class SwitchFrame(_ClientFrame):
    """Makes another branch the active one: the newest leaf below `message_id`. The session's
    clients get `session_updated`; they read the new path with `GET /sessions/{id}`."""

    type: Literal["switch"] = "switch"
    message_id: str = Field(min_length=1, max_length=MAX_MESSAGE_ID)

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        return _message_id(data)


class ContinueFrame(_ClientFrame):
    """Goes on with an answer the token cap cut off (`finish_reason: "length"`): `message_id` names
    the session's latest answer (or the first part of it, as shown). The continuation streams as a
    turn whose `stream_start` carries `continues`; `nothing_to_continue` for any other message."""

    type: Literal["continue"] = "continue"
    message_id: str = Field(min_length=1, max_length=MAX_MESSAGE_ID)

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        return _message_id(data)


class QueueEditFrame(_ClientFrame):
    """New text for a message that waits in the session (`queued`); `not_queued` if it no longer does."""

    type: Literal["queue_edit"] = "queue_edit"
    message_id: str = Field(min_length=1, max_length=MAX_CALL_ID)
    content: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        if isinstance(data, dict):
            _message_id(data)
            content = data.get("content")
            if not isinstance(content, str) or not content.strip():
                raise ValueError("content is required and must be non-empty text")
        return data


class QueueCancelFrame(_ClientFrame):
    """Cancels a message that waits in the session; `not_queued` if it no longer does."""

    type: Literal["queue_cancel"] = "queue_cancel"
    message_id: str = Field(min_length=1, max_length=MAX_CALL_ID)

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        if isinstance(data, dict):
            _message_id(data)
        return data


class VisibilityFrame(_ClientFrame):
    """Additive: whether the person can see this page (`document.visibilityState`), sent when the
    socket opens, when it changes, and every 30 s while open. While one of a user's pages is
    visible, Navi sends no push for what ends (docs/notifications.md); a page that has said nothing
    for 90 s counts as not visible. Nothing is sent back."""

    type: Literal["visibility"] = "visibility"
    visible: bool


MAX_PROMPT = 2000


class VoiceFrame(_ClientFrame):
    """Additive: a spoken message. `audio` is the clip, base64 or a data: URI (within the frame's
    16 MB): WAV, MP3, OGG/Opus, WebM/Opus, M4A/AAC or FLAC, recognised by its bytes, within
    `VOICE_MAX_MB` and `VOICE_MAX_SECONDS`. Navi transcribes it off the event loop and answers this
    connection with `transcript`; with `send` (the default) the words then go on as a `message`
    frame's would (`mode` as there). A clip that cannot be used gets an `error` frame with its
    code (`no_speech`, `corrupt_audio`, …) and nothing is sent. A connection's clips are heard in
    the order they came."""

    type: Literal["voice"] = "voice"
    audio: str = Field(min_length=1, description="The clip, base64 (or a data: URI).")
    language: str | None = Field(
        default=None, description="ISO-639-1 code (`en`); none: VOICE_STT_LANGUAGE, else detected."
    )
    prompt: str | None = Field(default=None, max_length=MAX_PROMPT, description="Words to expect.")
    send: bool = Field(default=True, description="Send the words on as the next message.")
    mode: QueueMode | None = Field(default=None, description='While a turn runs: "queue" or "steer".')

    @model_validator(mode="before")
    @classmethod
    def _said_plainly(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        audio = data.get("audio")
        if not isinstance(audio, str) or not audio.strip():
            raise ValueError("audio is required: the clip as a base64 string")
        language = data.get("language")
        if language is not None and not (
            isinstance(language, str)
            and language.isascii()
            and language.isalpha()
            and 2 <= len(language) <= 3
        ):
            raise ValueError("language must be an ISO-639-1 code such as en or de")
        if data.get("mode") not in (None, "queue", "steer"):
            raise ValueError('mode must be "queue" or "steer"')
        return data


class SpeakFrame(_ClientFrame):
    """Additive: read this session's answers aloud on this connection. While `on`, each answer
    that streams gets `speech` frames, a sentence each, the first while the answer still streams
    (code, addresses and markup are not read), then `speech_end`; an answer already streaming when
    speaking goes on is read from the sentence streaming then. Sent again while on, it stops what is
    left of the answer being spoken (`speech_end`, `stopped`) and that answer is not read again: what
    a client sends when the person talks over the answer (barge-in). `on: false` stops it too. Only
    this connection hears it."""

    type: Literal["speak"] = "speak"
    on: bool
    format: SpeechFormat = Field(
        default="mp3", description="The audio's format: mp3, opus, aac, flac or wav."
    )


ClientFrame = Annotated[
    MessageFrame
    | RetryFrame
    | ApprovalFrame
    | ElicitationFrame
    | EditFrame
    | RegenerateFrame
    | SwitchFrame
    | ContinueFrame
    | QueueEditFrame
    | QueueCancelFrame
    | VisibilityFrame
    | VoiceFrame
    | SpeakFrame,
    Field(discriminator="type"),
]
CLIENT_ADAPTER: TypeAdapter[ClientFrame] = TypeAdapter(ClientFrame)
_CLIENT_TYPES: dict[str, type[_ClientFrame]] = {
    "message": MessageFrame,
    "retry": RetryFrame,
    "approval": ApprovalFrame,
    "elicitation": ElicitationFrame,
    "edit": EditFrame,
    "regenerate": RegenerateFrame,
    "switch": SwitchFrame,
    "continue": ContinueFrame,
    "queue_edit": QueueEditFrame,
    "queue_cancel": QueueCancelFrame,
    "visibility": VisibilityFrame,
    "voice": VoiceFrame,
    "speak": SpeakFrame,
}


def parse_message(data: dict[str, Any]) -> MessageFrame:
    """A message's fields (as REST receives them) checked as a message frame is, or `BadFrame`."""
    try:
        return MessageFrame.model_validate(data)
    except ValidationError as exc:
        raise BadFrame(_said(exc)) from None


def parse_client_frame(data: Any) -> ClientFrame:
    """A client frame (parsed JSON) as its model, or `BadFrame` saying what is wrong with it."""
    if not isinstance(data, dict):
        raise BadFrame("frame must be a JSON object")
    kind = data.get("type")
    model = _CLIENT_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise BadFrame(
            f'unknown frame type {kind!r}; send {{"type": "message", "content": …}}, '
            '{"type": "retry"}, {"type": "approval", "call_id": …, "decision": …}, '
            '{"type": "elicitation", "elicitation_id": …, "action": …}, '
            '{"type": "edit", "message_id": …, "content": …}, {"type": "regenerate", "message_id": …}, '
            '{"type": "switch", "message_id": …}, {"type": "continue", "message_id": …}, '
            '{"type": "queue_edit", "message_id": …, "content": …}, '
            '{"type": "queue_cancel", "message_id": …}, {"type": "visibility", "visible": …}, '
            '{"type": "voice", "audio": …} or {"type": "speak", "on": …}'
        )
    try:
        return cast(ClientFrame, model.model_validate(data))
    except ValidationError as exc:
        raise BadFrame(_said(exc)) from None


def _said(exc: ValidationError) -> str:
    first = exc.errors(include_url=False, include_input=False)[0]
    error = (first.get("ctx") or {}).get("error")
    if isinstance(error, ValueError):
        return str(error)
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])
