"""The learning team's layout: no import circle, no level ids and no eval vocabulary in team code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TEAM = SRC / "moot" / "teams" / "learning"
READERS = [TEAM, SRC / "moot" / "text", SRC / "moot" / "memory"]


def _module(path: Path) -> str:
    name = ".".join(path.relative_to(SRC).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_the_team_has_no_import_circle() -> None:
    modules = {_module(p): p for p in TEAM.rglob("*.py")}
    graph = {m: {d for d in _imports(p) if d in modules and d != m and not d.startswith(m + ".")} for m, p in modules.items()}
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                circles.append(path[path.index(d):] + [d] if d in path else [m, d])
            elif d not in state:
                visit(d, [*path, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert circles == []


def test_no_level_ids_or_suite_vocabulary_in_the_team_or_its_readers() -> None:
    # The levels' ids, and words that existed only in the bundled suite's articles.
    level = re.compile(r"(?<![\w-])L(?:[1-9]|1[0-2])(?![\w-])")
    vocabulary = re.compile(r"\bberths?\b|\binflow\b|kept up|hold enough|\bdues\b|\bcrowns?\b|how far apart|"
                            r"percentage points|Marrow|Elmsbrook", re.I)
    files = [p for folder in READERS for pattern in ("*.py", "*.md", "*.txt") for p in folder.rglob(pattern)]
    hits = [f"{p.relative_to(SRC)}:{n}: {line.strip()[:60]}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if level.search(line) or vocabulary.search(line)]
    assert hits == []
