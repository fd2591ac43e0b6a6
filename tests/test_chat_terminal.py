"""`navi chat` in a real terminal (tmux) against a live Navi on the fake model: what a person sees
and the keys they press. Plus the pipe mode and the token rules, as a script would run them."""

from __future__ import annotations

import json
import re
import stat
import subprocess
from pathlib import Path

from PIL import Image

from navi.testing.agent_script import PLAN_MARK
from navi.testing.fake_server import FakeModelServer
from navi.testing.script import Reply, ScriptedCall
from tests.helpers.terminal import NAVI, CuttableProxy, Terminal, chat_env
from tests.server_helpers import live_navi, use_script

ANSI = re.compile(r"\x1b\[")


def test_a_conversation_in_the_terminal(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """Plan, thinking, a tool card, rendered Markdown, the context gauge; Ctrl-C mid-answer keeps
    the partial answer; an approval answered with `y`; Ctrl-C twice quits; the next run offers the
    conversation again and remembers what was typed."""
    script = use_script(fake_server)
    script.plan("1. Make a checklist\n2. Answer with code")
    script.turn(
        Reply(
            thinking="Let me think about the checklist before I call the tool, slowly and carefully.",
            chunk_chars=3,
            delay=0.06,
            tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Check", "Answer"]})],
        ),
        Reply(text="Here is the **answer**:\n\n```python\nprint('hello from navi')\n```\n"),
        Reply(text="Counting slowly: " + " ".join(f"w{i}" for i in range(300)), chunk_chars=4, delay=0.05),
        Reply(tool_calls=[ScriptedCall("terminal", {"command": "echo approved-run"})]),
        Reply(text="The command printed approved-run."),
    )
    with live_navi(tmp_path, fake_server, navi_approval_mode="smart") as navi:
        port = navi.url.rsplit(":", 1)[1]
        # The token comes from Navi's token file: the same DB_PATH folder, this machine's NAVI_PORT.
        env = chat_env(tmp_path, NAVI_PORT=port, DB_PATH=str(tmp_path / "navi.db"))
        term = Terminal([*NAVI, "chat", "--new"], env)
        try:
            term.wait_for_prompt()
            term.type("Make me a checklist")
            term.send("M-Enter")  # a new line, not a send (Esc and Enter in one write)
            term.type("of two items")
            term.wait_for("· of two items")
            term.send("Enter")
            live = term.wait_for("💭 thinking…")  # dimmed while it streams…
            assert "Plan" in live and "Make a checklist" in live
            screen = term.wait_for("print('hello from navi')")
            screen = term.wait_for(lambda s: "context " in s and "summary at" in s)
            assert re.search(r"💭 thought · 14 words — Let me think about the checklist", screen)  # …folded
            assert "💭 thinking…" not in screen
            assert re.search(r"✓ todo +action=set tasks=\[\"Check\", \"Answer\"\] +→ ", screen)
            assert "Here is the answer:" in screen and "**answer**" not in screen  # Markdown, rendered
            assert "```" not in screen
            # The gauge, in the bar: the window and where compression starts (then the last turn's
            # tokens, which this terminal's width cuts off: tests/test_chat_render.py checks them).
            assert re.search(r"context \d+% \([\d,]+/65,536 tokens, summary at 80%\)", screen)

            # Ctrl-C mid-answer stops it; what it wrote stays.
            term.type("Count for me")
            term.send("Enter")
            term.wait_for("Counting slowly: w0 w1")
            term.send("C-c")
            screen = term.wait_for("■ stopped")
            assert "Counting slowly: w0 w1" in screen and "w299" not in screen

            # A call that asks: answered inline with `y`.
            term.type("Run the command")
            term.send("Enter")
            screen = term.wait_for("Allow? [y] yes  [n] no")
            assert "Navi asks before running this:" in screen and "echo approved-run" in screen
            term.send("y")
            screen = term.wait_for("The command printed approved-run.")
            assert "allowed" in screen
            assert re.search(r"✓ terminal +command=echo approved-run +→ approved-run", screen)

            # Ctrl-C at the prompt (once it is drawn: CI sent it as the reply's last words came, and
            # the key went to the ending turn): a hint, then quit.
            term.wait_for_prompt(after="The command printed approved-run.")
            term.send("C-c")
            term.wait_for("(Ctrl-C again, or Ctrl-D, quits)")
            term.send("C-c")
            term.wait_for("[exited 0]")
        finally:
            term.close()

        asked = script.of_kind("turn")[0].last_user_text
        # The user's two lines as typed, then the turn's plan as a note after them.
        words, plan = asked.split(PLAN_MARK)
        assert words == "Make me a checklist\nof two items\n\n" and "1. Make a checklist" in plan
        history_file = tmp_path / "state" / "navi" / "chat_history"
        history = history_file.read_text()
        assert "+Make me a checklist\n+of two items" in history and "+Run the command" in history
        assert stat.S_IMODE(history_file.stat().st_mode) == 0o600

        # The next run, in an 80-column terminal, offers the latest conversation (counting what was
        # said: 3 questions, the plan and 3 answers — not the 2 tool calls and their 2 results — 11
        # display messages in all), shows how it ended, and
        # Up recalls input.
        term = Terminal([*NAVI, "chat"], env, width=80, height=24)
        try:
            term.wait_for("Continue “Scripted title” (7 messages,")
            term.send("Enter")
            screen = term.wait_for_prompt()
            assert "The command printed approved-run." in screen
            # The bar under the prompt reads whole in 80 columns: the gauge's short form.
            bar = term.wait_for(lambda s: "context " in s, history=False).rstrip().splitlines()[-1]
            assert re.search(
                r"Scripted title · Personal Secretary · context \d+% \(summary at 80%\)$", bar.rstrip()
            )
            term.send("Up")
            term.wait_for("› Run the command")
            term.send("C-c")  # clears the line…
            term.wait_for(lambda s: not s.rstrip().splitlines()[-2].startswith("› Run"), history=False)
            term.send("C-d")  # …and Ctrl-D quits
            term.wait_for("[exited 0]")
        finally:
            term.close()


def test_a_remote_navi_with_a_token_and_a_dropped_connection(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """Through --url and NAVI_API_TOKEN (no token file anywhere): a pasted path is uploaded and a
    picture attached with /attach goes to the model; the reply streams on after the connection is
    cut mid-answer (the chat reconnects with ?since=) and nothing is shown twice."""
    script = use_script(fake_server)
    words = [f"part{i}" for i in range(150)]
    script.turn(Reply(text=" ".join(words), chunk_chars=6, delay=0.03))
    token = "remote-token-0123456789"
    with live_navi(tmp_path / "server", fake_server, navi_api_token=token) as navi:
        proxy = CuttableProxy(int(navi.url.rsplit(":", 1)[1]))
        env = chat_env(tmp_path, NAVI_API_TOKEN=token, DB_PATH=str(tmp_path / "client" / "navi.db"))
        notes, picture = tmp_path / "notes.txt", tmp_path / "pic.png"
        notes.write_text("remember the milk\n")
        Image.new("RGB", (4, 4), "red").save(picture)
        term = Terminal([*NAVI, "chat", "--new", "--url", proxy.url], env)
        try:
            term.wait_for_prompt()
            term.type(f"'{notes}'")  # a path pasted (or dropped) on its own
            term.send("Enter")
            term.wait_for("📎 notes.txt uploaded (18 bytes); it goes with your next message")
            term.type(f"/attach {picture}")
            term.send("Enter")
            term.wait_for("🖼 pic.png attached")
            term.type("Tell me a long story")
            term.send("Enter")
            term.wait_for("part8 part9")
            before = proxy.accepted
            proxy.cut()
            screen = term.wait_for("part149")
            assert proxy.accepted > before  # it came back through the proxy
            body = screen.split("Tell me a long story", 1)[1]
            for word in ("part0", "part9", "part10", "part80", "part149"):
                seen = len(re.findall(rf"\b{word}\b", body))
                assert seen == 1, f"{word} shown {seen} times on the screen:\n{screen}"  # whole, untruncated

            # The slash commands, through the same proxy and token.
            exported = tmp_path / "story.json"
            for command, shows in (
                ("/rename Long story", "Renamed: Long story"),
                ("/profile server_admin", "Profile: "),
                (f"/export {exported}", f"Wrote {exported} ("),
                ("/sessions", "*  1  "),  # the open one, marked
                ("/new", "New conversation; it is created"),
                ("/open 1", "─ Long story · "),
                ("/stop", "Nothing is running."),
                ("/nonsense", "unknown command /nonsense — /help lists them"),
            ):
                term.type(command)
                term.send("Enter")
                term.wait_for(shows)
            with navi.client() as http:
                (session,) = http.get("/sessions").json()
            assert (session["name"], session["profile_id"]) == ("Long story", "server_admin")
            assert json.loads(exported.read_text())["session"]["name"] == "Long story"
            term.send("C-d")
            term.wait_for("[exited 0]")
        finally:
            term.close()
            proxy.close()
    asked = script.of_kind("turn")[0].messages[-1]
    assert asked.role == "user" and asked.content.startswith("Tell me a long story")
    assert "notes.txt" in asked.content  # the uploaded file's path, as Navi tells the model
    assert len(asked.images or []) == 1


def test_what_is_typed_during_a_reply_is_kept(tmp_path: Path, fake_server: FakeModelServer) -> None:
    """Keys typed while a reply streams are not lost: they show under the status line; a line ended
    with Enter runs after the reply (a slash command, then a message, in order) and an unfinished
    one waits in the prompt. Found by CI: a /rename typed as the last words arrived vanished."""
    script = use_script(fake_server)
    script.turn(
        Reply(text="Slowly: " + " ".join(f"w{i}" for i in range(120)), chunk_chars=4, delay=0.05),
        Reply(text="The second answer."),
    )
    with live_navi(tmp_path, fake_server) as navi:
        port = navi.url.rsplit(":", 1)[1]
        env = chat_env(tmp_path, NAVI_PORT=port, DB_PATH=str(tmp_path / "navi.db"))
        term = Terminal([*NAVI, "chat", "--new"], env)
        try:
            term.wait_for_prompt()
            term.type("Count slowly")
            term.send("Enter")
            term.wait_for("Slowly: w0 w1")
            term.type("/rename Typed ahead")
            term.send("Enter")
            term.type("What comes next?")
            term.send("Enter")
            term.type("half a thoughtX")
            term.send("BSpace")
            screen = term.wait_for("› /rename Typed ahead ⏎ What comes next? ⏎ half a thought ")
            assert "(goes after this reply)" in screen and "w119" not in screen
            screen = term.wait_for("The second answer.")
            assert "Renamed: Typed ahead" in screen
            assert screen.index("w119") < screen.index("Renamed: Typed ahead")
            assert screen.index("Renamed: Typed ahead") < screen.index("› What comes next?")
            assert screen.index("› What comes next?") < screen.index("The second answer.")
            term.wait_for(lambda s: re.search(r"^› half a thought *$", s, re.M) is not None)  # in the prompt
            term.send("C-c")  # clears the line…
            term.send("C-d")  # …and Ctrl-D quits
            term.wait_for("[exited 0]")
        finally:
            term.close()
        with navi.client() as http:
            (session,) = http.get("/sessions").json()
        assert session["name"] == "Typed ahead"
    turns = script.of_kind("turn")
    assert [t.last_user_text for t in turns] == ["Count slowly", "What comes next?"]


def _pipe(args: list[str], env: dict[str, str], text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NAVI, "chat", *args], input=text, env=env, capture_output=True, text=True, timeout=60
    )


def test_pipe_mode_prints_the_answer_only(tmp_path: Path, fake_server: FakeModelServer) -> None:
    script = use_script(fake_server)
    script.plan("1. Say hello")
    script.turn(
        Reply(
            thinking="Secret thoughts.", tool_calls=[ScriptedCall("todo", {"action": "set", "tasks": ["Hi"]})]
        ),
        # Streams for over two seconds: longer than a reconnect's grace, which a first connection
        # must not start.
        Reply(text="Hello **there**.\n\nSecond paragraph.", chunk_chars=2, delay=0.12),
        Reply(text="Still here."),
    )
    with live_navi(tmp_path, fake_server) as navi:
        port = navi.url.rsplit(":", 1)[1]
        env = chat_env(tmp_path, NAVI_PORT=port, DB_PATH=str(tmp_path / "navi.db"))
        done = _pipe(["--new"], env, "hi\n")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Hello **there**.\n\nSecond paragraph.\n"  # the text, as the model wrote it
        assert not ANSI.search(done.stdout) and done.stderr == ""

        # SESSION continues a conversation (by the start of its id).
        with navi.client() as http:
            session_id = http.get("/sessions").json()[0]["id"]
        done = _pipe([session_id[:8]], env, "again")
        assert (done.returncode, done.stdout) == (0, "Still here.\n"), done.stderr
        with navi.client() as http:
            contents = [m["content"] for m in http.get(f"/sessions/{session_id}").json()["messages"]]
        assert contents[-2:] == ["again", "Still here."]

        # Problems: one line on stderr, with the fix.
        done = _pipe(["--new"], env, "  \n")
        assert done.returncode == 2
        assert (
            done.stderr == 'navi: nothing to send: pipe a message in, e.g. echo "hello" | navi chat --new\n'
        )
        done = _pipe(["nosuchsession"], env, "hi")
        assert done.returncode == 1
        assert done.stderr.startswith("navi: no conversation 'nosuchsession' — `navi sessions list`")
        done = _pipe(["--new", "--url", "localhost:8000"], env, "hi")
        assert (done.returncode, done.stderr.count("\n")) == (2, 1)
        assert "give its base address, like http://127.0.0.1:8000" in done.stderr

        # The token file is this machine's Navi's: another address never gets it.
        proxy = CuttableProxy(int(port))
        try:
            done = _pipe(["--new", "--url", proxy.url], env, "hi")
            assert done.returncode == 1
            assert done.stderr.startswith(
                f"navi: Navi at {proxy.url} asks for an access token — set NAVI_API_TOKEN"
            )
            done = _pipe(["--new", "--url", proxy.url], {**env, "NAVI_API_TOKEN": "wrong"}, "hi")
            assert done.stderr.startswith(f"navi: Navi at {proxy.url} refused the token — set NAVI_API_TOKEN")
        finally:
            proxy.close()

    done = _pipe(["--new"], env, "hi")  # Navi is gone
    assert done.returncode == 1
    assert done.stderr == (
        f"navi: cannot reach Navi at http://127.0.0.1:{port} — start it with `navi serve`, or point --url "
        "(or NAVI_URL) at it\n"
    )
