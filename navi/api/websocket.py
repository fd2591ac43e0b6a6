"""The streaming protocol: `ws://host/ws/sessions/{id}`.

One task per connection receives client frames; one sends everything the client gets (run frames,
`session_updated` frames and error frames) from a single outbox, so sends never interleave. A bad
frame gets an `error` frame (code `bad_frame`) and the socket stays open. Connecting while a run is
going replays that turn's frames so far, then continues live (`?since=N&run=ID` skips frames the
client already has of run ID; a different run is replayed whole; a `since` that is not a count gets
`bad_frame` and the socket is closed, 4400). A connection lets go of each run when the run's
frames end.

Every frame is typed in `navi.protocol`: client frames are read with `parse_client_frame` (then
images and files are checked against this server), and every frame sent is built from a model.
Client frames: `{"type": "message", "content", "images"?, "files"?, "mode"?}` starts a turn, or
while one runs waits in the session's queue (`mode` "queue", the default: `queued`) or steers the
running turn ("steer"); `queue_edit` and `queue_cancel` change a waiting message;
`{"type": "retry"}` runs the session's latest failed turn again without storing its message twice;
`{"type": "approval", "call_id", "decision"}` answers a tool call waiting for approval ("allow",
"deny" or "always"). An answer nothing waits for gets an `error` frame, code `approval_not_found`.
`{"type": "elicitation", "elicitation_id", "action", "content"}` answers an MCP server's question
(`elicitation_required`); `elicitation_not_found` or `bad_answer` when it cannot be used.
`edit`, `regenerate` and `switch` move the session to another branch, `continue` goes on with an
answer the token cap cut off (navi/api/branch_frames.py). `voice` (a spoken message) and `speak`
(answers read aloud on this connection) are navi/api/voice_frames.py's.

A socket outlives its handshake's check, so it checks its credentials again before it acts on
any frame, and is closed with 4401 once they no longer let it in — a sign-out, the user removed,
found by that check or by the announcements and rounds of navi/api/sockets.py. From that moment
nothing more is sent on it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from navi import safejson
from navi.agent.gate import ApprovalNotFound
from navi.agent.turns import NewMessage, Retry
from navi.api import branch_frames
from navi.api.identity import Recheck, recheck_of, user_of
from navi.api.sockets import CLOSE_SIGNED_OUT, SIGNED_OUT, OpenSockets
from navi.api.voice_frames import VoiceSocket
from navi.compose import Runtime
from navi.compose.server import ServerConfig
from navi.llm.attached import AttachedFile
from navi.llm.messages import strip_data_uri
from navi.mcp.elicitation import ElicitationInvalid, ElicitationNotFound
from navi.protocol import (
    MAX_IMAGES,
    ApprovalFrame,
    BadFrame,
    ContinueFrame,
    Decision,
    EditFrame,
    ElicitationFrame,
    ErrorCode,
    ErrorEvent,
    FileRef,
    MessageFrame,
    QueueCancelFrame,
    QueueEditFrame,
    QueueMode,
    RegenerateFrame,
    RetryFrame,
    Sender,
    SpeakFrame,
    SwitchFrame,
    VisibilityFrame,
    VoiceFrame,
    parse_client_frame,
)
from navi.runs import RunActive, RunManager, Subscriber
from navi.runs.follow import Watch
from navi.runs.queue import QueueFull
from navi.runs.queueing import NotQueued
from navi.sessions.models import is_session_id
from navi.storage.files import SharedFiles

log = structlog.stdlib.get_logger(__name__)
router = APIRouter()

MAX_FRAME_BYTES = 16 * 1024 * 1024
MAX_IMAGE_BYTES = 15 * 1024 * 1024
IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"BM")
CLOSE_UNKNOWN_SESSION = 4004
CLOSE_BAD_REQUEST = 4400  # the address's query is unusable (after a `bad_frame` error frame)
MAX_SINCE_DIGITS = 9  # a run never gets near a billion frames
MAX_SHARED_FILES = 100  # files of one message looked up among other machines' uploads
CLOSE_UNCHECKED = 1011  # the credentials could not be checked (the database): reconnect
CLOSE_WAIT = 5.0  # seconds the writer gets to close a socket that is ending


FrameError = BadFrame  # the name the API's modules catch


def _error(message: str, code: ErrorCode) -> dict[str, Any]:
    return ErrorEvent(message=message, code=code).frame()


@dataclass
class CheckedFrame:
    """A client frame, parsed (`navi.protocol`) and checked against this server: images decoded,
    files found among the session's uploads."""

    kind: str  # "message", "retry", "approval", "queue_edit" or "queue_cancel"
    content: str = ""
    images: list[str] = field(default_factory=list)
    files: list[AttachedFile] = field(default_factory=list)
    call_id: str = ""  # an approval's call
    decision: Decision = "deny"  # an approval's answer
    elicitation: ElicitationFrame | None = None  # an answer to an MCP server's question
    mode: QueueMode = "queue"  # a message's, while a turn runs
    message_id: str = ""  # the message an edit, regenerate, switch, queue_edit or queue_cancel names
    sender: Sender | None = None  # a message's name, location and metadata
    visible: bool = False  # a visibility frame's
    said: VoiceFrame | SpeakFrame | None = None  # a voice or speak frame, as parsed


