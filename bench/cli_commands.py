"""The CPU a `navi` command costs: each command run as a fresh `python -m navi` process.

Every command runs `--repeat` times on a data folder of its own (a database with one conversation
and one fact), and the child's user + system CPU time is reported, the median of the runs. With
`--against DIR` (another checkout, e.g. `git worktree add /tmp/base main`) the same commands run on
that checkout too, interleaved with this one's so the machine's load falls on both alike, and the
saving is reported: issue 41's store-only path for the commands that run no agent is measured so.

    .venv/bin/python bench/cli_commands.py [--repeat 5] [--against DIR] [--commands "sessions list;usage"]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from navi.llm.messages import Message
from navi.sessions.archive import export_session
from navi.sessions.models import Session, new_session_id

HERE = Path(__file__).resolve().parent.parent
COMMANDS = (
    "--version;sessions list;sessions search eggs;memory list;memory search tea;"
    "memory add food likes tea;schedules list;docs list;usage;users list;channels list;models list"
)


class Checkout:
    """One checkout's `navi`, on a data folder of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = Path(tempfile.mkdtemp(prefix="navi-cli-bench-"))
        keep = ("NAVI", "DB_", "DATABASE", "MEMORY_", "LOG_", "OLLAMA", "OTEL")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(keep)}
        self.env.update(
            PYTHONPATH=str(root),
            HOME=str(self.data),
            DB_PATH=str(self.data / "navi.db"),
            TOOLS_DIR=str(self.data / "tools"),
            SKILLS_DIR=str(self.data / "skills"),
            SESSION_FILES_DIR=str(self.data / "files"),
            OLLAMA_HOST="http://127.0.0.1:9",  # nothing listens: a model call fails at once
        )

    def run(self, args: list[str]) -> float:
        """`navi ARGS`; the CPU seconds (user + system) its process used."""
        before = os.times()
        done = subprocess.run(
            [sys.executable, "-m", "navi", *args], env=self.env, cwd=self.data, capture_output=True, text=True
        )
        after = os.times()
        if done.returncode not in (0, 1):
            raise SystemExit(
                f"{self.root}: navi {' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}"
            )
        return (after.children_user - before.children_user) + (after.children_system - before.children_system)

    def seed(self) -> None:
        said = [Message.user("Milk and eggs")]
        session = Session(
            id=new_session_id(), profile_id="secretary", name="Groceries", messages=said, context=said
        )
        (self.data / "a.json").write_text(json.dumps(export_session(session)))
        self.run(["sessions", "import", "a.json"])
        self.run(["memory", "add", "food", "likes", "tea"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same run")
    parser.add_argument("--commands", default=COMMANDS, help="separated by ';'")
    args = parser.parse_args()
    checkouts = {"this": Checkout(HERE)}
    if args.against is not None:
        checkouts = {"against": Checkout(args.against.resolve()), **checkouts}
    for checkout in checkouts.values():
        checkout.seed()
    commands = [c.split() for c in args.commands.split(";") if c.strip()]
    cpu: dict[str, dict[str, list[float]]] = {" ".join(c): {n: [] for n in checkouts} for c in commands}
    for _ in range(args.repeat):
        for command in commands:
            for name, checkout in checkouts.items():
                cpu[" ".join(command)][name].append(checkout.run(command))
    print(f"CPU seconds (user + system) of one `navi` process, median of {args.repeat}")
    print(
        f"{'command':28s}"
        + "".join(f"{name:>10s}" for name in checkouts)
        + ("    saved" if len(checkouts) > 1 else "")
    )
    for command, runs in cpu.items():
        medians = {name: statistics.median(values) for name, values in runs.items()}
        row = f"{command:28s}" + "".join(f"{m:10.2f}" for m in medians.values())
        if len(medians) > 1:
            row += f"  {100 * (medians['against'] - medians['this']) / medians['against']:5.0f} %"
        print(row)


if __name__ == "__main__":
    main()
