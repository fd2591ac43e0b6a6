"""The `voice` and `speak` client frames of the streaming protocol (docs/api.md#voice-on-the-socket).

`voice`: a clip (base64 in the frame) is transcribed by the
voice service (navi/voice, off the event loop, through its bounded queue) and the words go back as
`transcript` to this connection; with `send` they go on as the next message, exactly as a
`message` frame's would. The receive loop never waits for it: a connection's clips are heard one
after the other on a task of their own, so approvals and stops still get through meanwhile.

`speak`: while on, every answer this connection sees is followed as its frames are written to
the socket (`tap`), cut into sentences (navi/voice/speakable.py), each spoken as soon as it is
complete and sent as a `speech` frame, then `speech_end`. An answer already streaming when speaking
is switched on is read from the sentence that is streaming then (the connection keeps the text of
the answers it is sending, so it knows where that sentence starts). Sent again while on, it drops
what is left of the answers being spoken (barge-in); those are not read again. Speech goes to this
connection only.

A voice error is an `error` frame of no turn with the same code as the /v1/audio routes'.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from navi.llm.messages import strip_data_uri
from navi.protocol import (
    ErrorCode,
    ErrorEvent,
    QueueMode,
    SpeakFrame,
    SpeechChunk,
    SpeechEnd,
    SpeechFormat,
    Transcript,
    VoiceFrame,
)
from navi.voice import AudioError, RemoteVoiceError, Voice, VoiceBusy, VoiceUnavailable
from navi.voice.speakable import Sentences

log = structlog.stdlib.get_logger(__name__)

KINDS = frozenset({"voice", "speak"})
MAX_WAITING = 4  # clips of one connection waiting to be heard; one more is refused (`voice_busy`)
ENDS = frozenset({"stream_end", "stream_stopped", "error"})
Send = Callable[[str, QueueMode], Awaitable[dict[str, Any] | None]]


def _error(message: str, code: ErrorCode) -> dict[str, Any]:
    return ErrorEvent(message=message, code=code).frame()


def voice_error(exc: Exception) -> dict[str, Any]:
    """A voice failure as an `error` frame (the /v1/audio routes' codes)."""
    if isinstance(exc, AudioError):
        return _error(str(exc), exc.code)  # type: ignore[arg-type]  # the five codes AudioError has
    if isinstance(exc, VoiceBusy):
        return _error(str(exc), "voice_busy")
    if isinstance(exc, VoiceUnavailable):
        return _error(str(exc), "voice_unavailable")
    if isinstance(exc, RemoteVoiceError):
        return _error(str(exc), "voice_server_failed")
    return _error(str(exc), "bad_frame")


def _clip(frame: VoiceFrame) -> bytes:
    try:  # at most the frame's 16 MB: quick, on the loop
        return base64.b64decode(strip_data_uri(frame.audio).strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("audio is not valid base64") from None


@dataclass
class _Answer:
    """One answer this connection is sending: its text so far and, while it is being spoken, its
    sentences (None: not spoken now) and how many were queued and sent."""

    text: list[str] = field(default_factory=list)
    sentences: Sentences | None = None
    queued: int = 0
    sent: int = 0
    failed: bool = False
    silenced: bool = False  # a barge-in stopped it: never read again on this connection
    ended: bool = False

    def join(self) -> None:
        """Spoken from here on: from the sentence streaming now (the ones complete are skipped).
        From the start, the first sentence's first clause is a piece of its own: the first audio
        comes sooner."""
        self.sentences = Sentences(first_clause=not self.text)
        self.queued = len(self.sentences.feed("".join(self.text)))
        self.failed = False


class VoiceSocket:
    """A connection's voice: clips heard in order, answers spoken while `speak` is on. `put`
    queues a frame for the connection's writer."""

    def __init__(self, voice: Voice | None, put: Callable[[dict[str, Any]], None]) -> None:
        self.voice = voice
        self.put = put
        self.format: SpeechFormat | None = None  # speaking, in this format; None: not
        self._answers: dict[str, _Answer] = {}
        self._jobs: asyncio.Queue[tuple[str, int, str, int] | tuple[str, None, None, int]] = asyncio.Queue()
        self._generation = 0  # bumped by every `speak`: jobs of an older one are dropped
        self._hearing = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._speaker: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None

    def _unavailable(self) -> bool:
        if self.voice is None:
            self.put(_error("voice is not set up on this Navi", "voice_unavailable"))
            return True
        return False

    # --- voice: a clip heard --------------------------------------------------------------------

    def hear(self, frame: VoiceFrame, send: Send) -> None:
        """Transcribe `frame`'s clip on a task of its own; `send` sends its words on."""
        if self._unavailable():
            return
        if len(self._tasks) >= MAX_WAITING:  # each holds its clip: a flood costs an error, not memory
            self.put(_error(f"{MAX_WAITING} clips of this connection wait already", "voice_busy"))
            return
        task = asyncio.create_task(self._hear(frame, send))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _hear(self, frame: VoiceFrame, send: Send) -> None:
        assert self.voice is not None
        async with self._hearing:  # one clip at a time, in the order they came
            try:
                data = _clip(frame)
                heard = await self.voice.transcribe(data, language=frame.language, prompt=frame.prompt)
            except (AudioError, VoiceBusy, VoiceUnavailable, RemoteVoiceError, ValueError) as exc:
                self.put(voice_error(exc))
                return
            except Exception:  # a clip no check foresaw: an error for it, never the socket
                log.exception("ws.voice_failed")
                self.put(_error("the clip could not be transcribed", "internal"))
                return
            text = heard.text.strip()
            self.put(
                Transcript(
                    text=text, language=heard.language, duration=round(heard.duration, 3), sent=frame.send
                ).frame()
            )
            if frame.send and (refusal := await send(text, frame.mode or "queue")) is not None:
                self.put(refusal)

    # --- speak: answers read aloud --------------------------------------------------------------

    def speak(self, frame: SpeakFrame) -> None:
        """Speaking on (in `frame.format`) or off. Either way what is left of the answers being
        spoken is dropped; on while on is a barge-in: those answers are not read again. Switched on,
        the answers streaming now are read from their current sentence."""
        if frame.on and self._unavailable():
            return
        barge_in = frame.on and self.format is not None
        self._generation += 1
        for run_id, answer in list(self._answers.items()):
            if answer.sentences is not None:
                self.put(SpeechEnd(run_id=run_id, sentences=answer.sent, reason="stopped").frame())
                answer.sentences = None
                answer.silenced = answer.silenced or barge_in
            if answer.ended:
                del self._answers[run_id]
            elif frame.on and not answer.silenced:
                answer.join()
        self.format = frame.format if frame.on else None
        if frame.on and self._speaker is None:
            assert self.voice is not None
            self._warming = asyncio.create_task(self.voice.warm_speaker())  # the voice loads now
            self._speaker = asyncio.create_task(self._speak_all())

    def tap(self, frame: dict[str, Any]) -> None:
        """A frame about to be written to the socket: answers' text is kept, and followed into
        sentences while spoken."""
        if self.voice is None:
            return
        run_id, kind = frame.get("run_id"), frame.get("type")
        if not isinstance(run_id, str) or "seq" not in frame:
            return  # not a turn's frame (this module's own `speech` frames among them)
        if kind == "stream_start":
            self._answers[run_id] = started = _Answer()
            if self.format is not None:
                started.join()
            return
        answer = self._answers.get(run_id)
        if answer is None:
            return  # an answer that started before this connection saw it
        if kind == "stream_delta":
            delta = str(frame.get("delta", ""))
            answer.text.append(delta)
            if answer.sentences is not None:
                self._queue(run_id, answer, answer.sentences.feed(delta))
        elif kind in ENDS:
            answer.ended = True
            if answer.sentences is None:
                del self._answers[run_id]
                return
            self._queue(run_id, answer, answer.sentences.finish() if kind == "stream_end" else [])
            self._jobs.put_nowait((run_id, None, None, self._generation))

    def _queue(self, run_id: str, answer: _Answer, sentences: list[str]) -> None:
        for sentence in sentences:
            self._jobs.put_nowait((run_id, answer.queued, sentence, self._generation))
            answer.queued += 1

    async def _speak_all(self) -> None:
        """The connection's speaker: sentences synthesised one after the other, in order."""
        while True:
            run_id, index, text, generation = await self._jobs.get()
            answer = self._answers.get(run_id)
            if generation != self._generation or answer is None or answer.sentences is None:
                continue  # stopped since (barge-in, speaking off)
            if index is None or text is None:  # the answer is over
                del self._answers[run_id]
                ended = SpeechEnd(
                    run_id=run_id, sentences=answer.sent, reason="failed" if answer.failed else "done"
                )
                self.put(ended.frame())
                continue
            if answer.failed:
                continue
            fmt = self.format
            try:
                assert self.voice is not None and fmt is not None
                spoken = await self.voice.speak(text, fmt=fmt)
            except ValueError:  # nothing in it can be spoken ("…"): the next one
                continue
            except (VoiceBusy, VoiceUnavailable, RemoteVoiceError) as exc:
                answer.failed = True
                self.put(voice_error(exc))
                continue
            except Exception:
                log.exception("ws.speech_failed")
                answer.failed = True
                self.put(_error("the answer could not be spoken", "internal"))
                continue
            if generation != self._generation:
                continue  # stopped while it was being spoken
            audio = base64.b64encode(spoken.audio).decode("ascii")
            self.put(SpeechChunk(run_id=run_id, index=index, text=text, format=fmt, audio=audio).frame())
            answer.sent += 1

    async def close(self) -> None:
        """The connection is over: whatever is being heard or spoken for it stops."""
        tasks = [*self._tasks, *(t for t in (self._speaker, self._warming) if t is not None)]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
