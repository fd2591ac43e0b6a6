"""Voice (issue 45): how fast and how well does Navi hear and speak on this machine — and how does a
peer's default path do on the same clips?

The clips: N generated sentences (seeded: reminders, questions, home commands; 6-14 words), spoken
by eSpeak NG at three speeds and, with --piper, by Piper's en_US-joe-medium voice, as WAV.

Speech to text, side by side on the same clips, each after one warm-up:
- Navi: `Voice.transcribe` as the API runs it (PyAV decode to 16 kHz, faster-whisper base int8 on
  VOICE_THREADS threads, beam 1, Silero VAD, the short window: the encoder reads the clip and 2 s
  more, at least 5 s), through its queue and thread;
- Navi with VOICE_STT_WINDOW=full (Whisper's 30 s window for every clip, as before);
- the peer: faster-whisper with its library defaults (beam 5, no VAD, its own decode of the file),
  which is what a faster-whisper-server/speaches install runs per request for the same model.
Reported: real-time factor (processing seconds / audio seconds, wall and CPU), word error rate
(small numbers spelt out on both sides; punctuation and case ignored).

Text to speech: Piper and eSpeak NG real-time factor (synthesis and MP3 encoding / audio length).

Latency from the end of speech to the first audio of the answer, split into its parts, without the
model's own time to its first sentence (that is the model's, measured by bench/real_model.py):
transcription of a typical question, then the first sentence of the answer synthesised and encoded
(MP3, as the page asks for it). The page sends the first sentence as soon as it has streamed.

    .venv/bin/python bench/voice.py [--sentences 100] [--piper] [--threads 2]
    .venv/bin/python bench/voice.py --latency     # only the end of speech → first audio path
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from navi.voice import Voice
from navi.voice.audio import decode, encode
from navi.voice.stt import WhisperEngine
from navi.voice.tts import EspeakEngine, PiperEngine
from navi.voice.weights import whisper_base
from tests.helpers.speech import wer

PEOPLE = ["Alice", "Bob", "my sister", "the plumber", "Doctor Jones", "the school", "my manager"]
THINGS = ["the car", "the lights", "the heating", "the garden", "the invoice", "the report", "dinner"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "tomorrow"]
PLACES = ["Paris", "London", "Berlin", "the office", "the station", "the airport", "the library"]
TEMPLATES = [
    "Remind me to call {person} on {day} morning.",
    "What is the weather like in {place} on {day}?",
    "Turn off {thing} in the kitchen please.",
    "Send a message to {person} saying I will be late.",
    "How long does it take to drive to {place} from here?",
    "Add {thing} to my list for {day}.",
    "Did {person} answer my email about {thing}?",
    "Book a table for four near {place} on {day} evening.",
]
QUESTION = "What time does the train to Berlin leave tomorrow morning?"
FIRST_SENTENCE = "The first train to Berlin leaves at seven fifteen tomorrow morning."
# How answers open (written for this bench, the shapes a chat model's first sentences take): the
# first piece spoken is the whole first sentence, or with the first-clause cut its first clause.
OPENINGS = [
    FIRST_SENTENCE,
    "The first train to Berlin leaves at seven fifteen tomorrow morning, from platform four.",
    "Sure, I have added the invoice to your list for Friday and set a reminder for the morning.",
    "Based on the forecast for Paris, expect a sunny and mild afternoon with a light breeze.",
    "I could not find an email from Alice about the report, but there is one from Bob.",
    "Here is what I found about the heating in the kitchen: the thermostat is set to nineteen.",
    "Your table for four near the station is booked for Saturday evening at eight.",
    "To drive to the airport from here takes about forty minutes, depending on the traffic.",
]


def sentences(n: int, seed: int = 45) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(TEMPLATES).format(
            person=rng.choice(PEOPLE),
            thing=rng.choice(THINGS),
            day=rng.choice(DAYS),
            place=rng.choice(PLACES),
        )
        for _ in range(n)
    ]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def wav_seconds(data: bytes) -> float:
    with wave.open(io.BytesIO(data)) as w:
        return w.getnframes() / w.getframerate()


def spoken(texts: list[str], piper: PiperEngine | None) -> list[tuple[str, str, bytes]]:
    """(voice, text, WAV) for each sentence: eSpeak NG at 140/175/210 wpm in turn, Piper too."""
    espeak = EspeakEngine()
    clips = []
    for i, text in enumerate(texts):
        samples, rate = espeak.synthesize(text, speed=(0.8, 1.0, 1.2)[i % 3])
        clips.append(("espeak", text, encode(samples, rate, "wav")))
        if piper is not None:
            samples, rate = piper.synthesize(text)
            clips.append(("piper", text, encode(samples, rate, "wav")))
    return clips


def row(name: str, audio: float, wall: float, used: float, errors: list[float]) -> str:
    return (
        f"  {name:<34} RTF {wall / audio:5.3f} wall, {used / audio:5.3f} CPU   "
        f"WER {100 * statistics.mean(errors):5.1f} %  (median {100 * statistics.median(errors):4.1f} %, "
        f"worst {100 * max(errors):5.1f} %)"
    )


async def navi_stt(voice: Voice, clips: list[tuple[str, str, bytes]]) -> tuple[float, float, list[float]]:
    await voice.transcribe(clips[0][2], language="en")  # warm-up
    wall, used, errors = 0.0, 0.0, []
    for _kind, text, data in clips:
        t0, c0 = time.perf_counter(), cpu()
        got = await voice.transcribe(data, language="en")
        wall, used = wall + time.perf_counter() - t0, used + cpu() - c0
        errors.append(wer(text, got.text))
    return wall, used, errors


def peer_stt(
    folder: Path, threads: int, clips: list[tuple[str, str, bytes]]
) -> tuple[float, float, list[float]]:
    from faster_whisper import WhisperModel

    model = WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=threads)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (_kind, _text, data) in enumerate(clips):
            path = Path(tmp) / f"{i}.wav"
            path.write_bytes(data)
            paths.append(path)
        list(model.transcribe(str(paths[0]), language="en")[0])  # warm-up
        wall, used, errors = 0.0, 0.0, []
        for path, (_kind, text, _data) in zip(paths, clips, strict=True):
            t0, c0 = time.perf_counter(), cpu()
            segments, _info = model.transcribe(str(path), language="en")  # beam 5, no VAD: its defaults
            got = " ".join(s.text for s in segments)
            wall, used = wall + time.perf_counter() - t0, used + cpu() - c0
            errors.append(wer(text, got))
    return wall, used, errors


def tts_rtf(engine: PiperEngine | EspeakEngine, texts: list[str]) -> tuple[float, float, float]:
    engine.synthesize("Warming up.")
    audio = wall = used = 0.0
    for text in texts:
        t0, c0 = time.perf_counter(), cpu()
        samples, rate = engine.synthesize(text)
        encode(samples, rate, "mp3")
        wall, used = wall + time.perf_counter() - t0, used + cpu() - c0
        audio += len(samples) / rate
    return audio, wall, used


async def latency(voice: Voice, question: bytes, rounds: int = 5) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of each part, `rounds` times."""
    steps = {
        "decode": lambda: asyncio.to_thread(decode, question),
        "transcribe (decode included)": lambda: voice.transcribe(question, language="en"),
        "first sentence → MP3": lambda: voice.speak(FIRST_SENTENCE, fmt="mp3"),
    }
    parts: dict[str, list[tuple[float, float]]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            t0, c0 = time.perf_counter(), cpu()
            await step()
            parts[name].append((time.perf_counter() - t0, cpu() - c0))
    return parts


def first_piece(text: str, clause: bool) -> str:
    from navi.voice.speakable import Sentences

    found = Sentences(first_clause=clause)
    return [*found.feed(text + " "), *found.finish()][0]


def timed(fn: Any, rounds: int = 3) -> tuple[float, float]:
    """Median (wall, CPU) seconds of `fn()` over `rounds` runs."""
    runs = []
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), cpu()
        fn()
        runs.append((time.perf_counter() - t0, cpu() - c0))
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


