"""Finding the files to index, one at a time: .gitignore, default skips, binary and huge files.

The walk is a generator over ``os.scandir``: it never builds a list of the tree, so a
repository of 50,000 files costs memory for one directory listing at a time, not for all of
them. Ignore rules follow git: the root's ``.gitignore`` and every nested one, each applying
below its own directory, plus ``.git/info/exclude``.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

# The credential rules live with the one safe file reader; re-exported here, where they started.
from moot.files import (
    SECRET_DIR_PATHS,
    SECRET_DIRS,
    SECRET_NAMES,
    SECRET_SUFFIXES,
    UnsafeFileError,
    contains_credentials,
    looks_like_credentials,
    read_text,
)

CODE_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
}
"""Extensions parsed by tree-sitter into functions, classes and methods."""

TEXT_EXTENSIONS = frozenset(
    ".md .markdown .rst .txt .toml .cfg .ini .json .yaml .yml .sh .bash .go .rs .c .h .cc .cpp .hpp"
    " .java .kt .rb .php .css .scss .html .sql .graphql .proto .vue .svelte".split()
)
"""Other files worth searching (docs, config, other languages), chunked by line windows."""

TEXT_NAMES = frozenset({"README", "Makefile", "Dockerfile", "LICENSE", "CHANGELOG", "setup.cfg", "requirements.txt"})

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", "build", "dist", ".eggs",
        "site-packages", ".next", ".nuxt", "coverage", "htmlcov", ".idea", ".vscode", "target",
    }
)
"""Directories that hold tools' output or other people's code, never the project's own source."""

SKIP_SUFFIXES = (".egg-info", ".dist-info")

MAX_CODE_BYTES = 1_000_000
"""A source file above this is generated or vendored; it is skipped and counted as huge."""
MAX_TEXT_BYTES = 256_000
"""The same cap for docs and config: a 5 MB JSON fixture is data, not documentation."""
SNIFF_BYTES = 8192
"""A NUL byte in the first bytes marks a binary file (git uses the same test)."""
MINIFIED_LINE_CHARS = 110
"""A script or style sheet whose lines average more than this is minified (the test GitHub's
linguist uses): one line of 40,000 characters is a build's output, not code anyone reads, and a
package that ships one ships the readable build beside it."""
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", ".pyi")
"""Files that declare an interface and hold no code that runs: ``.d.ts`` declarations and ``.pyi`` stubs."""


@dataclass(frozen=True)
class FoundFile:
    """A file the walk wants indexed (or reports as skipped)."""

    path: Path
    """Absolute path."""
    rel: str
    """Relative to the root, forward slashes."""
    language: str
    """``python``, ``javascript``, ``typescript``, ``tsx`` or ``text``."""
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Skipped:
    """A file left out, and why (``huge``, ``binary``, ``minified``, ``symlink``, ``special`` (a
    FIFO, device or socket), ``unreadable``, ``credentials``)."""

    rel: str
    reason: str


def language_of(name: str) -> str | None:
    """The language a file is indexed as, or ``None`` when it is not indexed at all."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in CODE_LANGUAGES:
        return CODE_LANGUAGES[suffix]
    if suffix in TEXT_EXTENSIONS or name in TEXT_NAMES:
        return "text"
    return None


MAX_IGNORE_BYTES = 1_000_000
"""A .gitignore larger than this is not a real one; it is ignored itself."""


def _read_spec(path: Path) -> pathspec.PathSpec | None:
    try:  # a .gitignore may be a FIFO or a link out of the tree like any other file
        lines = read_text(path, root=path.parent, max_bytes=MAX_IGNORE_BYTES, credentials=False).splitlines()
    except UnsafeFileError:
        return None
    lines = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


MANIFEST_ENTRY_KEYS = ("main", "module", "types", "typings", "browser", "bin", "exports")
"""The fields of an npm ``package.json`` that name the files a package ships to its users."""


def shipped_dirs(root: Path) -> frozenset[str]:
    """The top-level folders that the root's ``package.json`` names as the package's entry points
    (``"main": "build/lib/index.js"`` → ``build``). A published npm package often ships only
    compiled code there, so a folder that would be skipped as a build's output (``build``,
    ``dist``) is the package's code; a ``.gitignore`` that ignores it still wins (in a source
    checkout, the build output beside the sources).

    When the Node entry point (``main``) lies in a folder that is not a build's (``"main":
    "lib/index.js"`` beside ``"browser": "dist/index.js"``), the build folders hold a bundle of that
    same code for other environments: none is kept, so each definition is indexed once, where it
    was written. Only ``main`` counts: ``types`` or ``bin`` in another folder often sit beside
    compiled code that ``main`` names.

    Likewise when ``main`` is a build but ``module`` (the ES-module entry) is a file outside the
    build folders that imports nothing from them (axios: ``"main": "./dist/node/axios.cjs"``,
    ``"module": "./index.js"``, which imports ``./lib/axios.js``): the package ships the code
    as written, and its builds are bundles of it."""
    manifest = root / "package.json"
    try:
        data = json.loads(read_text(manifest, root=root, max_bytes=MAX_TEXT_BYTES, credentials=False))
    except (UnsafeFileError, OSError, ValueError):
        return frozenset()
    if not isinstance(data, dict):
        return frozenset()
    found: set[str] = set()

    def collect(value: object) -> None:
        if isinstance(value, str):
            parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
            if len(parts) > 1 and parts[0] != "..":
                found.add(parts[0])
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(data.get("main"))
    if any(folder not in SKIP_DIRS and (root / folder).is_dir() for folder in found):
        return frozenset()
    if _written_module_entry(root, data.get("module")):
        return frozenset()
    for key in MANIFEST_ENTRY_KEYS:
        collect(data.get(key))
    return frozenset(found & SKIP_DIRS - {"node_modules", "site-packages"})


_IMPORTED = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']""")
"""The module specifier of an ``import … from "x"``, ``import("x")``, ``import "x"`` or ``require("x")``: a format."""


