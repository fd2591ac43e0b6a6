"""OpenAI's audio API, served by Navi's own engines: `POST /v1/audio/transcriptions` (multipart, a
clip → its words) and `POST /v1/audio/speech` (JSON, text → audio), so the `openai` SDK's
`audio.transcriptions.create` and `audio.speech.create` work against Navi.

Same token and users as every route; nothing is stored (the clip and the text live for the
request only), so there is nothing one user could see of another's. The `model` and `voice` a client
sends are accepted and ignored: the configured engines answer (docs/voice.md). Errors are OpenAI's
error object: 400 for audio that cannot be used (`unsupported_format`, `corrupt_audio`,
`too_long`, `no_speech`), 413 for a clip over the size cap, 503 when voice is off here or busy.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import UploadFile

from navi.api.deps import RuntimeDep
from navi.api.openai_wire import OpenAIError, bad_request
from navi.api.routing import api_router
from navi.voice import AudioError, RemoteVoiceError, Transcript, Voice, VoiceBusy, VoiceUnavailable
from navi.voice.audio import SPEECH_FORMATS

router = api_router(prefix="/v1/audio", tags=["openai", "voice"])
TRANSCRIPT_FORMATS = ("json", "text", "verbose_json", "srt", "vtt")
MAX_FIELD_BYTES = 64 * 1024  # the prompt and the other text fields


class SpeechRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # instructions, stream_format…: accepted, not used
    model: str = "tts-1"
    input: str
    voice: str | dict[str, Any] = "alloy"
    response_format: Literal["mp3", "opus", "aac", "flac", "wav", "pcm"] = "mp3"
    speed: float = Field(1.0, ge=0.25, le=4.0)


def voice_of(runtime: Any) -> Voice:
    voice: Voice | None = runtime.voice
    if voice is None:
        raise OpenAIError(503, "voice_unavailable", "voice is not set up on this Navi")
    return voice


def failure(exc: Exception) -> OpenAIError:
    """A voice error as OpenAI's error object."""
    if isinstance(exc, AudioError):
        status = 413 if exc.code == "too_large" else 400
        return OpenAIError(status, exc.code, str(exc), param="file" if status != 413 else None)
    if isinstance(exc, VoiceBusy):
        return OpenAIError(503, "voice_busy", str(exc), headers={"Retry-After": "2"})
    if isinstance(exc, VoiceUnavailable):
        return OpenAIError(503, "voice_unavailable", str(exc))
    if isinstance(exc, RemoteVoiceError):
        return OpenAIError(502, "voice_server_failed", str(exc))
    return bad_request(str(exc))


def _stamp(seconds: float, comma: bool) -> str:
    ms = round(seconds * 1000)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{',' if comma else '.'}{ms:03d}"


def _subtitles(t: Transcript, fmt: str) -> str:
    cues = t.segments or ()
    if fmt == "vtt":
        return "WEBVTT\n\n" + "".join(
            f"{_stamp(c.start, False)} --> {_stamp(c.end, False)}\n{c.text}\n\n" for c in cues
        )
    return "".join(
        f"{i}\n{_stamp(c.start, True)} --> {_stamp(c.end, True)}\n{c.text}\n\n" for i, c in enumerate(cues, 1)
    )


def transcript_response(t: Transcript, fmt: str) -> Response:
    if fmt == "text":
        return PlainTextResponse(t.text + "\n")
    if fmt in ("srt", "vtt"):
        return PlainTextResponse(_subtitles(t, fmt), media_type="text/vtt" if fmt == "vtt" else "text/plain")
    if fmt == "verbose_json":
        return JSONResponse(
            {
                "task": "transcribe",
                "language": t.language,
                "duration": t.duration,
                "text": t.text,
                "segments": [
                    {"id": i, "start": s.start, "end": s.end, "text": s.text}
                    for i, s in enumerate(t.segments)
                ],
            }
        )
    return JSONResponse({"text": t.text})


async def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    if value is None or isinstance(value, UploadFile):
        return None
    return str(value)[:MAX_FIELD_BYTES].strip() or None


@router.post(
    "/transcriptions",
    summary="Transcribe a clip (multipart: file, model, language, prompt, response_format)",
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "model": {"type": "string"},
                            "language": {"type": "string"},
                            "prompt": {"type": "string"},
                            "response_format": {"type": "string", "enum": list(TRANSCRIPT_FORMATS)},
                        },
                    }
                }
            },
            "required": True,
        }
    },
)
async def transcriptions(request: Request, runtime: RuntimeDep) -> Response:
    voice = voice_of(runtime)
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise OpenAIError(415, "unsupported_type", "send the clip as multipart/form-data with a `file` part")
    try:
        form = await request.form(max_files=1, max_fields=16, max_part_size=MAX_FIELD_BYTES)
    except Exception as exc:  # a malformed body: Starlette's MultiPartException and friends
        raise bad_request(f"the multipart body does not parse: {exc}") from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise bad_request("the `file` part (the audio) is missing", param="file")
        fmt = await _field(form, "response_format") or "json"
        if fmt not in TRANSCRIPT_FORMATS:
            raise bad_request(
                f"response_format must be one of {', '.join(TRANSCRIPT_FORMATS)}", param="response_format"
            )
        language = await _field(form, "language")
        if language is not None and not (language.isalpha() and 2 <= len(language) <= 3):
            raise bad_request("language must be an ISO-639-1 code such as en or de", param="language")
        data = await upload.read()
        try:
            transcript = await voice.transcribe(
                data, language=language.lower() if language else None, prompt=await _field(form, "prompt")
            )
        except (AudioError, VoiceBusy, VoiceUnavailable, RemoteVoiceError) as exc:
            raise failure(exc) from None
    finally:
        await form.close()
    return transcript_response(transcript, fmt)


@router.post("/speech", summary="Speak text (OpenAI's speech request); the audio in the body")
async def speech(body: SpeechRequest, runtime: RuntimeDep) -> Response:
    voice = voice_of(runtime)
    named = body.voice if isinstance(body.voice, str) else None
    try:
        spoken = await voice.speak(body.input, fmt=body.response_format, speed=body.speed, voice=named)
    except (ValueError, VoiceBusy, VoiceUnavailable, RemoteVoiceError) as exc:
        raise failure(exc) from None
    return Response(spoken.audio, media_type=spoken.media_type)


__all__ = ["SPEECH_FORMATS", "router"]