def read_frame(text: str, session_id: str, files_root: Path) -> CheckedFrame:
    """Validate a client frame or raise `FrameError`."""
    if len(text.encode()) > MAX_FRAME_BYTES:
        raise FrameError(f"frame too large (limit {MAX_FRAME_BYTES // (1024 * 1024)} MB)")
    try:
        data = safejson.loads(text)  # lone surrogates and NUL become U+FFFD: storable, sendable
    except safejson.UnsafeJSON as exc:
        raise FrameError(f"frame is not usable: {exc}") from None
    except ValueError:
        raise FrameError("frame is not valid JSON") from None
    frame = parse_client_frame(data)
    if isinstance(frame, RetryFrame):
        return CheckedFrame("retry")
    if isinstance(frame, VisibilityFrame):
        return CheckedFrame("visibility", visible=frame.visible)
    if isinstance(frame, VoiceFrame | SpeakFrame):
        return CheckedFrame(frame.type, said=frame)
    if isinstance(frame, ApprovalFrame):
        return CheckedFrame("approval", call_id=frame.call_id, decision=frame.decision)
    if isinstance(frame, ElicitationFrame):
        return CheckedFrame("elicitation", elicitation=frame)
    if isinstance(frame, EditFrame | RegenerateFrame | SwitchFrame | ContinueFrame):
        content = frame.content if isinstance(frame, EditFrame) else ""
        return CheckedFrame(frame.type, content, message_id=frame.message_id)
    if isinstance(frame, QueueEditFrame | QueueCancelFrame):
        return CheckedFrame(frame.type, getattr(frame, "content", ""), message_id=frame.message_id)
    said = checked_message(frame, session_id, files_root, frame.sender())
    images, files = list(said.images), list(said.files)
    mode = frame.mode or "queue"
    return CheckedFrame("message", said.content, images, files, mode=mode, sender=said.sender)


def checked_message(
    frame: MessageFrame, session_id: str, files_root: Path, sender: Sender | None = None
) -> NewMessage:
    """A message frame (a socket's, or REST's fields parsed as one: `parse_message`) checked
    against this server — images decoded, files found among the session's uploads — as the
    message to answer, or `FrameError`."""
    images = check_images(frame.images)
    return NewMessage(frame.content, images, _files(frame.files or [], files_root / session_id), sender)


async def bring_files(shared: SharedFiles | None, text: str, session_id: str, files_root: Path) -> bool:
    """Bring to this machine the files a message names that were uploaded through a worker on
    another one (where workers share a PostgreSQL database); True when any came, and the frame is
    worth checking again. Anything unreadable brings nothing: the frame's own check says why."""
    if shared is None or len(text) > MAX_FRAME_BYTES:
        return False
    try:
        frame = safejson.loads(text)
        files = frame.get("files") if isinstance(frame, dict) else None
        if not isinstance(files, list):
            return False
        wanted = [
            f["path"]
            for f in files[:MAX_SHARED_FILES]
            if isinstance(f, dict) and isinstance(f.get("path"), str)
        ]
        return await shared.bring(session_id, files_root / session_id, [Path(p).name for p in wanted]) > 0
    except Exception as exc:  # a frame no check foresaw, or the database: the frame's check answers
        log.warning("ws.files_not_brought", session_id=session_id, error=str(exc))
        return False


