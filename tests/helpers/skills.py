"""Skills written by the tests in the published Agent Skills format (SKILL.md + scripts/,
references/), and a broken one."""

from __future__ import annotations

from pathlib import Path

CSV_REPORT = """---
name: csv-report
description: Summarise a CSV file into a short report of row counts and column totals. Use for CSVs.
license: MIT
metadata:
  author: navi-tests
  version: "1.0"
---

# CSV report

1. Run `scripts/summarise.py` with the CSV text on standard input.
2. Report the totals it prints, one line per column.
"""

SUMMARISE_PY = """import csv, os, socket, sys

rows = list(csv.DictReader(sys.stdin))
totals = {}
for row in rows:
    for key, value in row.items():
        totals[key] = totals.get(key, 0) + float(value)
print(f"rows={len(rows)}")
for key, value in totals.items():
    print(f"{key}={value:g}")
print("interfaces=" + ",".join(sorted(name for _, name in socket.if_nameindex())))
print(f"args={sys.argv[1:]}")
print(f"skill_dir_ok={os.path.isfile(os.path.join(os.environ['SKILL_DIR'], 'SKILL.md'))}")
"""

HOUSE_STYLE = """---
name: house-style
description: >
  Write letters in the family's house style. Use when the user asks for a letter,
  a note or an invitation.
allowed-tools: filesystem
---

# House style

Always read `references/style-guide.md` before writing, then follow it exactly.
"""

STYLE_GUIDE = (
    "# Style guide\n\nSign every letter with 'Warmly, the Lindqvists' and never use exclamation marks.\n"
)

BROKEN = """---
name: broken-skill
description: [this list is never closed
license: MIT
---

Body.
"""


def write_skill(root: Path, name: str, skill_md: str, files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md, encoding="utf-8")
    for rel, text in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def collection(root: Path) -> Path:
    """A folder of three skills: one with a script, one with references, one malformed."""
    write_skill(root, "csv-report", CSV_REPORT, {"scripts/summarise.py": SUMMARISE_PY})
    write_skill(root, "house-style", HOUSE_STYLE, {"references/style-guide.md": STYLE_GUIDE})
    write_skill(root, "broken-skill", BROKEN)
    return root
