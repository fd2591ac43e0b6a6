#!/usr/bin/env python3
"""Navi's layers, checked: module sizes, imports that run against the layer order, import cycles.

Every module under `navi/` is parsed (never imported) and each `import` / `from … import` of a Navi
module is an arrow: at the top of a module, inside a function (imported on first use), relative,
and under `if TYPE_CHECKING:` too. Arrows that exist only for type checking are counted like the
others and marked "(types)" where they are listed: an annotation is a dependency of the design,
and a circle through one is still a circle.

A part is a folder directly under `navi/` or a module there (`config`, `redact`…); `navi` is the
package's own `__init__`, `__main__` its entry point. `LAYERS` below is the order, lowest first —
the same order docs/architecture.md draws (`--picture` prints its block, and the check compares).
A part may import parts on lower layers only; parts on one layer know nothing of each other.

Fails (exit 1) when an arrow runs against the layers, a part is missing from `LAYERS`, parts or
modules import each other in a circle, a module is longer than `MAX_LINES` without an entry in
`LONG_MODULES`, or the picture in docs/architecture.md is not the one `LAYERS` gives — and, for
the shape of the code a newcomer works in, when a function takes more than `MAX_PARAMS` parameters
(`self`/`cls` not counted) without an entry in `MANY_PARAMS`, or a frame or event is dispatched on
its `"type"` string (`frame.get("type")`, `event["type"]`) outside the edge adapters (`EDGES`:
where JSON comes in or goes out) without an entry in `DISPATCH`. Inside, frames are typed objects.

    python scripts/layers.py            # the report (`make lint` runs it)
    python scripts/layers.py --arrows   # … with every arrow between parts
    python scripts/layers.py --sizes    # … with every module's size, not only the 10 largest
    python scripts/layers.py --picture  # the picture for docs/architecture.md

Standard library only; `--root DIR` checks another checkout (the tests use it).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "architecture.md"
PICTURE_BEGIN = "<!-- layers:begin (scripts/layers.py --picture) -->"
PICTURE_END = "<!-- layers:end -->"

# The layer order, lowest first. Stated here once; docs/architecture.md shows the same picture.
LAYERS: list[tuple[str, ...]] = [
    ("navi", "net", "redact", "runctx", "safejson", "prompts", "web", "files"),
    ("logging", "profiles", "sandbox", "protocol"),
    ("llm",),
    ("config", "sessions", "telemetry", "testing"),
    ("archive",),
    ("users", "schedules", "memory", "documents", "skills", "push", "jobs", "voice"),
    ("tools",),
    ("agent",),
    ("mcp", "storage"),
    ("runs",),
    ("channels",),
    ("compose",),
    ("api",),
    ("cli",),
    ("__main__",),
]

MAX_LINES = 500
# Modules allowed to be longer than MAX_LINES for now, each with the reason. Remove an entry when
# its module is split.
LONG_MODULES: dict[str, str] = {}


# Parameters a function may take (self and cls not counted); more is a sign that a record wants to
# be a type. The entries below are the exceptions, each with the reason; remove one when it shrinks.
MAX_PARAMS = 8
MANY_PARAMS: dict[str, str] = {
    # Empty: a command with many options takes them as a record (navi/cli/common.py takes_options).
}
# Where JSON frames and events come in or go out: dispatching on their "type" string belongs here.
EDGES = ("navi.api", "navi.channels", "navi.cli", "navi.protocol", "navi.testing", "navi.runs.pg")
DISPATCH: dict[str, str] = {}  # none left: inside, frames are typed objects


@dataclass(frozen=True)
class Arrow:
    source: str  # module names, dotted
    target: str
    types_only: bool


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    imports: dict[str, bool] = field(default_factory=dict)  # target → only for type checking


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def part_of(module: str) -> str:
    pieces = module.split(".")
    return "navi" if len(pieces) == 1 else pieces[1]


class _Imports(ast.NodeVisitor):
    """The Navi modules a module names in its imports, and whether only for type checking."""

    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = known
        self.found: dict[str, bool] = {}
        self._typing = 0

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        typing = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        self._typing += typing
        for child in node.body:
            self.visit(child)
        self._typing -= typing
        for child in node.orelse:
            self.visit(child)

    def _add(self, name: str) -> None:
        while name and name not in self.known:  # `import navi.x.y.attr` names the module navi.x.y
            name = name.rpartition(".")[0]
        if name:
            self.found[name] = self.found.get(name, True) and self._typing > 0

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "navi" or alias.name.startswith("navi."):
                self._add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source != "navi" and not source.startswith("navi."):
            return
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            # `from navi.llm import errors` names the module navi.llm.errors, not the package.
            self._add(submodule if submodule in self.known else source)


def read_modules(root: Path = ROOT) -> dict[str, Module]:
    """Every module of the `navi` package under `root`, with its size and the Navi modules it imports."""
    paths = sorted(p for p in (root / "navi").rglob("*.py") if "__pycache__" not in p.parts)
    modules = {module_name(p, root): Module(module_name(p, root), p, 0) for p in paths}
    known = set(modules)
    for module in modules.values():
        text = module.path.read_text(encoding="utf-8")
        module.lines = text.count("\n") + (not text.endswith("\n") and bool(text))
        visitor = _Imports(module.name, module.path.name == "__init__.py", known)
        visitor.visit(ast.parse(text, str(module.path)))
        visitor.found.pop(module.name, None)
        module.imports = visitor.found
    return modules


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def picture() -> str:
    """The layers, highest on top, as docs/architecture.md shows them."""
    rows = [f"{number:>4}  {'   '.join(layer)}" for number, layer in reversed(list(enumerate(LAYERS, 1)))]
    head = "layer  parts (each imports only parts on the layers below it)"
    return "\n".join(["```", head, *rows, "```"])


def docs_picture(docs: Path) -> str | None:
    text = docs.read_text(encoding="utf-8") if docs.is_file() else ""
    if PICTURE_BEGIN not in text or PICTURE_END not in text:
        return None
    return text.split(PICTURE_BEGIN, 1)[1].split(PICTURE_END, 1)[0].strip()


class _Shapes(ast.NodeVisitor):
    """Functions with too many parameters, and `"type"` read off a frame or an event."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.scope: list[str] = []
        self.many: list[tuple[str, int]] = []  # (path:qualname, parameters)
        self.dispatch: list[int] = []  # lines

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        a = node.args
        names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
        if names and names[0] in ("self", "cls") and self.scope:
            count -= 1
        if count > MAX_PARAMS:
            self.many.append((f"{self.path}:{'.'.join([*self.scope, node.name])}", count))
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    @staticmethod
    def _framish(node: ast.expr) -> bool:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        return "frame" in name.lower() or "event" in name.lower()

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "type"
            and self._framish(f.value)
        ):
            self.dispatch.append(node.lineno)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.slice, ast.Constant) and node.slice.value == "type" and self._framish(node.value):
            self.dispatch.append(node.lineno)
        self.generic_visit(node)


