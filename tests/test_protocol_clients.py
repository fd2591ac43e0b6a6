"""Navi's two clients against the protocol's schema (`docs/protocol.schema.json`): the page
(navi/web/static/js/) and `navi chat` (navi/cli/chat/) handle every server frame the schema has —
or the test says why one of them ignores it — handle no frame type the schema lacks, and send
only client frames the schema has."""

from __future__ import annotations

import ast
import io
import json
import re
from pathlib import Path

from rich.console import Console

from navi.cli.chat.app import Chat
from navi.cli.remote import Remote, Target
from navi.protocol.schema import SCHEMA_FILE, frame_types

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "navi" / "web" / "static" / "js"
CHAT = ROOT / "navi" / "cli" / "chat"
SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
SERVER, CLIENT = frame_types(SCHEMA, "server"), frame_types(SCHEMA, "client")

# Server frames a client leaves alone on purpose, and why.
# Voice frames come only to a connection that sent `voice` or `speak` (the page does:
# navi/web/static/js/voice.js); navi chat has no voice.
VOICE_FRAMES = {
    kind: "sent only to a connection that sent voice or speak; navi chat sends neither"
    for kind in ("transcript", "speech", "speech_end")
}
PAGE_IGNORES: dict[str, str] = {}
CHAT_IGNORES: dict[str, str] = {
    **VOICE_FRAMES,
    # navi chat sends no message while a turn runs (its input waits for the answer), so nothing of
    # its own waits; what other clients queue shows up as their turns.
    "queued": "navi chat queues nothing: it sends once the answer is in",
    "queue_cancelled": "navi chat queues nothing: it sends once the answer is in",
    # A steering message from another client is stored; navi chat shows it with the history.
    "steered": "navi chat shows another client's steering message with the history",
}


# --- the page ---------------------------------------------------------------------------------------


def page_handled() -> set[str]:
    """The `case "…":` labels of main.js's `handleFrame` switch: where the page dispatches frames."""
    source = (JS / "main.js").read_text(encoding="utf-8")
    found = re.search(r"\nfunction handleFrame\(frame\) \{\n(.*?)\n\}\n", source, re.S)
    assert found, "main.js has no handleFrame(frame): where does the page dispatch frames now?"
    return set(re.findall(r'\bcase "([a-z_]+)":', found.group(1)))


# The sign-in viewer's script talks on its own socket, /ws/browser/viewer, whose frames are
# navi/protocol/viewer.py's (checked below), not the session socket's.
VIEWER_JS = JS / "viewer.js"


def page_mentioned(paths: list[Path] | None = None) -> set[str]:
    """Frame types the page's scripts compare a frame's `type` with, or build a frame of."""
    mentioned: set[str] = set()
    for path in paths if paths is not None else [p for p in JS.glob("*.js") if p != VIEWER_JS]:
        source = path.read_text(encoding="utf-8")
        mentioned |= set(re.findall(r'\bframe\.type\s*[!=]==\s*"([a-z_]+)"', source))
        mentioned |= set(re.findall(r'\bevent\(\{\s*type:\s*"([a-z_]+)"', source))
    return mentioned


def page_sent(paths: list[Path] | None = None) -> set[str]:
    """The `type` of every frame the page puts on its socket (`….send({ type: "…", … })`)."""
    sent: set[str] = set()
    for path in paths if paths is not None else [p for p in JS.glob("*.js") if p != VIEWER_JS]:
        sent |= set(re.findall(r'\.send\(\{\s*type:\s*"([a-z_]+)"', path.read_text(encoding="utf-8")))
    return sent


def test_the_viewer_script_speaks_the_viewer_sockets_frames() -> None:
    from navi.protocol import viewer

    client = set(viewer.VIEWER_CLIENT_ADAPTER.json_schema()["discriminator"]["mapping"])
    server = {
        m.model_fields["type"].default for m in (viewer.ViewerFrame, viewer.ViewerSaved, viewer.ViewerError)
    }
    assert page_sent([VIEWER_JS]) == client
    assert page_mentioned([VIEWER_JS]) == server
    assert not (client | server) & (SERVER | CLIENT)  # no name shared with the session socket's