async def latency_parts(folder: Path, threads: int, question: bytes) -> None:
    """`--latency`: the end of speech → first audio path alone, cold and warm, with the options
    that change it: Piper's threads and onnxruntime's busy-waiting, the first-clause cut."""
    print("\ncold start (what the first `speak` warms: loading, the slower first run):")
    whisper, piper = WhisperEngine(folder, threads=threads), PiperEngine(threads=threads, spinning=False)
    voice = Voice(whisper, piper, queue=4)
    steps: list[tuple[str, Any]] = [
        ("load Whisper base", lambda: asyncio.to_thread(whisper.load)),
        ("load Piper joe-medium", lambda: asyncio.to_thread(piper.load)),
        ("first transcription", lambda: voice.transcribe(question, language="en")),
        ("second transcription", lambda: voice.transcribe(question, language="en")),
        ("first synthesis → MP3", lambda: voice.speak(FIRST_SENTENCE, fmt="mp3")),
        ("second synthesis → MP3", lambda: voice.speak(FIRST_SENTENCE, fmt="mp3")),
    ]
    for name, step in steps:
        t0, c0 = time.perf_counter(), cpu()
        await step()
        print(
            f"    {name:<30} {1000 * (time.perf_counter() - t0):6.0f} ms wall, "
            f"{1000 * (cpu() - c0):6.0f} ms CPU"
        )
    voice.close()

    print("\nPiper, the first sentence → MP3 (median of 5, after a warm-up):")
    for n, spin in ((2, True), (2, False), (1, False)):
        engine = PiperEngine(threads=n, spinning=spin)
        engine.synthesize("Warming up.")
        w, c = timed(lambda e=engine: encode(*e.synthesize(FIRST_SENTENCE), "mp3"), 5)  # type: ignore[misc]
        print(
            f"    {n} thread{'s' if n > 1 else ' '}, busy-waiting {'on ' if spin else 'off'}   "
            f"{1000 * w:6.0f} ms wall, {1000 * c:6.0f} ms CPU"
        )

    print(f"\nthe first piece spoken, {len(OPENINGS)} answer openings (median of 3 each, Piper → MP3):")
    cut = PiperEngine(threads=threads, spinning=False)
    cut.synthesize("Warming up.")
    whole: list[tuple[float, float]] = []
    clause: list[tuple[float, float]] = []
    for text in OPENINGS:
        piece = first_piece(text, clause=True)
        whole.append(timed(lambda t=text: encode(*cut.synthesize(t), "mp3")))  # type: ignore[misc]
        clause.append(
            timed(lambda p=piece: encode(*cut.synthesize(p), "mp3")) if piece != text else whole[-1]
        )  # type: ignore[misc]
        print(f"    {len(piece.split()):2d}/{len(text.split()):2d} words  {piece}")
    for label, parts in (("whole first sentence", whole), ("first clause cut", clause)):
        w, c = statistics.median(p[0] for p in parts), statistics.median(p[1] for p in parts)
        print(f"    {label:<22} median {1000 * w:6.0f} ms wall, {1000 * c:6.0f} ms CPU")
    engine = Voice(WhisperEngine(folder, threads=threads), cut, queue=4)
    await engine.transcribe(question, language="en")
    heard = [await timed_async(lambda: engine.transcribe(question, language="en")) for _ in range(5)]
    hw, hc = statistics.median(h[0] for h in heard), statistics.median(h[1] for h in heard)
    print(
        f"    transcription of the {wav_seconds(question):.1f} s question   median "
        f"{1000 * hw:6.0f} ms wall, {1000 * hc:6.0f} ms CPU"
    )
    for label, parts in (("whole first sentence", whole), ("first clause cut", clause)):
        w, c = statistics.median(p[0] for p in parts), statistics.median(p[1] for p in parts)
        print(
            f"    total, {label:<22} {1000 * (hw + w):6.0f} ms wall, "
            f"{1000 * (hc + c):6.0f} ms CPU   target ≤ 1500 ms"
        )
    engine.close()


