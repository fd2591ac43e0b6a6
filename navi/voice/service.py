"""The voice service every surface uses (the API, the page, the channels): audio checked and
decoded, transcribed, and text spoken, with the CPU work off the event loop.

Decoding, transcription and synthesis run on the service's own threads (`workers` of them, one by
default: two Whisper decodes at once on two cores only make both slower), never on the event loop
and never on the default executor other parts share. At most `queue` jobs wait or run at once;
one more is refused at once with `VoiceBusy` (the API's 503 with Retry-After) instead of piling up,
so five people talking at once cost latency for voice, not for streaming answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from navi.voice.audio import MEDIA_TYPES, SPEECH_FORMATS, AudioError, Clip, Limits, decode, encode
from navi.voice.stt import RemoteTranscriber, Transcript, WhisperEngine
from navi.voice.tts import MAX_TEXT, EspeakEngine, PiperEngine, RemoteSpeech

T = TypeVar("T")
Speaker = PiperEngine | EspeakEngine | RemoteSpeech
Listener = WhisperEngine | RemoteTranscriber


class VoiceBusy(RuntimeError):
    """Too many voice jobs wait already; try again in a moment."""


class VoiceUnavailable(RuntimeError):
    """Voice is switched off, or its engine cannot run here (the message says why and what to do)."""


@dataclass(frozen=True)
class Speech:
    audio: bytes
    media_type: str
    format: str


class Voice:
    def __init__(
        self,
        listener: Listener | None,
        speaker: Speaker | None,
        *,
        limits: Limits = Limits(),
        workers: int = 1,
        queue: int = 8,
        language: str | None = None,
        off_reasons: tuple[str, str] = ("", ""),
    ) -> None:
        self.listener = listener
        self.speaker = speaker
        self.limits = limits
        self.queue = queue
        self.language = language  # the default when a request names none
        self.off_reasons = off_reasons  # why speech to text / text to speech is off, when it is
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="navi-voice")
        self._jobs = 0
        self._speaker_warmed = False

    def describe(self) -> dict[str, Any]:
        return {
            "speech_to_text": self.listener.name if self.listener else None,
            "text_to_speech": self.speaker.name if self.speaker else None,
            "max_seconds": self.limits.max_seconds,
            "max_bytes": self.limits.max_bytes,
        }

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        if self._jobs >= self.queue:
            raise VoiceBusy(f"{self._jobs} voice jobs are waiting already; try again in a moment")
        self._jobs += 1
        try:
            yield
        finally:
            self._jobs -= 1

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    async def transcribe(
        self, data: bytes, *, language: str | None = None, prompt: str | None = None
    ) -> Transcript:
        """The words spoken in `data` (any format `navi.voice.audio` takes). Raises `AudioError`
        (bad or silent audio), `VoiceBusy`, `VoiceUnavailable`, `RemoteVoiceError`."""
        if self.listener is None:
            raise VoiceUnavailable(self.off_reasons[0] or "speech to text is off on this Navi")
        language = language or self.language
        with self._slot():
            clip: Clip = await self._run(decode, data, self.limits)
            if isinstance(self.listener, RemoteTranscriber):
                return await self.listener.transcribe(
                    data, clip.container, clip.seconds, language=language, prompt=prompt
                )
            return await self._run(self._local_transcribe, self.listener, clip, language, prompt)

    @staticmethod
    def _local_transcribe(
        engine: WhisperEngine, clip: Clip, language: str | None, prompt: str | None
    ) -> Transcript:
        try:
            engine.load()
        except Exception as exc:  # weights missing, a folder with no model: say so, not a 500
            raise VoiceUnavailable(f"the speech-to-text model cannot load: {exc}") from exc
        return engine.transcribe(clip, language=language, prompt=prompt)

    async def speak(
        self, text: str, *, fmt: str = "mp3", speed: float = 1.0, voice: str | None = None
    ) -> Speech:
        """`text` spoken, encoded as `fmt`. `ValueError` for empty or too long text or an unknown
        format; `VoiceBusy`, `VoiceUnavailable`, `RemoteVoiceError` as `transcribe`."""
        if self.speaker is None:
            raise VoiceUnavailable(self.off_reasons[1] or "text to speech is off on this Navi")
        if fmt not in SPEECH_FORMATS:
            raise ValueError(f"response_format must be one of {', '.join(SPEECH_FORMATS)}")
        if not text.strip():
            raise ValueError("there is no text to speak")
        if len(text) > MAX_TEXT:
            raise ValueError(f"the text is {len(text)} characters; at most {MAX_TEXT} are spoken at once")
        if not 0.25 <= speed <= 4.0:
            raise ValueError("speed must be between 0.25 and 4.0")
        with self._slot():
            if isinstance(self.speaker, RemoteSpeech):
                audio = await self.speaker.speak(text, fmt, speed, voice)
            else:
                audio = await self._run(self._local_speak, self.speaker, text, fmt, speed)
        return Speech(audio, MEDIA_TYPES[fmt], fmt)

    @staticmethod
    def _local_speak(engine: PiperEngine | EspeakEngine, text: str, fmt: str, speed: float) -> bytes:
        try:
            engine.load()
        except Exception as exc:
            raise VoiceUnavailable(f"the text-to-speech voice cannot load: {exc}") from exc
        samples, rate = engine.synthesize(text, speed)
        if len(samples) == 0:
            raise ValueError("the text has nothing that can be spoken")
        return encode(samples, rate, fmt)

    async def warm(self) -> None:
        """Load the local models now (in the pool), so the first request does not wait for them."""
        for engine in (self.listener, self.speaker):
            if isinstance(engine, WhisperEngine | PiperEngine):
                await self._run(engine.load)

    async def warm_speaker(self) -> None:
        """The local voice loaded and run once, in the pool, once per process: what a client asking
        for speech (`speak`) starts, so its first answer's first sentence waits neither for the
        voice to load nor for its slower first run. A failure is the first real request's to say."""
        if self._speaker_warmed or not isinstance(self.speaker, PiperEngine | EspeakEngine):
            return
        self._speaker_warmed = True
        with contextlib.suppress(Exception):
            await self._run(self._local_speak, self.speaker, "Ready.", "mp3", 1.0)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


__all__ = ["AudioError", "Speech", "Voice", "VoiceBusy", "VoiceUnavailable"]