def test_the_page_handles_every_server_frame_and_no_other() -> None:
    handled = page_handled()
    assert len(handled) > 10  # the switch was found and read
    missing = SERVER - handled - set(PAGE_IGNORES)
    assert not missing, (
        f"the page does not handle {sorted(missing)}: handle them or list them in PAGE_IGNORES"
    )
    unknown = (handled | page_mentioned()) - SERVER
    assert not unknown, f"the page handles frame types the schema lacks: {sorted(unknown)}"
    assert not set(PAGE_IGNORES) & handled, "a frame listed as ignored is handled"


def test_the_page_sends_only_client_frames_of_the_schema() -> None:
    sent = page_sent()
    assert sent == {
        "message",
        "retry",
        "approval",
        "elicitation",
        "queue_edit",
        "queue_cancel",
        "voice",
        "speak",
    }, sent
    assert sent <= CLIENT


# --- navi chat --------------------------------------------------------------------------------------


def _is_type_read(node: ast.AST) -> bool:
    """`frame.get("type")` or `frame["type"]`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "type"
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == "type"
    )


def _strings(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _frame_type(node: ast.AST) -> str | None:
    """The `type` of a dict literal that is a frame (`{"type": "…", …}`)."""
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "type" and isinstance(value, ast.Constant):
                return str(value.value)
    return None


def chat_frames() -> tuple[set[str], set[str], set[str]]:
    """(handled, sent, built) frame types in navi/cli/chat/: types compared with a frame's `type`
    (directly, or through the variable it was read into), frames passed to a connection's `send`,
    and every frame dict literal. Types starting with `_` are the client's own inbox messages."""
    handled: set[str] = set()
    sent: set[str] = set()
    built: set[str] = set()
    for path in CHAT.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        readers = {  # names a frame's type was read into: kind = frame.get("type")
            target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and _is_type_read(node.value)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_is_type_read(s) or (isinstance(s, ast.Name) and s.id in readers) for s in sides):
                    for side in sides:
                        handled |= _strings(side)
            if (kind := _frame_type(node)) is not None:
                built.add(kind)
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            frames = {}  # name → frame type, for `frame = {"type": …}` … `send(frame)`
            for node in ast.walk(function):
                if isinstance(node, ast.Assign | ast.AnnAssign) and (kind := _frame_type(node.value)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    frames.update({t.id: kind for t in targets if isinstance(t, ast.Name)})
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "send"
                ):
                    for arg in node.args:
                        if (kind := _frame_type(arg)) is not None:
                            sent.add(kind)
                        elif isinstance(arg, ast.Name) and arg.id in frames:
                            sent.add(frames[arg.id])
    own = {k for k in handled | built if k.startswith("_")}
    return handled - own, sent, built - own


def test_navi_chat_handles_every_server_frame_and_no_other() -> None:
    handled, _, built = chat_frames()
    assert len(handled) > 10  # the dispatch was found and read
    missing = SERVER - handled - set(CHAT_IGNORES)
    assert not missing, (
        f"navi chat does not handle {sorted(missing)}: handle them or list them in CHAT_IGNORES"
    )
    unknown = handled - SERVER - CLIENT
    assert not unknown, f"navi chat handles frame types the schema lacks: {sorted(unknown)}"
    assert not (built - SERVER - CLIENT), (
        f"navi chat builds frames the schema lacks: {built - SERVER - CLIENT}"
    )
    assert not set(CHAT_IGNORES) & handled, "a frame listed as ignored is handled"


def test_navi_chat_sends_only_client_frames_of_the_schema() -> None:
    _, sent, _ = chat_frames()
    assert sent == {"message", "retry", "approval", "elicitation"}, sent
    assert sent <= CLIENT


def test_navi_chat_says_scheduled_runs_in_its_bar(tmp_path: Path) -> None:
    chat = Chat(
        Remote(Target("http://127.0.0.1:9")),
        Console(file=io.StringIO()),
        profile=None,
        history_file=tmp_path / "history",
    )
    base = {"type": "schedule_run", "schedule_id": "s", "schedule_run_id": "r", "session_id": None}
    chat.schedule_run(
        {**base, "status": "waiting_approval", "title": "Call Anna", "manual": False, "tool": "terminal"}
    )
    assert "⏰ Call Anna: waits for your approval (terminal)" in chat.toolbar()
    chat.schedule_run({**base, "status": "ok", "title": "Call Anna", "manual": False, "unread": True})
    assert "⏰ Call Anna: done" in chat.toolbar() and "approval" not in chat.toolbar()