async def timed_async(step: Any) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), cpu()
    await step()
    return time.perf_counter() - t0, cpu() - c0


async def long_clips(voice: Voice, texts: list[str], n: int = 3) -> tuple[float, float, float]:
    """Whisper pads every clip to a 30 s window: dictation-length clips (8 sentences, ~25 s) show
    the real-time factor a long message gets. (audio seconds, wall, CPU)."""
    espeak = EspeakEngine()
    audio = wall = used = 0.0
    for k in range(n):
        samples, rate = espeak.synthesize(" ".join(texts[k * 8 : k * 8 + 8]))
        data = encode(samples, rate, "wav")
        t0, c0 = time.perf_counter(), cpu()
        await voice.transcribe(data, language="en")
        wall, used = wall + time.perf_counter() - t0, used + cpu() - c0
        audio += len(samples) / rate
    return audio, wall, used


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument(
        "--piper", action="store_true", help="Piper speaks each sentence too (doubles the clips)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--no-full", action="store_true", help="skip the full-window run")
    parser.add_argument(
        "--latency", action="store_true", help="only end of speech → first audio: cold, options, first clause"
    )
    args = parser.parse_args()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "navi" / "voice"
    folder = whisper_base(cache)
    if args.latency:
        print(
            f"voice latency: {os.cpu_count()} cores, {args.threads} threads a model; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        await latency_parts(folder, args.threads, encode(*EspeakEngine().synthesize(QUESTION), "wav"))
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        return 0
    piper = PiperEngine(threads=args.threads)
    texts = sentences(args.sentences)
    print(
        f"voice bench: {os.cpu_count()} cores, {args.threads} threads a model, {len(texts)} sentences; "
        f"load average {os.getloadavg()[0]:.1f} (wall times rise with it, CPU times much less)"
    )
    t0 = time.perf_counter()
    clips = spoken(texts, piper if args.piper else None)
    audio = sum(wav_seconds(c[2]) for c in clips)
    print(f"  {len(clips)} clips, {audio:.0f} s of speech, made in {time.perf_counter() - t0:.0f} s")

    voice = Voice(WhisperEngine(folder, threads=args.threads), piper, queue=4)
    full = Voice(WhisperEngine(folder, threads=args.threads, window="full"), piper, queue=4)
    await voice.warm()
    print("\nspeech to text (Whisper base, int8):")
    wall, used, errors = await navi_stt(voice, clips)
    print(row("Navi (beam 1, VAD, short window)", audio, wall, used, errors))
    if not args.no_full:
        await full.warm()
        f_wall, f_used, f_errors = await navi_stt(full, clips)
        print(row("Navi, VOICE_STT_WINDOW=full", audio, f_wall, f_used, f_errors))
        print(f"  the short window uses {used / f_used:.2f}x the full window's CPU time")
    for kind in ("espeak", "piper"):
        mine = [e for e, c in zip(errors, clips, strict=True) if c[0] == kind]
        if mine and args.piper:
            print(f"    {kind} voices: WER {100 * statistics.mean(mine):.1f} %")
    if not args.no_peer:
        p_wall, p_used, p_errors = peer_stt(folder, args.threads, clips)
        print(row("peer: faster-whisper defaults (b5)", audio, p_wall, p_used, p_errors))
        print(
            f"  Navi's path uses {used / p_used:.2f}x the peer's CPU time "
            f"({wall / p_wall:.2f}x its wall time)"
        )

    print("\ntext to speech (synthesis + MP3 encoding):")
    sample = texts[:20]
    for engine in (piper, EspeakEngine()):
        t_audio, t_wall, t_used = tts_rtf(engine, sample)
        print(
            f"  {engine.name:<10} RTF {t_wall / t_audio:5.3f} wall, {t_used / t_audio:5.3f} CPU "
            f"({t_audio:.0f} s)"
        )

    print("\nend of speech → first audio of the answer (model's own time to its first sentence excluded):")
    question = encode(*EspeakEngine().synthesize(QUESTION), "wav")
    q_seconds = wav_seconds(question)
    for label, engine in (("short window", voice), ("full window", full)):
        if engine is full and args.no_full:
            continue
        print(f"  {label}:")
        parts = await latency(engine, question)
        medians = {
            name: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for name, v in parts.items()
        }
        for name, (w, c) in medians.items():
            print(f"    {name:<30} median {1000 * w:6.0f} ms wall, {1000 * c:6.0f} ms CPU")
        total = medians["transcribe (decode included)"][0] + medians["first sentence → MP3"][0]
        total_cpu = medians["transcribe (decode included)"][1] + medians["first sentence → MP3"][1]
        print(
            f"    total (a {q_seconds:.1f} s question)  median {1000 * total:6.0f} ms wall, "
            f"{1000 * total_cpu:6.0f} ms CPU   target ≤ 1500 ms"
        )
    if len(texts) >= 24:
        l_audio, l_wall, l_used = await long_clips(voice, texts)
        print(
            f"\nlong clips (3 × ~{l_audio / 3:.0f} s): RTF {l_wall / l_audio:.3f} wall, "
            f"{l_used / l_audio:.3f} CPU"
        )
    print(
        f"\ntarget: transcription ≤ 0.5x real time → short clips {wall / audio:.3f}x wall "
        f"({'met' if wall / audio <= 0.5 else 'NOT met'}), {used / audio:.3f}x CPU"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    voice.close()
    full.close()
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(asyncio.run(main()))
