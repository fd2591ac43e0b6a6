"""The codes of `error` frames: stable names for what went wrong (the message stays for people).
Additive: a client meeting a code it does not know shows the message."""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal[
    "model_unreachable",  # the model server did not answer (not running, wrong address)
    "model_not_found",  # the server runs but does not have the model
    "model_auth",  # the server refused the API key
    "model_error",  # the server answered with an error
    "model_interrupted",  # the stream broke off mid-answer
    "timeout",  # no first token or no progress within the limits
    "context_overflow",  # the prompt does not fit the model's window
    "unknown_backend",  # a profile names a backend Navi does not have
    "no_answer",  # the run ended without an answer
    "session_not_found",
    "busy",  # a turn is already running in this session
    "bad_frame",  # the client sent a frame Navi cannot use
    "nothing_to_retry",  # retry with no failed turn to run again
    "nothing_to_continue",  # continue of an answer that is not the latest one, or was not cut off
    "too_slow",  # this connection fell too far behind the run and was closed
    "approval_not_found",  # an answer to an approval no run is waiting for (answered already, or unknown)
    "elicitation_not_found",  # an answer to an elicitation nothing waits for (answered already, or unknown)
    "bad_answer",  # an elicitation's content that does not match its form (it still waits)
    "message_not_found",  # edit, regenerate or switch named no message of the session
    "worker_lost",  # the Navi process running the turn died; the message is kept, Retry runs it again
    "queue_full",  # too many messages already wait in this session
    "not_queued",  # an edit or cancel of a message that no longer waits (it ran, steered, or was cancelled)
    # Additive, a `voice` or `speak` frame's (the same words as the /v1/audio routes' errors):
    "unsupported_format",  # the clip's bytes are not audio Navi reads
    "corrupt_audio",  # the clip is damaged and nothing decodes
    "too_large",  # the clip is over VOICE_MAX_MB
    "too_long",  # the clip is longer than VOICE_MAX_SECONDS
    "no_speech",  # silent, or nothing a person said was heard
    "voice_busy",  # VOICE_QUEUE voice jobs wait or run already: try again in a moment
    "voice_unavailable",  # voice is off here, or its engine cannot run (the message says why)
    "voice_server_failed",  # VOICE_STT=remote / VOICE_TTS=remote and that server failed
    "internal",  # a bug in Navi: the message says what, the log has the rest
]
CODES = frozenset(ErrorCode.__args__)  # type: ignore[attr-defined]
