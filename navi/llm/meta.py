"""What a message's `metadata` says about it, as typed fields.

The stored JSON is what it always was: an object holding only the keys a writer set, under the
same names. Each key Navi writes is a typed field here; keys it does not know (an archive's, an
older version's) are kept as they are and written out again. A known key whose stored value does
not have its type (a hand-edited archive) is kept as it is too, and its field reads as unset.

Code reads and writes the fields (`msg.metadata.failed_turn`). Mapping access (`metadata["error"]`,
`.get`, `in`) reads the same data as plain JSON values, as clients see it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

ToolStatus = Literal["ok", "error", "stopped"]


class Record(BaseModel):
    """A JSON object with some typed keys: it serialises to the keys that were set, and any others."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)
    _odd: dict[str, Any] | None = PrivateAttr(default=None)  # known keys whose values did not fit

    @model_validator(mode="wrap")
    @classmethod
    def _keep_what_does_not_fit(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(data)
        except ValidationError:
            if not isinstance(data, Mapping):
                raise
        fitting: dict[str, Any] = {}
        odd: dict[str, Any] = {}
        for key, value in data.items():
            if key in cls.model_fields:
                try:
                    handler({key: value})
                except ValidationError:
                    odd[key] = value
                    continue
            fitting[key] = value
        record = handler(fitting)
        record._odd = odd
        return record

    # No return annotation: the documented (OpenAPI) schema stays the fields' own. The values are
    # serialised by their types (a nested record by this same method).
    @model_serializer(mode="plain")
    def _only_what_was_set(self):
        kept = self.__pydantic_fields_set__
        out = {key: value for key, value in self.__dict__.items() if key in kept}
        if self.__pydantic_extra__:
            out.update(self.__pydantic_extra__)
        if self._odd:
            out.update((key, value) for key, value in self._odd.items() if key not in out)
        return out

    # --- the JSON view -----------------------------------------------------------------------------
    def as_json(self) -> dict[str, Any]:
        """The object as stored and sent: only the keys that were set, values as plain JSON data."""
        return self.model_dump(mode="json")

    def _has(self, key: str) -> bool:
        return (
            key in self.__pydantic_fields_set__
            or key in (self._odd or ())
            or key in (self.__pydantic_extra__ or ())
        )

    def keys(self) -> list[str]:
        return list(self.as_json())

    def items(self) -> list[tuple[str, Any]]:
        return list(self.as_json().items())

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if self._has(key) else default

    def __getitem__(self, key: str) -> Any:
        if key in self.__pydantic_fields_set__:
            return _plain(getattr(self, key))
        if self._odd and key in self._odd:
            return self._odd[key]
        return (self.__pydantic_extra__ or {})[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._has(key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)
        if self._odd:
            self._odd.pop(key, None)

    def update(self, changes: Mapping[str, Any] = {}, /, **more: Any) -> None:
        for key, value in {**changes, **more}.items():
            self[key] = value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.as_json() == dict(other)
        return super().__eq__(other)

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        """The keys, as a mapping's (a pydantic model iterates over (name, value) pairs)."""
        return iter(self.as_json())

    def __len__(self) -> int:
        return len(self.as_json())

    def __repr_args__(self) -> Any:
        return self.as_json().items()


def _plain(value: Any) -> Any:
    """A field's value as JSON data (what the stored object holds)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class FileRef(Record):
    """An uploaded file a user message refers to (its text names the path too)."""

    name: str = ""
    path: str = ""


class TurnError(Record):
    """Why a turn failed, as the `error` event said it."""

    code: str
    message: str


class TokenUsage(Record):
    """What a model call cost, as the server counted it (`estimated`: Navi's estimate instead)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None  # prompt and completion (set with them since issue 48)
    estimated: bool | None = None


class MessageMeta(Record):
    """Navi's facts about a message. Every field is unset unless a writer set it."""

    # A user message.
    files: list[FileRef] | None = None  # uploads, so a client shows them as attachments
    text: str | None = None  # what a client shows in place of the content
    synthetic: str | None = None  # not typed by the person: "image" (a tool's image, for the model)
    tool_call_id: str | None = None  # the call a synthetic image came from
    openai_role: str | None = None  # a system or developer message of the OpenAI-compatible API
    steered: bool | None = None  # said while its turn ran, and given to that turn's next model call
    # Document collections (ids) the message asked to read besides the conversation's (the
    # OpenAI-compatible API's `X-Navi-Collection`): their passages go before its answer.
    collections: list[str] | None = None
    # Where its writer was, as a client said (`Message.name`: who; `custom`: the client's metadata).
    # Kept, shown and archived; never sent to the model.
    location: str | None = None
    # An answer (and an assistant message that calls tools): what its model call was and cost.
    usage: TokenUsage | None = None
    model: str | None = None  # the model asked (a profile's or the configured default)
    # Through a model chain (docs/models.md): the endpoint that wrote it (`model` is its model), and
    # why the endpoints before it were passed over ("id: reason"), for the debug panel.
    endpoint: str | None = None
    fallback: list[str] | None = None
    ttft_ms: float | None = None  # from the call's start to its first token (thinking counts)
    # `duration_ms` (below): the whole call. `cost`: USD, from LLM_PRICE_PER_MTOK; unset without a price.
    cost: float | None = None
    finish_reason: str | None = None  # "length" when the token cap cut it
    retry_of: str | None = None  # the user message whose failed turn it answers
    continues: str | None = None  # the cut-off answer (its parent) whose text this one goes on with
    parts: list[str] | None = None  # as shown: the ids of the stored answers joined into this one
    interrupted: str | None = None  # the error that broke the stream it was written in
    # The record of a failed turn: display history only, never the model's context.
    error: TurnError | None = None
    failed_turn: str | None = None  # the user message of that turn
    # A tool result.
    status: ToolStatus | None = None
    duration_ms: int | float | None = None  # (also a model call's, on an assistant message)
    stderr: str | None = None  # the process's error stream, bounded and masked
    declined: str | None = None  # not run: "user" said no, or nobody answered ("timeout", "unattended")
    # The `browser` tool's page after the call, {url, title}: the tool card and `navi chat` show it
    # when the history is read back (the screenshot lives in the live frame only).
    page: dict[str, str] | None = None
    # A shortened copy (a long tool result in the context, an old long message in a model call).
    truncated_from: int | None = None  # length of the whole text
    recall_key: str | None = None  # the key `recall` reads the whole text with
    # A summary of the earlier conversation.
    condensed: bool | None = None  # written by Navi, not the model
    messages_summarized: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    summary_calls: int | None = None
    # The tools the summarised messages had disclosed (navi/agent/disclosure.py), in order: the
    # next call offers the same tools, so the model's cache of the prompt before them still holds.
    disclosed: list[str] | None = None
    # A compression marker in the display history.
    messages_before: int | None = None
    messages_after: int | None = None
    # Keys of an imported archive's message that Navi has no use for, or the metadata a client sent
    # with it (never sent to the model), exported again.
    custom: dict[str, Any] | None = None
    # An answer as the person rated it: "up" or "down" (shown, archived; never sent to the model).
    feedback: str | None = None

    @property
    def is_failure_record(self) -> bool:
        """The record a failed turn leaves in the display history (for the page's Retry)."""
        return "error" in self and "failed_turn" in self  # as stored, whatever the values

    def but(self, **changes: Any) -> MessageMeta:
        """A copy with `changes` set."""
        copy = self.model_copy(deep=True)
        copy.update(changes)
        return copy
