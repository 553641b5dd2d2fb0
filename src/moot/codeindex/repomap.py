"""The repo map: the directory tree with a short summary per directory, derived without a model.

A directory's summary names its file count and languages, its main modules (most
definitions first) with their docstring's first line, and its main top-level classes and
functions (largest first). It is what a planner reads before it decides where to look, so it
is short: the output stops at ``max_lines`` with a note saying how to see the rest.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field

MAIN_FILES = 3
MAIN_SYMBOLS = 5
MAX_DEPTH = 3
"""Directories deeper than this below the requested path are folded into their ancestor's count."""


@dataclass
class _Dir:
    files: int = 0
    languages: Counter[str] = field(default_factory=Counter)
    modules: list[tuple[int, str, str]] = field(default_factory=list)
    """(definitions, file name, docstring) for the files directly in this directory."""
    classes: list[tuple[int, str]] = field(default_factory=list)
    functions: list[tuple[int, str]] = field(default_factory=list)
    below: int = 0
    """Files in subdirectories deeper than MAX_DEPTH."""
    total: int = 0
    """Files here and in every folder below."""


def _prefix_filter(rel: str) -> tuple[str, list[str]]:
    if rel in (".", ""):
        return "", []
    return " WHERE f.path LIKE ? ESCAPE '\\'", [rel.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"]


def render_map(conn: sqlite3.Connection, rel: str, *, max_lines: int = 80) -> str:
    base = "" if rel in (".", "") else rel + "/"
    where, args = _prefix_filter(rel)
    dirs: dict[str, _Dir] = {}

    def dir_of(path: str) -> tuple[str, int]:
        inner = path[len(base):]
        parts = inner.split("/")[:-1]
        depth = len(parts)
        return "/".join(parts[:MAX_DEPTH]), depth

    counts = dict(conn.execute(
        "SELECT s.file_id, count(*) FROM symbols s JOIN files f ON f.id = s.file_id" + where + " GROUP BY s.file_id", args
    ).fetchall())
    for file_id, path, language, doc in conn.execute(
        "SELECT f.id, f.path, f.language, f.docstring FROM files f" + where + " ORDER BY f.path", args
    ):
        key, depth = dir_of(path)
        entry = dirs.setdefault(key, _Dir())
        entry.files += 1
        entry.languages[language] += 1
        if depth > MAX_DEPTH:
            entry.below += 1
        else:
            entry.modules.append((counts.get(file_id, 0), path.rsplit("/", 1)[-1], doc))
    if not dirs:
        return f"{rel}: no indexed files here"
    for path, kind, name, size in conn.execute(
        "SELECT f.path, s.kind, s.name, s.end_line - s.start_line FROM symbols s JOIN files f ON f.id = s.file_id"
        + (where + " AND" if where else " WHERE") + " s.top_level = 1 AND s.kind IN ('class', 'function')",
        args,
    ):
        key, depth = dir_of(path)
        if depth > MAX_DEPTH:
            continue
        target = dirs[key].classes if kind == "class" else dirs[key].functions
        target.append((size, name))

    # Folders that hold only folders still get a line, so the tree has no gaps.
    for key in list(dirs):
        parts = key.split("/") if key else []
        for i in range(len(parts)):
            dirs.setdefault("/".join(parts[:i]), _Dir())
    for key, entry in dirs.items():
        for ancestor in _ancestors(key):
            dirs[ancestor].total += entry.files
    total = sum(d.files for d in dirs.values())
    lines = [f"map of {rel} ({_files(total)}; call read_map with a directory path for more detail)"]
    ordered = sorted(dirs)
    for shown, key in enumerate(ordered):
        if len(lines) >= max_lines:
            lines.append(
                f"… cut: {len(ordered) - shown} more directories; call read_map with path={base + key!r} or a subdirectory"
            )
            break
        lines.append(_describe(base, key, dirs[key]))
    return "\n".join(lines)


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _ancestors(key: str) -> list[str]:
    """``a/b/c`` → ``["a/b/c", "a/b", "a", ""]`` (the folder itself and every folder above it)."""
    parts = key.split("/") if key else []
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def _describe(base: str, key: str, entry: _Dir) -> str:
    depth = key.count("/") + 1 if key else 0
    name = (base + key + "/") if key else (base or "./")
    langs = ", ".join(lang for lang, _ in entry.languages.most_common(3))
    if entry.files == entry.below:  # nothing directly here (deeper files are folded in)
        return f"{'  ' * depth}{name} — {_files(entry.total)} in subfolders"
    parts = [f"{'  ' * depth}{name} — {_files(entry.files - entry.below)} ({langs})"]
    if entry.below:
        parts[0] += f", {entry.below} more in deeper folders"
    mains = sorted(entry.modules, key=lambda m: (-m[0], m[1]))[:MAIN_FILES]
    described = [f"{n}: {doc[:70]}" if doc else n for _, n, doc in mains]
    if described:
        parts.append("main: " + "; ".join(described))
    for label, items in (("classes", entry.classes), ("functions", entry.functions)):
        names = list(dict.fromkeys(n for _, n in sorted(items, key=lambda x: (x[1].startswith("_"), -x[0], x[1]))))[:MAIN_SYMBOLS]
        if names:
            parts.append(f"{label}: {', '.join(names)}")
    return ". ".join(parts)