def since_param(raw: str | None) -> int:
    """`?since=N`: frames the client already has; absent means none. Anything but a plain count
    of at most `MAX_SINCE_DIGITS` ASCII digits (empty, negative, `1.5`, `²`, a control character,
    5,000 digits) is a `FrameError`: the connection gets `bad_frame` and is closed."""
    if raw is None:
        return 0
    if not raw.isascii() or not raw.isdigit() or len(raw) > MAX_SINCE_DIGITS:
        raise FrameError(
            f"since must be a count of frames already received: 1 to {MAX_SINCE_DIGITS} digits "
            "(leave it out to get the running turn from its start)"
        )
    return int(raw)


def check_images(raw: Any) -> list[str]:
    """Images as a client sends them (base64 or data: URIs), checked (count, size, kind) and
    returned as bare base64; `FrameError` says what is wrong."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_IMAGES:
        raise FrameError(f"images must be a list of at most {MAX_IMAGES} base64 strings")
    images = []
    for i, item in enumerate(raw):
        if not isinstance(item, str):
            raise FrameError(f"images[{i}] must be a base64 string")
        data = strip_data_uri(item).strip()
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise FrameError(f"images[{i}] is not valid base64") from None
        if len(decoded) > MAX_IMAGE_BYTES:
            raise FrameError(f"images[{i}] is larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB")
        if not decoded.startswith(IMAGE_MAGIC):
            raise FrameError(f"images[{i}] is not a PNG, JPEG, GIF, WebP or BMP image")
        images.append(data)
    return images


def _files(refs: list[FileRef], folder: Path) -> list[AttachedFile]:
    """The message's files, each of which must be a file uploaded to this session (a file the
    frame does not name is named as on disk)."""
    root = folder.resolve()
    files = []
    for i, ref in enumerate(refs):
        path = Path(ref.path)
        try:
            real = path.resolve()
            uploaded = real.is_relative_to(root) and real.is_file()
        except (OSError, ValueError):  # a name too long for the file system, and the like
            uploaded = False
        if not uploaded:
            raise FrameError(f"files[{i}] is not a file uploaded to this session")
        files.append(AttachedFile(name=ref.name or path.name, path=ref.path))
    return files


@dataclass
class Ending:
    """Put in the outbox to end the socket: from then on nothing more is sent on it, and the writer
    closes it with `code`."""

    code: int = 0
    reason: str = ""


JOINABLE = frozenset({"stream_delta", "thinking_delta"})
JOIN_BACKLOG = 16  # frames waiting behind a delta: the socket is behind, not in a short burst
JOIN_LIMIT = 32_768  # characters of text in one joined frame


def _joined(frame: dict[str, Any], outbox: asyncio.Queue[Any]) -> tuple[dict[str, Any], Any]:
    """`frame` with the deltas waiting right behind it (same type, same run) joined on, and the
    first waiting item that could not be joined (None when the outbox ran empty)."""
    parts, last, size = [frame["delta"]], frame, len(frame["delta"])
    while not outbox.empty() and size < JOIN_LIMIT:
        nxt = outbox.get_nowait()
        same = isinstance(nxt, dict) and nxt.get("type") == frame["type"]
        if not (same and nxt.get("run_id") == frame.get("run_id")):
            return (_with_delta(last, parts) if len(parts) > 1 else frame), nxt
        parts.append(nxt["delta"])
        size += len(nxt["delta"])
        last = nxt
    return (_with_delta(last, parts) if len(parts) > 1 else frame), None


def _with_delta(last: dict[str, Any], parts: list[str]) -> dict[str, Any]:
    return {**last, "delta": "".join(parts)}  # a new dict: frames are shared by every socket


async def _sender(
    websocket: WebSocket,
    outbox: asyncio.Queue[Any],
    ending: Ending | None = None,
    tap: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """The only task that writes to the socket: run frames and error frames, in order, until the
    socket is `ending` (signed out): then it closes it, and whatever still waits is never sent.

    A socket that keeps up gets one frame per delta. One that is behind (`JOIN_BACKLOG` frames
    waiting) gets the waiting deltas of one run joined into one frame, carrying the last one's
    `seq`: fewer, larger writes, the same text. `tap` sees every frame as it is sent (speech)."""
    ending = ending or Ending()
    held: Any = None
    while True:
        frame, held = (held, None) if held is not None else (await outbox.get(), None)
        if ending.code:
            await websocket.close(code=ending.code, reason=ending.reason)
            return
        if isinstance(frame, dict) and frame.get("type") in JOINABLE and outbox.qsize() >= JOIN_BACKLOG:
            frame, held = _joined(frame, outbox)
        if isinstance(frame, Subscriber):  # the end of a run's frames; the connection stays open
            frame.close()
            if frame.dropped:
                await websocket.send_text(
                    json.dumps(_error("this connection fell too far behind; reconnect", "too_slow"))
                )
                await websocket.close(code=1013)
                return
            continue
        if tap is not None:
            tap(frame)
        await websocket.send_text(json.dumps(frame))


async def _send_or_queue(
    runs: RunManager, session_id: str, owner: str, frame: CheckedFrame
) -> dict[str, Any] | None:
    """A message runs now or waits in the queue (`queued` goes to every connection); a waiting
    message is edited or cancelled. The `error` frame refusing it, if it is refused."""
    try:
        if frame.kind == "queue_edit":
            await runs.queueing.edit(session_id, owner, frame.message_id, frame.content)
        elif frame.kind == "queue_cancel":
            await runs.queueing.cancel(session_id, owner, frame.message_id)
        else:
            message = NewMessage(frame.content, frame.images, frame.files, frame.sender)
            await runs.queueing.send(session_id, owner, message, mode=frame.mode)
    except NotQueued as exc:
        return _error(str(exc), "not_queued")
    except QueueFull as exc:
        return _error(str(exc), "queue_full")
    return None


async def _still_let_in(recheck: Recheck, end: Callable[[int, str], None]) -> bool:
    """Whether the socket's credentials still let it in; if not, the socket is ending (4401, or
    1011 when they could not be checked: a frame is never acted on unchecked)."""
    try:
        if await recheck():
            return True
        end(CLOSE_SIGNED_OUT, SIGNED_OUT)
    except Exception as exc:
        log.warning("ws.recheck_failed", error=str(exc))
        end(CLOSE_UNCHECKED, "the sign-in could not be checked; reconnect")
    return False


async def _elicitation_answer(runs: RunManager, sid: str, frame: ElicitationFrame) -> dict[str, Any] | None:
    """Deliver an answer to an MCP server's question, wherever its run waits; the refusal, or None."""
    try:
        await runs.controls.answer_question(sid, frame.elicitation_id, frame.action, frame.content)
    except ElicitationNotFound as exc:
        return ErrorEvent(
            message=str(exc), code="elicitation_not_found", elicitation_id=frame.elicitation_id
        ).frame()
    except ElicitationInvalid as exc:
        return ErrorEvent(message=str(exc), code="bad_answer", elicitation_id=frame.elicitation_id).frame()
    return None


