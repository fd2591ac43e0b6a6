"""The keyboard while a reply streams: keys do not echo over the output, single keys answer
approvals (y / n / a), and Ctrl-C arrives as a signal the turn turns into Stop. Between the prompt
and a turn, Ctrl-C is ignored (`quiet_interrupts`).

Between turns prompt_toolkit owns the terminal; during a turn this does: the terminal goes to
cbreak mode without echo (signals stay on, so Ctrl-C is still SIGINT), stdin is read by the event
loop, and SIGINT is handled by the loop instead of raising KeyboardInterrupt somewhere in the
middle of a frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import termios
from collections.abc import Callable, Iterator

ENTER, BACKSPACES, ESCAPE, CTRL_D = ("\r", "\n"), ("\x7f", "\b"), "\x1b", "\x04"


class TypeAhead:
    """What the user types while a reply streams, kept for the prompt that follows: lines ended
    with Enter are sent in order once the turn is over, the unfinished rest waits in the prompt.
    Backspace edits; escape sequences (arrows, function keys) and other control keys are dropped.
    Ctrl-D on an empty line, as at the prompt, quits: once the reply and the lines typed before it
    are done (`quit`); what is typed after it is not read."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.partial = ""
        self.quit = False
        self._escape = ""  # an escape sequence being skipped

    def feed(self, char: str) -> None:
        if self.quit:
            return
        if self._escape:
            self._escape += char
            if _sequence_over(self._escape):
                self._escape = ""
            return
        if char == ESCAPE:
            self._escape = char
        elif char in ENTER:
            if self.partial.strip():
                self.lines.append(self.partial)
            self.partial = ""
        elif char in BACKSPACES:
            self.partial = self.partial[:-1]
        elif char == "\x15":  # Ctrl-U clears the line, as in a shell
            self.partial = ""
        elif char == CTRL_D and not self.partial:
            self.quit = True
        elif char.isprintable():
            self.partial += char

    def shown(self) -> str:
        """One line for the status area: what is waiting, or nothing."""
        waiting = [*self.lines, self.partial] if self.partial else self.lines
        return " ⏎ ".join(waiting)


def _sequence_over(seq: str) -> bool:
    """ESC x, ESC O x and ESC [ … (up to a final byte @ to ~) end where this says."""
    if len(seq) == 2:
        return seq[1] not in "[O"
    return seq[1] == "O" or "@" <= seq[-1] <= "~"


@contextlib.contextmanager
def turn_keys(on_key: Callable[[str], None], on_interrupt: Callable[[], None]) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno() if sys.stdin.isatty() else -1
    saved = None
    if fd >= 0:
        saved = termios.tcgetattr(fd)
        mode = termios.tcgetattr(fd)
        mode[3] &= ~(termios.ECHO | termios.ICANON)  # lflag: no echo, key by key; ISIG stays
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)

        def readable() -> None:
            try:
                data = os.read(fd, 64)
            except OSError:
                return
            for char in data.decode("utf-8", errors="ignore"):
                on_key(char)

        loop.add_reader(fd, readable)
    before = signal.getsignal(signal.SIGINT)
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if callable(before):  # the handler between turns (see `quiet_interrupts`), not Python's default
            signal.signal(signal.SIGINT, before)
        if fd >= 0:
            loop.remove_reader(fd)
            if saved is not None:
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)


@contextlib.contextmanager
def quiet_interrupts() -> Iterator[None]:
    """Between the prompt and a turn (opening a session, sending, drawing the end of a reply) a
    Ctrl-C does nothing: a second press meant for the reply that just stopped must not quit the
    program. The prompt and the turn handle Ctrl-C themselves and give this handler back after."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda _signum, _frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def interrupt_handler(on_interrupt: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C as a call on the loop (pipe mode: no terminal to set up)."""
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
