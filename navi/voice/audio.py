"""Audio in: the container recognised by its bytes (never by name or declared type), decoded with
PyAV (FFmpeg's libraries, BSD-3-Clause bindings) to 16 kHz mono float samples, within caps.

Formats taken: WAV, MP3, OGG (Opus/Vorbis), WebM/Matroska (Opus), MP4/M4A and ADTS (AAC), FLAC. Anything
else, a clip that does not decode, one longer than the cap, and one with no sound are each a
`AudioError` with a code and a sentence a person can act on.

Audio out: `encode()` writes float samples as WAV, MP3, Opus (in OGG), AAC (ADTS), FLAC or raw
16-bit PCM — the formats OpenAI's `/v1/audio/speech` offers.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Samples = npt.NDArray[np.float32]

RATE = 16_000  # what Whisper hears
SILENCE_PEAK = 0.01  # a clip whose loudest sample stays under this (-40 dBFS) has nothing to hear
SpeechFormat = Literal["mp3", "opus", "aac", "flac", "wav", "pcm"]
SPEECH_FORMATS: tuple[str, ...] = ("mp3", "opus", "aac", "flac", "wav", "pcm")
MEDIA_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}


class AudioError(ValueError):
    """Audio Navi cannot use: `code` is one of unsupported_format, corrupt_audio, too_large,
    too_long, no_speech; the message says what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 25 * 1024 * 1024  # OpenAI's own cap on an uploaded clip
    max_seconds: float = 300.0


@dataclass(frozen=True)
class Clip:
    samples: Samples  # 16 kHz mono float32 in [-1, 1]
    container: str  # what the bytes were: wav, mp3, ogg, webm, mp4, flac

    @property
    def seconds(self) -> float:
        return len(self.samples) / RATE


def sniff(head: bytes) -> str | None:
    """The container `head` (a file's first bytes) starts, or None for anything else."""
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[:4] == b"OggS":
        return "ogg"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "webm"
    if head[4:8] == b"ftyp":
        return "mp4"
    if head[:4] == b"fLaC":
        return "flac"
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0:
        return "aac"  # ADTS: MPEG sync with layer 0
    if head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "mp3"
    return None


def decode(data: bytes, limits: Limits = Limits()) -> Clip:
    """`data` as 16 kHz mono samples; `AudioError` for what cannot be used. CPU-bound: call it off
    the event loop."""
    if len(data) > limits.max_bytes:
        raise AudioError(
            "too_large", f"the audio is {len(data):,} bytes; the limit is {limits.max_bytes:,} bytes"
        )
    container = sniff(data[:16])
    if container is None:
        raise AudioError(
            "unsupported_format",
            "this is not audio Navi reads: send WAV, MP3, OGG/Opus, WebM/Opus, M4A or FLAC",
        )
    samples = _decode(data, container, limits)
    if len(samples) == 0:
        raise AudioError("corrupt_audio", f"the {container} file holds no audio that decodes")
    if float(abs(samples).max()) < SILENCE_PEAK:
        raise AudioError("no_speech", "the clip is silent: nothing was heard (is the microphone muted?)")
    return Clip(samples, container)


def _decode(data: bytes, container: str, limits: Limits) -> Samples:
    import av
    import numpy as np

    chunks: list[Samples] = []
    total = 0
    cap = int(limits.max_seconds * RATE)
    try:
        with av.open(io.BytesIO(data), mode="r") as box:
            if not box.streams.audio:
                raise AudioError("corrupt_audio", f"the {container} file has no audio track")
            resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
            for frame in box.decode(audio=0):
                for out in resampler.resample(frame):
                    chunk = out.to_ndarray().reshape(-1).astype(np.float32, copy=False)
                    total += len(chunk)
                    if total > cap:
                        raise AudioError(
                            "too_long", f"the clip is longer than the {limits.max_seconds:g} s limit"
                        )
                    chunks.append(chunk)
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1).astype(np.float32, copy=False))
    except AudioError:
        raise
    except (av.FFmpegError, ValueError, IndexError, EOFError) as exc:
        if not chunks:
            raise AudioError("corrupt_audio", f"the {container} file is damaged and does not decode") from exc
        # a truncated file: what decoded before the damage is kept
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    return np.concatenate(chunks)


def wav_bytes(samples: Samples, rate: int) -> bytes:
    import numpy as np

    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    return out.getvalue()


_CODECS = {"mp3": ("mp3", "libmp3lame", 0), "opus": ("ogg", "libopus", 48_000), "aac": ("adts", "aac", 0)}
_CODECS["flac"] = ("flac", "flac", 0)


def encode(samples: Samples, rate: int, fmt: str) -> bytes:
    """Mono float samples at `rate` as `fmt` (one of `SPEECH_FORMATS`)."""
    import numpy as np

    if fmt == "wav":
        return wav_bytes(samples, rate)
    if fmt == "pcm":  # OpenAI's raw format: 16-bit little-endian, no header (at the voice's rate)
        return (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    import av

    box_format, codec, codec_rate = _CODECS[fmt]
    out_rate = codec_rate or rate
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=box_format) as box:
        stream: Any = box.add_stream(codec, rate=out_rate, layout="mono")
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=out_rate)
        frame = av.AudioFrame.from_ndarray(
            samples.astype(np.float32).reshape(1, -1), format="flt", layout="mono"
        )
        frame.sample_rate = rate
        for converted in [*resampler.resample(frame), *resampler.resample(None)]:
            box.mux(stream.encode(converted))
        box.mux(stream.encode(None))
    return buffer.getvalue()