async def _seen(runtime: Runtime, page: str, user: str, visible: bool | None) -> None:
    """The page's visibility kept for every worker (None: the page is gone); a database that does
    not answer costs a notification's accuracy, never the socket."""
    try:
        if visible is None:
            await runtime.presence.gone(page)
        else:
            await runtime.presence.seen(page, user, visible)
    except Exception as exc:
        log.warning("ws.presence_not_kept", error=f"{type(exc).__name__}: {exc}")


@router.websocket("/ws/sessions/{session_id}")
async def session_socket(websocket: WebSocket, session_id: str) -> None:
    runtime: Runtime = websocket.app.state.runtime
    runs: RunManager = websocket.app.state.runs
    config: ServerConfig = websocket.app.state.config
    shared: SharedFiles | None = websocket.app.state.services.files
    sockets: OpenSockets = websocket.app.state.sockets
    user = user_of(websocket.scope)
    recheck, credential = recheck_of(websocket.scope)
    await websocket.accept()
    # Another user's session closes like one that does not exist.
    found = None
    if is_session_id(session_id):
        found = await runtime.sessions.get(session_id, owner=user, display=False)
    if found is None:
        await websocket.close(code=CLOSE_UNKNOWN_SESSION, reason="session not found")
        return
    try:
        since = since_param(websocket.query_params.get("since"))
    except FrameError as exc:  # said at once and closed: nothing else would ever come
        await websocket.send_text(json.dumps(_error(str(exc), "bad_frame")))
        await websocket.close(code=CLOSE_BAD_REQUEST, reason="bad since")
        return
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    ending = Ending()
    voice = VoiceSocket(runtime.voice, outbox.put_nowait)
    sender = asyncio.create_task(_sender(websocket, outbox, ending, voice.tap))

    def end(code: int = CLOSE_SIGNED_OUT, reason: str = SIGNED_OUT) -> None:
        if not ending.code:
            ending.code, ending.reason = code, reason
            outbox.put_nowait(ending)  # wakes the writer, which sends nothing more

    watched = sockets.add(user, recheck, credential, end)

    async def say(text: str, mode: QueueMode) -> dict[str, Any] | None:  # a voice frame's words
        if not await _still_let_in(recheck, end):
            return None  # signed out while the clip was heard: nothing is sent
        return await _send_or_queue(runs, session_id, found.owner, CheckedFrame("message", text, mode=mode))

    watch: Watch | None = None  # the session's runs, followed into the outbox
    files_root = config.uploads.root
    page = uuid.uuid4().hex  # this connection, as a page whose visibility counts (navi/push/presence.py)
    try:  # from here on, whatever happens, the finally lets go of the watcher and the feed
        runs.feed.join(outbox.put_nowait, user)  # session_updated frames of this user's sessions
        # Its runs, wherever they run: `since` counts frames of the run named by `run` (when
        # given): a client that saw frames of an earlier run gets what it missed of that one while
        # its frames are kept (it ended while the client was away), then the whole of the current one.
        watch = await runs.followers.watch(session_id, outbox, since, websocket.query_params.get("run"))
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            if not await _still_let_in(recheck, end):
                break  # a revoked sign-in or a removed user: the frame is not acted on
            text = message.get("text")
            if text is None:
                data = message.get("bytes") or b""
                text = (
                    data.decode("utf-8", errors="replace")
                    if len(data) <= MAX_FRAME_BYTES
                    else "x" * (MAX_FRAME_BYTES + 1)
                )
            try:
                try:
                    frame = read_frame(text, session_id, files_root)
                except FrameError:  # its files may have been uploaded through another machine
                    if not await bring_files(shared, text, session_id, files_root):
                        raise
                    frame = read_frame(text, session_id, files_root)
            except FrameError as exc:
                outbox.put_nowait(_error(str(exc), "bad_frame"))
                continue
            except Exception:  # a frame no check foresaw: an error for it, never the socket
                log.exception("ws.frame_unreadable", session_id=session_id)
                outbox.put_nowait(_error("the frame could not be read", "bad_frame"))
                continue
            if frame.kind == "visibility":
                await _seen(runtime, page, user, frame.visible)
                continue
            if isinstance(frame.said, VoiceFrame):
                voice.hear(frame.said, say)
                continue
            if isinstance(frame.said, SpeakFrame):
                voice.speak(frame.said)
                continue
            if frame.kind == "approval":
                try:  # the run's approval_resolved frame reaches every client, this one too
                    await runs.controls.approve(session_id, frame.call_id, frame.decision)
                except ApprovalNotFound as exc:
                    refusal = ErrorEvent(message=str(exc), code="approval_not_found", call_id=frame.call_id)
                    outbox.put_nowait(refusal.frame())
                continue
            if frame.elicitation is not None:  # the run's elicitation_resolved reaches every client
                if refused := await _elicitation_answer(runs, session_id, frame.elicitation):
                    outbox.put_nowait(refused)
                continue
            if frame.kind in branch_frames.KINDS:
                await branch_frames.act(
                    runs, session_id, user, frame.kind, frame.message_id, frame.content, outbox.put_nowait
                )
                continue
            if frame.kind == "retry":
                try:  # every watcher (this connection too) follows the run
                    await runs.start(session_id, Retry())
                except RunActive as exc:
                    outbox.put_nowait(_error(str(exc), "busy"))
                continue
            if queue_error := await _send_or_queue(runs, session_id, found.owner, frame):  # run now, or wait
                outbox.put_nowait(queue_error)
    except WebSocketDisconnect:
        pass
    finally:
        sockets.discard(watched)
        await voice.close()
        await _seen(runtime, page, user, None)
        if watch is not None:
            await runs.followers.unwatch(watch)
        runs.feed.leave(outbox.put_nowait)
        if ending.code and not sender.done():  # the writer closes the socket with the code
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(sender), CLOSE_WAIT)
        sender.cancel()  # this connection's writer, never the run
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