def _written_module_entry(root: Path, entry: object) -> bool:
    """Whether a manifest's ``module`` names a file outside the build folders whose relative
    imports stay outside them too (a wrapper that re-exports ``./dist/index.js`` is no source)."""
    if not isinstance(entry, str):
        return False
    parts = [p for p in entry.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or parts[0] in SKIP_DIRS or ".." in parts:
        return False
    try:
        text = read_text(root.joinpath(*parts), root=root, max_bytes=MAX_CODE_BYTES, credentials=False)
    except (UnsafeFileError, OSError, ValueError):
        return False
    folder = "/".join(parts[:-1])
    for specifier in _IMPORTED.findall(text):
        if specifier.startswith("."):
            target = posixpath.normpath(posixpath.join(folder, specifier)).split("/")[0]
            if target in SKIP_DIRS or target == "..":
                return False
    return True


def walk(root: Path) -> Iterator[FoundFile | Skipped]:
    """Every indexable file under ``root`` in a stable order, and every file skipped with a reason."""
    root = root.resolve()
    specs: list[tuple[str, pathspec.PathSpec]] = []
    exclude = _read_spec(root / ".git" / "info" / "exclude")
    if exclude:
        specs.append(("", exclude))
    yield from _walk_dir(root, root, "", specs, keep=shipped_dirs(root))


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec]]) -> bool:
    for base, spec in specs:
        sub = rel[len(base) + 1 :] if base else rel
        if spec.match_file(sub + "/" if is_dir else sub):
            return True
    return False


def _walk_dir(
    root: Path, directory: Path, rel_dir: str, specs: list[tuple[str, pathspec.PathSpec]],
    keep: frozenset[str] = frozenset(),
) -> Iterator[FoundFile | Skipped]:
    local = _read_spec(directory / ".gitignore")
    if local:
        specs = [*specs, (rel_dir, local)]
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    subdirs: list[os.DirEntry[str]] = []
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = not is_link and entry.is_dir()
        except OSError:
            continue
        if is_dir:
            skipped_name = entry.name in SKIP_DIRS and rel not in keep
            if skipped_name or entry.name.endswith(SKIP_SUFFIXES) or _ignored(rel, True, specs):
                continue
            if entry.name.lower() in SECRET_DIRS or rel.lower() in SECRET_DIR_PATHS:
                continue
            subdirs.append(entry)
            continue
        if looks_like_credentials(rel):
            yield Skipped(rel, "credentials")
            continue
        language = language_of(entry.name)
        if language is None or _ignored(rel, False, specs):
            continue
        if is_link:
            # A link may lead outside the root; its target, if inside, is indexed under its own path.
            yield Skipped(rel, "symlink")
            continue
        try:
            regular = entry.is_file(follow_symlinks=False)
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            yield Skipped(rel, "unreadable")
            continue
        if not regular:  # a FIFO would block the reader forever, a device never ends
            yield Skipped(rel, "special")
            continue
        cap = MAX_TEXT_BYTES if language == "text" else MAX_CODE_BYTES
        if stat.st_size > cap:
            yield Skipped(rel, "huge")
            continue
        yield FoundFile(Path(entry.path), rel, language, stat.st_size, stat.st_mtime_ns)
    for entry in subdirs:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        yield from _walk_dir(root, Path(entry.path), rel, specs)


_SOURCE_MAP = re.compile(r"\s*(?://|/\*)\s*[#@]\s*sourceMappingURL=")


def is_minified(rel: str, text: str) -> bool:
    """Whether a script or style sheet is a minified build (``.min.js``, or lines that average
    more than :data:`MINIFIED_LINE_CHARS`). Other languages are never minified this way."""
    name = rel.rsplit("/", 1)[-1].lower()
    if not name.endswith((".js", ".mjs", ".cjs", ".css")):
        return False
    if ".min." in name:
        return True
    # A readable build may end with its source map inline (one base64 line of 40 kB).
    lines = [line for line in text.splitlines() if not _SOURCE_MAP.match(line)]
    return bool(lines) and sum(len(line) for line in lines) / len(lines) > MINIFIED_LINE_CHARS


def is_declaration(path: str) -> bool:
    """Whether a file only declares types and signatures (:data:`DECLARATION_SUFFIXES`)."""
    return path.lower().endswith(DECLARATION_SUFFIXES)


def is_binary(data: bytes) -> bool:
    """Whether file content looks binary (a NUL byte near the start)."""
    return b"\x00" in data[:SNIFF_BYTES]


def decode(data: bytes) -> str:
    """File bytes as text: UTF-8 (a BOM is dropped), undecodable bytes replaced, never an error."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")
