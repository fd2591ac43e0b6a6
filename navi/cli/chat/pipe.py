"""`navi chat` in a pipe: the message from stdin, the answer's text on stdout, nothing else.

No prompt, colours or status lines; problems go to stderr as one line, and the exit status says
how it went (0 answered, 1 failed or stopped, 130 stopped with Ctrl-C). A call that needs approval
is said on stderr and waits, like the turn, for an answer from another client (or the timeout).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from navi.cli.chat.connection import NotConnected, SessionConnection
from navi.cli.chat.history import final_answer
from navi.cli.chat.keys import interrupt_handler
from navi.cli.remote import Remote, RemoteError

AWAY_GRACE = 1.5


def _err(text: str) -> None:
    print(f"navi: {text}", file=sys.stderr, flush=True)


async def _resync(remote: Remote, session_id: str, inbox: asyncio.Queue[dict[str, Any]]) -> None:
    try:
        detail = await remote.session(session_id)
    except RemoteError:
        return
    if not detail.get("active"):
        await asyncio.sleep(AWAY_GRACE)
        inbox.put_nowait({"type": "_away", "detail": detail})


async def pipe(remote: Remote, session_id: str, text: str) -> int:
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    conn = SessionConnection(remote.target, session_id, inbox)
    conn.start()
    written = ""
    started = False
    stopping = False
    dropped = False
    checks: set[asyncio.Task[None]] = set()

    def write(part: str) -> None:
        nonlocal written
        written += part
        sys.stdout.write(part)
        sys.stdout.flush()

    def later(coro: Any) -> None:
        task = asyncio.create_task(coro)
        checks.add(task)
        task.add_done_callback(checks.discard)

    try:
        try:
            await conn.send({"type": "message", "content": text})
        except NotConnected as exc:
            _err(f"{exc} (the message was not sent)")
            return 1
        with interrupt_handler(lambda: inbox.put_nowait({"type": "_interrupt"})):
            while True:
                frame = await inbox.get()
                kind = frame.get("type")
                if kind == "_interrupt":
                    if stopping or not started:
                        return 130
                    stopping = True
                    later(remote.stop(session_id))
                elif kind == "_connection":
                    if frame["state"] == "open" and dropped:  # a reconnect, not the first open
                        later(_resync(remote, session_id, inbox))
                    dropped = frame["state"] == "reconnecting"
                elif kind == "_gone":
                    _err(frame["message"])
                    return 1
                elif kind == "_away":
                    answer = final_answer(frame["detail"].get("messages") or [])
                    write(answer[len(written) :] if answer.startswith(written) else "\n" + answer)
                    break
                elif kind == "error" and (frame.get("seq") is None or not started):
                    if frame.get("code") == "approval_not_found":
                        continue
                    _err(str(frame.get("message", "the message was refused")))
                    return 1
                elif kind == "stream_start":
                    started = True
                elif not started:
                    continue
                elif kind == "stream_delta":
                    write(str(frame.get("delta", "")))
                elif kind == "approval_required":
                    _err(
                        f"{frame.get('tool')} waits for approval ({frame.get('reason')}) — answer it in "
                        f"`navi chat {session_id}` or the web page"
                    )
                elif kind == "elicitation_required":
                    _err(
                        f"the MCP server '{frame.get('server')}' asks: {frame.get('message')} — answer it in "
                        f"`navi chat {session_id}` or the web page"
                    )
                elif kind == "stream_end":
                    if not written and frame.get("content"):
                        write(str(frame["content"]))
                    break
                elif kind == "stream_stopped":
                    if written and not written.endswith("\n"):
                        sys.stdout.write("\n")
                    _err("the reply was stopped")
                    return 130 if stopping else 1
                elif kind == "error":
                    if written and not written.endswith("\n"):
                        sys.stdout.write("\n")
                    _err(str(frame.get("message", "the turn failed")))
                    return 1
        if not written.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        return 0
    finally:
        for task in list(checks):
            task.cancel()
        await conn.close()
