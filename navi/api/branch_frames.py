"""The `edit`, `regenerate`, `switch` and `continue` client frames of the streaming protocol
(navi/runs/branching.py does the work). A refusal is an `error` frame of no turn: `busy` while a
turn runs, `message_not_found` for a message the session does not hold, `bad_frame` for one that
cannot be edited or answered again, `nothing_to_continue` for a continue of anything but the
latest answer the token cap cut off."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from navi.protocol import ErrorCode, ErrorEvent
from navi.runs import RunActive, RunManager, branching
from navi.sessions.store import SessionNotFound
from navi.sessions.tree import BranchNotFound

KINDS = frozenset({"edit", "regenerate", "switch", "continue"})


async def act(
    runs: RunManager,
    session_id: str,
    owner: str,
    kind: str,
    message_id: str,
    content: str,
    send: Callable[[dict[str, Any]], None],
) -> None:
    """Carry out one branch frame; its turn (edit, regenerate) reaches every watcher of the session
    as any turn does, a refusal only this connection."""
    code: ErrorCode
    try:
        if kind == "edit":
            await branching.edit(runs, session_id, message_id, content, owner=owner)
        elif kind == "regenerate":
            await branching.regenerate(runs, session_id, message_id, owner=owner)
        elif kind == "continue":
            await branching.continue_answer(runs, session_id, message_id, owner=owner)
        else:
            await branching.switch(runs, session_id, message_id, owner=owner)
        return
    except RunActive as exc:
        message, code = str(exc), "busy"
    except BranchNotFound as exc:
        message, code = str(exc), "message_not_found"
    except branching.NothingToContinue as exc:
        message, code = str(exc), "nothing_to_continue"
    except branching.NotBranchable as exc:
        message, code = str(exc), "bad_frame"
    except SessionNotFound as exc:
        message, code = str(exc), "session_not_found"
    send(ErrorEvent(message=message, code=code).frame())
