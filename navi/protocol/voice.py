"""Server frames of a voice turn on the socket (navi/api/voice_frames.py): a `voice` frame's words,
and an answer read aloud. They go only to the connection that sent `voice` or `speak`; `speech`
names its turn but is not one of the run's frames (no `seq`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _VoiceFrame(BaseModel):
    model_config = ConfigDict(frozen=True, json_schema_extra={"x-navi-side": "server"})

    def frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Transcript(_VoiceFrame):
    """Additive: the words of a `voice` frame's clip, to the connection that sent it only. With
    `sent`, the words go on as a message: its `stream_start` (or `queued`) follows, as for a
    `message` frame; without, they are the client's to show (the message box)."""

    type: Literal["transcript"] = "transcript"
    text: str
    language: str = Field(description="The language heard (or the one the frame named).")
    duration: float = Field(description="The clip's length in seconds.")
    sent: bool = Field(description="Whether the words were sent on as the next message.")


SpeechFormat = Literal["mp3", "opus", "aac", "flac", "wav"]


class SpeechChunk(_VoiceFrame):
    """Additive: one sentence of an answer, spoken, to a connection that asked (`speak`). Sent as
    soon as the sentence is complete and synthesised, while the answer still streams; an answer's
    first sentence comes in two pieces where it has a clause to cut (`Navi has it,` then the rest),
    so the first audio is short and comes sooner. It names the turn (`run_id`) but is not one of the
    run's frames: no `seq`, and `since` does not count it."""

    type: Literal["speech"] = "speech"
    run_id: str
    index: int = Field(description="The piece's place in the answer, from 0.")
    text: str = Field(description="The words spoken (code, addresses and markup left out).")
    format: SpeechFormat
    audio: str = Field(description="The audio, base64 (mp3: MPEG; opus: Ogg Opus; …).")


class SpeechEnd(_VoiceFrame):
    """Additive: nothing more of this answer will be spoken on this connection (unless speaking is
    switched off and on again while it streams). `done`: every sentence was sent; `stopped`: a
    `speak` frame stopped it (barge-in) or switched speech off; `failed`: speech failed (an `error`
    frame with its code came before)."""

    type: Literal["speech_end"] = "speech_end"
    run_id: str
    sentences: int = Field(description="How many `speech` frames of this answer were sent.")
    reason: Literal["done", "stopped", "failed"] = "done"


VOICE_FRAMES = Transcript | SpeechChunk | SpeechEnd
