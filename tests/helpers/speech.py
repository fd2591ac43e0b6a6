"""Real speech for the voice tests: eSpeak NG says a sentence, PyAV puts it in the container asked
for (WAV, OGG/Opus, WebM/Opus, M4A/AAC, MP3), and `wer` measures how far a transcript is from it.
"""

from __future__ import annotations

import io
import re
import subprocess

import numpy as np

from navi.voice.audio import encode, wav_bytes
from navi.voice.tts import fixed_wav


def espeak_wav(text: str, *, speed: int = 160, voice: str = "en-us") -> bytes:
    done = subprocess.run(
        ["espeak-ng", "--stdout", "-v", voice, "-s", str(speed), text],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return fixed_wav(done.stdout)


def samples_of(wav: bytes) -> tuple[np.ndarray, int]:
    import wave

    with wave.open(io.BytesIO(wav)) as w:
        rate, frames = w.getframerate(), w.readframes(w.getnframes())
    return np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0, rate


def in_container(wav: bytes, container: str) -> bytes:
    """The WAV's sound as `container`: wav, mp3, ogg (Opus), webm (Opus), m4a (AAC)."""
    samples, rate = samples_of(wav)
    if container == "wav":
        return wav_bytes(samples, rate)
    if container == "mp3":
        return encode(samples, rate, "mp3")
    if container == "ogg":
        return encode(samples, rate, "opus")
    import av

    box_format, codec, out_rate = {"webm": ("webm", "libopus", 48_000), "m4a": ("ipod", "aac", rate)}[
        container
    ]
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=box_format) as box:
        stream = box.add_stream(codec, rate=out_rate, layout="mono")
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=out_rate)
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="flt", layout="mono")
        frame.sample_rate = rate
        for converted in [*resampler.resample(frame), *resampler.resample(None)]:
            box.mux(stream.encode(converted))
        box.mux(stream.encode(None))
    return buffer.getvalue()


def silence_wav(seconds: float, rate: int = 16_000) -> bytes:
    return wav_bytes(np.zeros(int(seconds * rate), dtype=np.float32), rate)


NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
NUMBERS += ["eleven", "twelve"]


def words(text: str) -> list[str]:
    """Lower-case words, small numbers spelt out (Whisper writes "7" for "seven")."""
    found = re.findall(r"[a-z0-9']+", text.lower())
    return [NUMBERS[int(w)] if w.isdigit() and int(w) < len(NUMBERS) else w for w in found]


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate: word-level edit distance over the reference's length."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[len(hyp)] / max(1, len(ref))
