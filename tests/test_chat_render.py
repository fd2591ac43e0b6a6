"""How `navi chat` draws a turn's frames (the sequences of docs/agent.md) on a real rich console:
a subagent's calls nest under its spawn_agent, profile switches and compression are said, a long
answer is printed once, line by line as it becomes stable."""

from __future__ import annotations

import io

from rich.console import Console

from navi.cli.chat.turn import LiveTurn, context_of, gauge


def console(width: int = 100) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, color_system=None, force_terminal=False, height=30), out


def frames(*items: dict) -> list[dict]:
    return [{"run_id": "r1", "seq": n, **f} for n, f in enumerate(items, 1)]


def test_a_subagent_nests_and_state_changes_are_said() -> None:
    con, out = console()
    turn = LiveTurn(con)
    sequence = frames(
        {"type": "stream_start", "message": {"content": "check the disks"}},
        {
            "type": "tool_started",
            "tool": "spawn_agent",
            "args": {"task": "df"},
            "call_id": "s1",
            "is_subagent": False,
        },
        {"type": "turn_thinking", "thinking": "I will run df.", "is_subagent": True},
        {
            "type": "tool_started",
            "tool": "terminal",
            "args": {"command": "df -h"},
            "call_id": "t1",
            "is_subagent": True,
        },
        {
            "type": "tool_call",
            "tool": "terminal",
            "args": {"command": "df -h"},
            "result": "/dev/sda1 40%\nmore",
            "success": True,
            "call_id": "t1",
            "is_subagent": True,
        },
        {
            "type": "tool_call",
            "tool": "spawn_agent",
            "args": {"task": "df"},
            "result": "Disk at 40%",
            "success": True,
            "call_id": "s1",
            "is_subagent": False,
        },
        {
            "type": "tool_started",
            "tool": "switch_profile",
            "args": {"profile_id": "server_admin"},
            "call_id": "p1",
        },
        {"type": "profile_switched", "profile_id": "server_admin", "profile_name": "Server Admin"},
        {
            "type": "tool_call",
            "tool": "switch_profile",
            "args": {},
            "result": "no such thing",
            "success": False,
            "call_id": "p1",
        },
        {"type": "stream_delta", "delta": "The disk is **40%** full."},
        {
            "type": "stream_end",
            "content": "The disk is 40% full.",
            "context_tokens": 1200,
            "max_context_tokens": 8192,
            "finish_reason": "length",
        },
        {"type": "context_compressed", "messages_before": 30, "messages_after": 8},
    )
    ended = [turn.handle(f) for f in sequence]
    assert ended.index(True) == 10  # stream_end ends the turn
    turn.flush(final=True)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0].startswith("✓ spawn_agent  task=df  → Disk at 40%")
    assert lines[1] == "   💭 subagent thought · 4 words — I will run df."
    assert lines[2] == "   ✓ terminal  command=df -h  → /dev/sda1 40% (+1 lines)"
    assert lines[3].startswith("✗ switch_profile") and lines[3].endswith("→ no such thing")
    assert lines[4] == "↪ switched to the Server Admin profile"  # said under the call that switched
    assert lines[5] == "The disk is 40% full."
    assert lines[6] == "✂ the reply was cut off at its length limit (/continue goes on with it)"
    assert turn.context == (1200, 8192, None, None)  # this server said nothing more


def test_the_gauge_says_where_compression_starts_and_what_the_last_turn_cost() -> None:
    end = {
        "type": "stream_end",
        "content": "ok",
        "context_tokens": 3277,
        "max_context_tokens": 4096,
        "compress_at_tokens": 3276,
        "usage": {"prompt_tokens": 2651, "completion_tokens": 45, "estimated": False},
    }
    assert context_of(end) == (3277, 4096, 3276, (2651, 45))
    assert (
        gauge(*context_of(end))
        == "context 80% (3,277/4,096 tokens, summary at 80%) · last turn 2,651 in, 45 out"
    )
    detail = {"context_token_count": 975, "max_context_tokens": 65536, "compress_at_tokens": None}
    assert gauge(*context_of(detail)) == "context 1% (975/65,536 tokens)"  # compression off, no turn yet
    assert gauge(*context_of({"type": "stream_end"})) == ""  # nothing known: no gauge


def test_compression_and_errors_and_a_stop() -> None:
    con, out = console()
    turn = LiveTurn(con)
    turn.handle({"type": "context_compressed", "messages_before": 30, "messages_after": 8, "seq": 2})
    turn.handle({"type": "thinking_delta", "delta": "hmm", "seq": 3})
    assert turn.handle(
        {"type": "error", "code": "model_unreachable", "message": "cannot reach Ollama", "seq": 4}
    )
    turn.flush(final=True)
    assert out.getvalue().splitlines() == [
        "⇣ context compressed: 30 → 8 messages (earlier ones were summarised)",
        "💭 thought · 1 word — hmm",
        "✗ error: cannot reach Ollama  (/retry runs it again)",
    ]
    assert turn.outcome == "failed"