def shapes(modules: dict[str, Module], root: Path) -> tuple[list[tuple[str, int]], list[str]]:
    """Functions over `MAX_PARAMS` (with their count), and `file:line`s that dispatch a frame on
    its "type" outside `EDGES`."""
    many: list[tuple[str, int]] = []
    dispatch: list[str] = []
    for module in modules.values():
        path = module.path.relative_to(root).as_posix()
        found = _Shapes(path)
        found.visit(ast.parse(module.path.read_text(encoding="utf-8")))
        many += found.many
        edge = any(module.name == e or module.name.startswith(e + ".") for e in EDGES)
        if not edge:
            dispatch += [f"{path}:{line}" for line in found.dispatch]
    return sorted(many), sorted(dispatch)


def _listed(items: Iterable[str], indent: str = "  ") -> str:
    return "\n".join(indent + item for item in items)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrows", action="store_true", help="list every arrow between parts")
    parser.add_argument("--sizes", action="store_true", help="list every module by size, not the 10 largest")
    parser.add_argument("--picture", action="store_true", help="print the picture for docs/architecture.md")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to check (default: this one)")
    args = parser.parse_args(argv)
    if args.picture:
        print(f"{PICTURE_BEGIN}\n{picture()}\n{PICTURE_END}")
        return 0

    root: Path = args.root.resolve()
    docs = root / DOCS.relative_to(ROOT)
    modules = read_modules(root)
    layer_of = {part: n for n, layer in enumerate(LAYERS, 1) for part in layer}
    problems: list[str] = []

    # Arrows between parts, each with the module arrows behind it.
    arrows: dict[tuple[str, str], list[Arrow]] = defaultdict(list)
    module_graph: dict[str, set[str]] = defaultdict(set)
    for module in modules.values():
        for target, types_only in module.imports.items():
            module_graph[module.name].add(target)
            src, dst = part_of(module.name), part_of(target)
            if src != dst:
                arrows[(src, dst)].append(Arrow(module.name, target, types_only))
    parts = sorted({part_of(m) for m in modules})

    unplaced = [p for p in parts if p not in layer_of]
    if unplaced:
        problems.append(f"parts missing from LAYERS in scripts/layers.py: {', '.join(unplaced)}")
    gone = sorted(set(layer_of) - set(parts))
    if gone:
        problems.append(f"parts in LAYERS that do not exist: {', '.join(gone)}")

    against = []
    for (src, dst), behind in sorted(arrows.items()):
        if src in layer_of and dst in layer_of and layer_of[dst] >= layer_of[src]:
            how = "on the same layer as" if layer_of[dst] == layer_of[src] else "above"
            for arrow in behind:
                mark = " (types)" if arrow.types_only else ""
                against.append(f"{arrow.source} → {arrow.target}{mark}: {dst} is {how} {src}")

    part_graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in arrows:
        part_graph[src].add(dst)
    part_cycles = cycles(part_graph)
    module_cycles = cycles(module_graph)

    sizes = sorted(((m.lines, m.path.relative_to(root).as_posix()) for m in modules.values()), reverse=True)
    long = [(n, p) for n, p in sizes if n > MAX_LINES]
    unexcused = [p for _, p in long if p not in LONG_MODULES]
    stale = sorted(set(LONG_MODULES) - {p for _, p in long})

    drawn = docs_picture(docs)
    where = DOCS.relative_to(ROOT)
    if drawn is None:
        problems.append(f"{where} has no layer picture between {PICTURE_BEGIN} and {PICTURE_END}")
    elif drawn != picture():
        problems.append(
            f"the layer picture in {where} is not LAYERS': paste what `scripts/layers.py --picture` prints"
        )

    # --- the report ---------------------------------------------------------------------------------
    total = sum(m.lines for m in modules.values())
    typed = sum(all(a.types_only for a in behind) for behind in arrows.values())
    print(
        f"navi: {len(modules)} modules, {total:,} lines; {len(parts)} parts on {len(LAYERS)} layers; "
        f"{len(arrows)} arrows between parts ({typed} for type checking only)"
    )
    print("layers, highest first:")
    for number, layer in reversed(list(enumerate(LAYERS, 1))):
        print(f"  {number:>2}  {'  '.join(layer)}")
    if args.arrows:
        print("arrows between parts:")
        for (src, dst), behind in sorted(arrows.items()):
            mark = " (types)" if all(a.types_only for a in behind) else ""
            print(f"  {src} → {dst}{mark}: {', '.join(sorted({a.source for a in behind}))}")
    shown = sizes if args.sizes else sizes[:10]
    print(
        f"modules by size ({'all' if args.sizes else 'the 10 largest'}; {len(long)} over {MAX_LINES} lines):"
    )
    for lines, path in shown:
        why = ""
        if lines > MAX_LINES:
            why = f"  over {MAX_LINES}, allowed: {LONG_MODULES[path]}" if path in LONG_MODULES else "  OVER"
        print(f"  {lines:>5}  {path}{why}")
    for path in stale:
        print(f"  note: {path} is no longer over {MAX_LINES} lines: remove it from LONG_MODULES")
    print(f"arrows against the layers: {len(against)}")
    if against:
        print(_listed(against))
    print(f"cycles between parts: {len(part_cycles)}")
    if part_cycles:
        print(_listed(" ⇄ ".join(c) for c in part_cycles))
    print(f"cycles between modules: {len(module_cycles)}")
    for component in module_cycles:
        print(f"  {len(component)} modules: {', '.join(component)}")

    many, dispatch = shapes(modules, root)
    new_many = [f"{name} ({count})" for name, count in many if name not in MANY_PARAMS]
    stale_many = sorted(set(MANY_PARAMS) - {name for name, _ in many})
    new_dispatch = [where for where in dispatch if where.split(":")[0] not in DISPATCH]
    listed = len(many) - len(new_many)
    print(f"functions over {MAX_PARAMS} parameters: {len(many)} ({listed} listed in MANY_PARAMS)")
    if new_many:
        print(_listed(new_many))
    for name in stale_many:
        print(f"  note: {name} is no longer over {MAX_PARAMS} parameters: remove it from MANY_PARAMS")
    print(f"frames dispatched on their type outside the edges: {len(dispatch)}")
    if dispatch:
        print(_listed(f"{w}{'' if w.split(':')[0] in DISPATCH else '  NEW'}" for w in dispatch))

    if unexcused:
        problems.append(f"over {MAX_LINES} lines without an entry in LONG_MODULES: {', '.join(unexcused)}")
    if new_many:
        problems.append(f"over {MAX_PARAMS} parameters, not in MANY_PARAMS: {', '.join(new_many)}")
    if new_dispatch:
        problems.append(
            f'a frame dispatched on its "type" outside the edge adapters: {", ".join(new_dispatch)} '
            "(inside, frames are typed objects: match on their class)"
        )
    if against:
        problems.append(f"{len(against)} import(s) against the layer order")
    if part_cycles or module_cycles:
        problems.append(f"{len(part_cycles) + len(module_cycles)} import cycle(s)")
    sys.stdout.flush()
    for problem in problems:
        print(f"layers: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
