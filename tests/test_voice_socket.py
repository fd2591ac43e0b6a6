"""A voice turn on the WebSocket (`voice` and `speak` frames, navi/api/voice_frames.py), against a
live Navi with the real engines: eSpeak NG speaks a question, Whisper base hears it (`transcript`),
the words run as the next message, and Piper speaks the answer back sentence by sentence
(`speech` frames, the first while the answer still streams), which Whisper hears again. Bad clips
are `error` frames with the /v1/audio codes and the socket stays open; a barge-in (`speak` again)
stops the rest; speech goes only to the connection that asked; the token and the users hold.

One Navi for the module: Whisper and Piper load once.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed, InvalidStatus

from navi.cli.main import _register, app
from navi.protocol import parse_server_frame
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply
from navi.voice.audio import decode, sniff
from tests.helpers.speech import espeak_wav, in_container, silence_wav, wer, words
from tests.server_helpers import LiveNavi, frames_until, live_navi, use_script

_register()  # `navi users add`
pytestmark = pytest.mark.slow

QUESTION = "What is the weather in Paris today?"
ANSWER = (
    "The weather in Paris is sunny and mild. Expect a light breeze in the afternoon. "
    "Check it yourself:\n\n```bash\ncurl https://wttr.in/Paris\n```\n\n"
    "The details are at https://meteo.example/paris for you. Have a lovely day!"
)
LONG = " ".join(f"Point number {n} about the weather is worth hearing." for n in range(1, 13))


@pytest.fixture(scope="module")
def navi(tmp_path_factory: pytest.TempPathFactory, fake_server_session: FakeModelServer) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp("voice-socket")
    with live_navi(tmp, fake_server_session, voice_max_seconds=12) as server:
        yield server


@pytest.fixture(scope="module")
def question() -> bytes:
    return in_container(espeak_wav(QUESTION), "webm")  # what the page's recorder makes


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def typed(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for frame in frames:  # every frame Navi sent is one the protocol types
        parse_server_frame(frame)
    return frames


async def test_a_spoken_question_is_answered_aloud_while_it_streams(
    navi: LiveNavi, fake_server: FakeModelServer, question: bytes
) -> None:
    held = threading.Event()  # the answer stops mid-stream until its first sentence was heard
    use_script(fake_server).turn(Reply(text=ANSWER, chunk_chars=8, hold=held, wait_after=8))
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "speak", "on": True}))
        await ws.send(json.dumps({"type": "voice", "audio": f"data:audio/webm;base64,{b64(question)}"}))
        frames = await frames_until(ws, "speech", within=120)
        held.set()
        frames = typed(frames + await frames_until(ws, "speech_end", within=120))
    heard = next(f for f in frames if f["type"] == "transcript")
    assert heard["sent"] and heard["language"] == "en" and 2.0 < heard["duration"] < 6.0
    assert {"weather", "paris", "today"} <= set(words(heard["text"])) and wer(QUESTION, heard["text"]) <= 0.3
    kinds = [f["type"] for f in frames]
    start = frames[kinds.index("stream_start")]
    assert start["message"]["content"] == heard["text"]  # the words ran as the message
    assert kinds.index("transcript") < kinds.index("stream_start")
    speech = [f for f in frames if f["type"] == "speech"]
    assert [s["text"] for s in speech] == [
        "The weather in Paris is sunny and mild.",
        "Expect a light breeze in the afternoon.",
        "Check it yourself:",
        "The details are at for you.",
        "Have a lovely day!",
    ]
    assert {s["run_id"] for s in speech} == {start["run_id"]} and [s["index"] for s in speech] == list(
        range(5)
    )
    assert "seq" not in speech[0]  # not one of the run's frames
    # the first sentence was spoken and sent before the answer had finished streaming
    assert kinds.index("speech") < kinds.index("stream_end"), kinds
    first = base64.b64decode(speech[0]["audio"])
    assert speech[0]["format"] == "mp3" and sniff(first[:16]) == "mp3" and decode(first).seconds > 1.0
    end = frames[-1]
    assert end == {"type": "speech_end", "run_id": start["run_id"], "sentences": 5, "reason": "done"}
    # what Navi said is what Whisper hears in it
    with navi.client() as http:
        back = http.post(
            "/v1/audio/transcriptions", files={"file": ("s.mp3", first)}, data={"language": "en"}
        )
    assert {"weather", "sunny", "mild"} <= set(words(back.json()["text"])), back.text


async def test_a_clip_only_transcribed_then_one_sent(
    navi: LiveNavi, fake_server: FakeModelServer, question: bytes
) -> None:
    use_script(fake_server).turn(Reply(text="Sunny."))
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        await ws.send(json.dumps({"type": "voice", "audio": b64(question), "send": False, "language": "en"}))
        await ws.send(json.dumps({"type": "voice", "audio": b64(silence_wav(1.0))}))
        frames = typed(await frames_until(ws, "error", within=120))
        assert [f["type"] for f in frames] == ["transcript", "error"]  # clips are heard in order
        assert frames[0]["sent"] is False and "paris" in words(frames[0]["text"])
        with navi.client() as http:  # nothing was sent: the words are the client's
            assert http.get(f"/sessions/{sid}").json()["messages"] == []
        ogg = in_container(espeak_wav(QUESTION), "ogg")
        await ws.send(json.dumps({"type": "voice", "audio": b64(ogg)}))
        frames = typed(await frames_until(ws, "stream_end", within=120))
    kinds = [f["type"] for f in frames]
    assert "speech" not in kinds  # speaking was never asked for on this connection
    assert "paris" in words(frames[kinds.index("transcript")]["text"])
    assert frames[-1]["content"] == "Sunny."


async def test_bad_clips_are_error_frames_and_the_socket_stays(
    navi: LiveNavi, fake_server: FakeModelServer, question: bytes, tmp_path: Any
) -> None:
    long = in_container(espeak_wav(" ".join([QUESTION] * 6), speed=140), "ogg")  # over the 12 s cap
    cases = [
        ({"audio": b64(b"%PDF-1.7\n" + b"x" * 500)}, "unsupported_format", "not audio"),
        ({"audio": b64(b"OggS" + b"\x00" * 400)}, "corrupt_audio", ""),
        ({"audio": b64(silence_wav(2.0))}, "no_speech", ""),
        ({"audio": b64(long)}, "too_long", ""),
        ({"audio": "not base64 at all!"}, "bad_frame", "base64"),
        ({}, "bad_frame", "audio is required"),
        ({"audio": 12}, "bad_frame", "audio is required"),
        ({"audio": b64(question), "language": "klingon"}, "bad_frame", "ISO-639-1"),
        ({"audio": b64(question), "mode": "now"}, "bad_frame", "mode"),
    ]
    sid = navi.new_session()
    async with navi.socket(sid) as ws:
        for fields, code, said in cases:
            await ws.send(json.dumps({"type": "voice", **fields}))
            error = (await frames_until(ws, "error", within=120))[-1]
            assert error["code"] == code and said in error["message"], (fields.keys(), error)
            assert "run_id" not in error  # a refusal, not a failed turn
        await ws.send(json.dumps({"type": "speak", "on": True, "format": "ogg"}))
        assert (await frames_until(ws, "error"))[-1]["code"] == "bad_frame"
        use_script(fake_server).turn(Reply(text="Still here."))  # the socket still works
        await ws.send(json.dumps({"type": "message", "content": "hello"}))
        assert (await frames_until(ws, "stream_end"))[-1]["content"] == "Still here."
    with navi.client() as http:
        assert [m["content"] for m in http.get(f"/sessions/{sid}").json()["messages"]] == [
            "hello",
            "Still here.",
        ]


async def test_barge_in_stops_the_rest_and_speech_goes_only_to_who_asked(
    navi: LiveNavi, fake_server: FakeModelServer
) -> None:
    held = threading.Event()  # the answer waits mid-stream: the barge-in comes while it streams
    script = use_script(fake_server)
    script.turn(Reply(text=LONG, chunk_chars=30, hold=held, wait_after=3))
    script.turn(Reply(text="Done."))
    sid = navi.new_session()
    async with navi.socket(sid) as listener, navi.socket(sid) as other:
        await listener.send(json.dumps({"type": "speak", "on": True, "format": "opus"}))
        # (sent on the same connection, after `speak`: the answer starts after speaking is on)
        await listener.send(json.dumps({"type": "message", "content": "Tell me about the weather."}))
        frames = await frames_until(listener, "speech", within=120)
        first = frames[-1]
        assert first["index"] == 0 and first["text"] == "Point number 1 about the weather is worth hearing."
        assert base64.b64decode(first["audio"])[:4] == b"OggS"
        await listener.send(json.dumps({"type": "speak", "on": True, "format": "opus"}))  # barge-in
        frames += await frames_until(listener, "speech_end", within=120)
        assert frames[-1] == {
            "type": "speech_end",
            "run_id": first["run_id"],
            "sentences": 1,
            "reason": "stopped",
        }
        assert "stream_end" not in [f["type"] for f in frames]  # it was stopped while it streamed
        held.set()
        rest = await frames_until(listener, "stream_end", within=120)
        assert [f for f in rest if f["type"].startswith("speech")] == []  # nothing more of that answer
        assert len(rest[-1]["content"]) == len(LONG)
        # speaking is still on: the next answer is spoken whole
        await listener.send(json.dumps({"type": "message", "content": "And now?"}))
        after = typed(await frames_until(listener, "speech_end", within=120))
        run = next(f["run_id"] for f in after if f["type"] == "stream_start")
        assert [(f["run_id"], f["text"]) for f in after if f["type"] == "speech"] == [(run, "Done.")]
        assert after[-1] == {"type": "speech_end", "run_id": run, "sentences": 1, "reason": "done"}
        got = await frames_until(other, "stream_end", within=120)  # the first answer, on the other socket
        got += await frames_until(other, "stream_end", within=120)  # and the second
        assert [f for f in got if f["type"] in ("speech", "speech_end", "transcript")] == []


async def test_the_token_and_the_users(navi: LiveNavi, question: bytes) -> None:
    sid = navi.new_session()
    with pytest.raises(InvalidStatus) as refused:
        async with navi.socket(sid, anonymous=True):
            pass
    assert refused.value.response.status_code in (401, 403)
    env = {"DB_PATH": str(navi.settings.db_path), "LOG_LEVEL": "WARNING"}
    added = await asyncio.to_thread(CliRunner().invoke, app, ["users", "add", "mallory"], env=env)
    assert added.exit_code == 0, added.output
    mallory = {"Authorization": f"Bearer {added.stdout.strip()}"}
    async with navi.socket(sid, anonymous=True, additional_headers=mallory) as ws:
        # another user's session closes like one that does not exist, before any clip is heard
        with pytest.raises(ConnectionClosed) as closed:
            await ws.send(json.dumps({"type": "voice", "audio": b64(question)}))
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
    own = navi.new_session(anonymous=True, headers=mallory)
    async with navi.socket(own, anonymous=True, additional_headers=mallory) as ws:  # their own: heard
        await ws.send(json.dumps({"type": "voice", "audio": b64(question), "send": False}))
        assert "paris" in words((await frames_until(ws, "transcript", within=120))[-1]["text"])
    with navi.client() as http:  # and nothing of it in the owner's session
        assert http.get(f"/sessions/{sid}").json()["messages"] == []


async def test_a_flood_of_clips_is_refused_not_kept() -> None:
    """Each waiting clip holds its bytes: past `MAX_WAITING` on one connection a clip is refused at
    once (`voice_busy`), and the ones taken are heard in order. (A voice service that holds every
    transcription until the test lets it go, to make the wait exact.)"""
    from navi.api.voice_frames import MAX_WAITING, VoiceSocket
    from navi.protocol import VoiceFrame
    from navi.voice import Transcript as Heard

    release = asyncio.Event()
    heard: list[str] = []

    class HeldVoice:
        async def transcribe(self, data: bytes, **_: Any) -> Heard:
            await release.wait()
            heard.append(data.decode())
            return Heard(data.decode(), "en", 1.0)

    sent: list[dict[str, Any]] = []
    words_sent: list[str] = []

    async def send(text: str, mode: str) -> None:
        words_sent.append(text)

    socket = VoiceSocket(HeldVoice(), sent.append)  # type: ignore[arg-type]
    for n in range(MAX_WAITING + 3):
        socket.hear(VoiceFrame(audio=b64(f"clip {n}".encode())), send)
    assert [f["code"] for f in sent] == ["voice_busy"] * 3
    release.set()
    await asyncio.gather(*socket._tasks)  # the clips taken, heard
    assert heard == words_sent == [f"clip {n}" for n in range(MAX_WAITING)]
    assert [f["text"] for f in sent if f["type"] == "transcript"] == heard
    await socket.close()


class _SaidVoice:
    """A voice service that 'speaks' a sentence as its own bytes, at once (the order and the
    choice of sentences are what these tests look at, not the audio)."""

    warmed = 0

    async def speak(self, text: str, *, fmt: str = "mp3", **_: Any) -> Any:
        from navi.voice import Speech

        return Speech(text.encode(), "audio/mpeg", fmt)

    async def warm_speaker(self) -> None:
        self.warmed += 1


async def _drain(socket: Any, sent: list[dict[str, Any]], until: str = "speech_end") -> list[dict[str, Any]]:
    for _ in range(200):
        if any(f["type"] == until for f in sent):
            break
        await asyncio.sleep(0.01)
    return sent


def _spoken(sent: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(f["index"], base64.b64decode(f["audio"]).decode()) for f in sent if f["type"] == "speech"]


async def test_an_answer_streaming_when_speaking_goes_on_is_read_from_its_current_sentence() -> None:
    """`speak` switched on in the middle of an answer: the sentence streaming then is the first
    read (its place in the answer kept); on exactly after a sentence ended: the next one."""
    from navi.api.voice_frames import VoiceSocket
    from navi.protocol import SpeakFrame

    for before, first in (
        ("One is done. Two is half", "Two is halfway there."),  # mid-sentence: that sentence
        ("One is done. Two is halfway there. ", "Three comes last."),  # at a boundary: the next
    ):
        sent: list[dict[str, Any]] = []
        socket = VoiceSocket(_SaidVoice(), sent.append)  # type: ignore[arg-type]
        rest = "One is done. Two is halfway there. Three comes last."[len(before) :]
        seq = 0

        def frame(kind: str, socket: Any = socket, **fields: Any) -> None:
            nonlocal seq
            seq += 1
            socket.tap({"type": kind, "run_id": "r1", "seq": seq, **fields})

        frame("stream_start")
        for piece in (before[:9], before[9:]):
            frame("stream_delta", delta=piece)
        socket.speak(SpeakFrame(on=True))
        frame("stream_delta", delta=rest)
        frame("stream_end", content=before + rest)
        await _drain(socket, sent)
        spoken = _spoken(sent)
        assert [text for _, text in spoken] == list(dict.fromkeys([first, "Three comes last."]))
        assert spoken[0][0] == (1 if first.startswith("Two") else 2)  # its place in the whole answer
        assert sent[-1] == {"type": "speech_end", "run_id": "r1", "sentences": len(spoken), "reason": "done"}
        await socket.close()


async def test_barge_in_is_final_but_speaking_switched_off_and_on_reads_on() -> None:
    from navi.api.voice_frames import VoiceSocket
    from navi.protocol import SpeakFrame

    sent: list[dict[str, Any]] = []
    voice = _SaidVoice()
    socket = VoiceSocket(voice, sent.append)  # type: ignore[arg-type]
    seq = 0

    def frame(run: str, kind: str, **fields: Any) -> None:
        nonlocal seq
        seq += 1
        socket.tap({"type": kind, "run_id": run, "seq": seq, **fields})

    socket.speak(SpeakFrame(on=True))
    frame("a", "stream_start")
    frame("a", "stream_delta", delta="First of a. Second of a. Third")
    await _drain(socket, sent, "speech")
    socket.speak(SpeakFrame(on=False))  # off: stopped…
    frame("a", "stream_delta", delta=" of a. Fourth")
    socket.speak(SpeakFrame(on=True))  # …and on again: read on from the streaming sentence
    frame("a", "stream_delta", delta=" of a. Fifth of a. ")
    for _ in range(100):
        if "Fifth of a." in [text for _, text in _spoken(sent)]:
            break
        await asyncio.sleep(0.01)
    socket.speak(SpeakFrame(on=True))  # barge-in while on: that answer is over for this connection
    frame("a", "stream_delta", delta=" Sixth of a.")
    frame("a", "stream_end")
    frame("b", "stream_start")  # the next answer is read whole
    frame("b", "stream_delta", delta="All of b.")
    frame("b", "stream_end")
    for _ in range(200):
        if [f for f in sent if f["type"] == "speech_end" and f["run_id"] == "b"]:
            break
        await asyncio.sleep(0.01)
    spoken = [
        (f["run_id"], f["index"], base64.b64decode(f["audio"]).decode())
        for f in sent
        if f["type"] == "speech"
    ]
    assert spoken[0] == ("a", 0, "First of a.")
    assert ("a", 3, "Fourth of a.") in spoken and ("a", 4, "Fifth of a.") in spoken
    assert all(text != "Sixth of a." for _, _, text in spoken)  # not after the barge-in
    assert spoken[-1] == ("b", 0, "All of b.")
    ends = [(f["run_id"], f["reason"]) for f in sent if f["type"] == "speech_end"]
    assert ends == [("a", "stopped"), ("a", "stopped"), ("b", "done")]
    assert socket._answers == {}  # nothing kept of answers that ended
    assert voice.warmed == 1  # the voice was readied once, when speaking first went on
    await socket.close()


async def test_the_voice_is_warmed_once_when_speech_is_first_asked_for() -> None:
    """`speak` readies the local voice (loaded, one short run) off the loop, once per process."""
    import numpy as np

    from navi.voice import Voice
    from navi.voice.tts import PiperEngine

    class Counted(PiperEngine):
        loads = runs = 0

        def load(self) -> None:
            self.loads += 1

        def synthesize(self, text: str, speed: float = 1.0) -> Any:
            self.runs += 1
            return np.full(2205, 0.1, dtype=np.float32), 22050

    engine = Counted()
    voice = Voice(None, engine)
    await asyncio.gather(voice.warm_speaker(), voice.warm_speaker())
    await voice.warm_speaker()
    assert (engine.loads, engine.runs) == (1, 1)
    assert (await voice.speak("Now for real.", fmt="wav")).audio[:4] == b"RIFF"
    assert engine.runs == 2
    voice.close()


async def test_an_answer_spoken_from_its_start_begins_with_its_first_clause() -> None:
    """The first audio is the first sentence's first clause, spoken before that sentence has
    finished streaming; a mid-answer join does not cut (it starts at a sentence's start anyway)."""
    from navi.api.voice_frames import VoiceSocket
    from navi.protocol import SpeakFrame

    sent: list[dict[str, Any]] = []
    socket = VoiceSocket(_SaidVoice(), sent.append)  # type: ignore[arg-type]
    socket.speak(SpeakFrame(on=True))
    socket.tap({"type": "stream_start", "run_id": "r", "seq": 1})
    socket.tap(
        {"type": "stream_delta", "run_id": "r", "seq": 2, "delta": "Based on the forecast for Paris, exp"}
    )
    await _drain(socket, sent, "speech")
    assert _spoken(sent) == [(0, "Based on the forecast for Paris,")]  # the sentence is not over yet
    socket.tap({"type": "stream_delta", "run_id": "r", "seq": 3, "delta": "ect sun, all day. More, later."})
    socket.tap({"type": "stream_end", "run_id": "r", "seq": 4})
    await _drain(socket, sent)
    assert _spoken(sent) == [
        (0, "Based on the forecast for Paris,"),
        (1, "expect sun, all day."),
        (2, "More, later."),
    ]
    await socket.close()