def test_streamed_text_is_printed_once_as_it_becomes_stable() -> None:
    con, out = console(width=60)
    turn = LiveTurn(con)
    text = "".join(f"Line {i} of a long answer.\n\n" for i in range(40))
    for start in range(0, len(text), 7):
        turn.handle({"type": "stream_delta", "delta": text[start : start + 7]})
        turn.flush()  # what the redraw does a few times a second
    printed_while_streaming = out.getvalue()
    assert "Line 30 of a long answer." in printed_while_streaming  # not held back until the end…
    assert "Line 39 of a long answer." not in printed_while_streaming  # …but the last lines may change
    turn.handle({"type": "stream_end", "content": text, "context_tokens": 1, "max_context_tokens": 2})
    turn.flush(final=True)
    shown = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    assert shown == [f"Line {i} of a long answer." for i in range(40)]  # each line once, in order


def test_a_browser_call_shows_the_page_title_and_address() -> None:
    con, out = console()
    turn = LiveTurn(con)
    sequence = frames(
        {"type": "stream_start", "message": {"content": "open my shop"}},
        {"type": "tool_started", "tool": "browser", "args": {"action": "open"}, "call_id": "b1"},
        {
            "type": "tool_call",
            "tool": "browser",
            "args": {"action": "open", "url": "https://shop.example/login"},
            "result": "…",
            "success": True,
            "call_id": "b1",
            "browser": {
                "url": "https://shop.example/login",
                "title": "Sign\nin  [bold]now[/bold]",
                "tab": 1,
                "tabs": 1,
                "elements": ['[1] input "User name"'],
            },
        },
        {"type": "stream_end", "content": "Opened.", "context_tokens": 10, "max_context_tokens": 8192},
    )
    for f in sequence:
        turn.handle(f)
    turn.flush(final=True)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0].startswith("✓ browser  action=open")
    # the page's title is shown as its words (one line, no markup read), then its address
    assert lines[1] == "   ▭ Sign in [bold]now[/bold]  https://shop.example/login"


def test_a_browser_call_read_back_from_the_history_shows_its_page() -> None:
    from navi.cli.chat.history import history_blocks

    con, out = console()
    call = {"id": "b1", "name": "browser", "arguments": {"action": "open", "url": "https://shop.example/"}}
    blocks = history_blocks(
        [
            {"role": "user", "content": "open my shop"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": "b1",
                "name": "browser",
                "content": "…",
                "metadata": {"status": "ok", "page": {"url": "https://shop.example/", "title": "Shop"}},
            },
        ]
    )
    for block in blocks:
        con.print(block.final())
    assert "   ▭ Shop  https://shop.example/" in [line.rstrip() for line in out.getvalue().splitlines()]


def test_what_is_printed_is_not_drawn_again_in_the_live_region_of_the_same_write() -> None:
    """Printing a finished block (or the stable lines of a text) redraws the live region below it in
    the same write; that region must not hold it any more, or it shows twice until the next redraw
    — what a screen read at that moment saw (found by CI: a "💭 thinking…" left beside the folded
    thought, a line of a streamed answer twice)."""
    out = io.StringIO()
    con = Console(file=out, width=80, height=30, color_system=None, force_terminal=True)
    turn = LiveTurn(con)
    with turn:
        turn.handle({"type": "thinking_delta", "delta": "Let me think about the list first."})
        turn.refresh()
        turn.handle({"type": "thinking_end"})
        out.seek(0)
        out.truncate()
        turn.flush()  # the thought is folded and printed for good: one write, the region after it
        write = out.getvalue()
        assert "💭 thought · 7 words" in write
        assert "thinking…" not in write

        words = " ".join(f"word{i:03d}" for i in range(120))  # about twelve lines of 80 columns
        for start in range(0, len(words), 40):
            turn.handle({"type": "stream_delta", "delta": words[start : start + 40]})
        out.seek(0)
        out.truncate()
        turn.flush()  # all but the last lines are stable: printed, the rest drawn live below
        write = out.getvalue()
        assert "word000" in write and "word119" in write
        for i in range(120):
            assert write.count(f"word{i:03d}") == 1, f"word{i:03d} twice in one write:\n{write}"
        turn.handle({"type": "stream_end", "content": words})
        out.seek(0)
        out.truncate()
    write = out.getvalue()  # the end: the rest printed, the region gone
    assert all(write.count(f"word{i:03d}") <= 1 for i in range(120))
