"""The tools a board agent may use, by name: the allow-list that makes self-extension safe.

A registered agent spec (built-in or drafted by the breakdown agent) names its tools; only
the names in :data:`TOOL_ALLOW_LIST` exist, and each is built here for one workspace. There is
no tool that runs model-written code: ``calculate`` parses arithmetic with :mod:`ast`, and
``run_command`` (off unless the terminal is enabled) runs one allow-listed program with
``shell=False``.

Every path a tool touches is confined to the workspace: absolute paths, ``..`` and symlinks
that lead outside are refused, and the board's own folders (``tasks/``, ``agents/``) are
read-only to agents so that an agent cannot forge tasks or register specs behind the
validator's back.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterable
from pathlib import Path

from moot.errors import ConfigError, MootError
from moot.files import contains_credentials, looks_like_credentials, open_regular, read_bytes
from moot.runtime.calculator import safe_calculate
from moot.runtime.tools import Tool

TERMINAL_ENV = "MOOT_BOARD_TERMINAL"
"""Set to ``1`` to enable the terminal agent and the ``run_command`` tool (off by default)."""

TOOL_ALLOW_LIST: tuple[str, ...] = (
    "search_documents",
    "read_file",
    "write_file",
    "list_files",
    "calculate",
    "run_command",
)
"""Every tool name an agent spec may use; ``run_command`` only while the terminal is enabled."""

COMMAND_ALLOW_LIST: frozenset[str] = frozenset(
    {"ls", "cat", "wc", "grep", "head", "tail", "sort", "uniq", "pwd", "date", "du", "echo"}
)
"""Programs ``run_command`` may start. No interpreter, shell, package manager or ``find``
(``-exec``) — nothing that can run code a model wrote."""

PROTECTED_DIRS = ("tasks", "agents")
"""Board internals under the workspace that agents may not write."""

DOCUMENT_DIRS = ("context", "results")
"""Where a board's documents live: inputs under context/, deliverables under results/."""

PATH_TOOLS = frozenset({"read_file", "write_file", "list_files", "search_documents"})
"""Tools that take workspace paths; an agent with any of them is shown the workspace's files."""

MAX_LISTED_FILES = 40

TEXT_SUFFIXES = {".txt", ".md", ".rst", ".json", ".csv", ".tsv", ".yaml", ".yml", ".toml", ".html", ".py", ".log"}
MAX_READ_BYTES = 200_000
MAX_WRITE_BYTES = 200_000
MAX_OUTPUT_CHARS = 4_000
_SHELL_META = re.compile(r"[;&|$`<>\\\n\r*?!{}()\[\]~]")
_WORD = re.compile(r"[a-z0-9]+")


def terminal_enabled(flag: bool | None = None) -> bool:
    """The terminal is off unless ``flag`` is true or ``MOOT_BOARD_TERMINAL=1``."""
    if flag is not None:
        return flag
    return os.environ.get(TERMINAL_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class WorkspaceEscapeError(MootError):
    """A path leads outside the workspace (or into the board's own folders)."""

    fix = "use a relative path inside the board workspace, without '..'"


# --------------------------------------------------------------------------- paths


def confine(workspace: Path, relative: str, *, for_write: bool = False) -> Path:
    """The resolved path of ``relative`` inside ``workspace``, or :class:`WorkspaceEscapeError`.

    Resolving follows symlinks, so a link inside the workspace that points outside is refused.
    """
    text = (relative or ".").strip()
    if "\x00" in text:
        raise WorkspaceEscapeError("a path may not contain NUL bytes")
    candidate = Path(text)
    if candidate.is_absolute() or text.startswith("~"):
        raise WorkspaceEscapeError(f"absolute path {text!r} is not allowed")
    if ".." in candidate.parts:
        raise WorkspaceEscapeError(f"path {text!r} contains '..'")
    root = workspace.resolve()
    resolved = (root / candidate).resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise WorkspaceEscapeError(f"path {text!r} leads outside the workspace")
    if for_write:
        inner = resolved.relative_to(root).parts
        if not inner or inner[0] in PROTECTED_DIRS:
            raise WorkspaceEscapeError(f"path {text!r} is the board's own storage; agents may not write there")
    return resolved


def document_files(workspace: Path) -> list[str]:
    """Relative paths of the files under context/ and results/ (hidden and escaping files left out)."""
    root = workspace.resolve()
    found: list[str] = []
    for folder in DOCUMENT_DIRS:
        base = workspace / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.name.startswith(".") or not path.is_file() or not path.resolve().is_relative_to(root):
                continue
            if looks_like_credentials(path.relative_to(workspace).as_posix()):
                continue
            found.append(path.relative_to(workspace).as_posix())
    return found


def workspace_listing(workspace: Path) -> str:
    """The document files an agent can use, one line per folder, for the executor's context."""
    files = document_files(workspace)
    lines = []
    for folder in DOCUMENT_DIRS:
        names = [f for f in files if f.startswith(folder + "/")]
        shown = ", ".join(names[:MAX_LISTED_FILES]) + (f" (+{len(names) - MAX_LISTED_FILES} more)" if len(names) > MAX_LISTED_FILES else "")
        lines.append(f"{folder}/: {shown or '(no files)'}")
    return "\n".join(lines) + "\nUse these exact paths; inputs are under context/, deliverables go under results/."


def same_name_elsewhere(workspace: Path, wanted: str) -> list[str]:
    """Files under context/ and results/ with the name ``wanted`` asked for (case-insensitive)."""
    name = Path(wanted.strip()).name.lower()
    if not name:
        return []
    return [f for f in document_files(workspace) if Path(f).name.lower() == name]


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


# --------------------------------------------------------------------------- tool factories


def search_documents_tool(workspace: Path, knowledge_bases: Iterable[str] = ()) -> Tool:
    """Lexical search over text files under ``workspace/context`` and the named knowledge bases."""
    kb_names = [str(k) for k in knowledge_bases]

    def search_documents(query: str) -> str:
        """Search the local documents and knowledge bases (there is no web) for passages about a query.

        Args:
            query: A few keywords describing what to find.
        """
        wanted = _tokens(query)
        if not wanted:
            return "the query has no searchable words"
        hits: list[tuple[float, str]] = []
        context_dir = workspace / "context"
        if context_dir.is_dir():
            root = workspace.resolve()
            for path in sorted(context_dir.rglob("*")):
                if path.suffix.lower() not in TEXT_SUFFIXES or not path.is_file():
                    continue
                try:  # a link out of the workspace, a FIFO, a file too large to scan, a key: skipped
                    data = read_bytes(path.relative_to(workspace), root=root, max_bytes=MAX_READ_BYTES)
                except MootError:
                    continue
                lines = data.decode("utf-8", errors="replace").splitlines()
                for number, line in enumerate(lines, 1):
                    overlap = len(wanted & _tokens(line))
                    if overlap:
                        rel = path.relative_to(workspace).as_posix()
                        hits.append((overlap / len(wanted), f"[{rel}:{number}] {line.strip()[:300]}"))
        for name in kb_names:
            hits.extend(_search_kb(workspace, name, query))
        if not hits:
            return f"no local document mentions {query!r}"
        hits.sort(key=lambda h: -h[0])
        return "\n".join(text for _, text in hits[:6])

    return Tool.from_function(search_documents)


def _search_kb(workspace: Path, name: str, query: str) -> list[tuple[float, str]]:
    """Hits from one knowledge base; a missing one is skipped (searching must never create one)."""
    from moot.memory import KnowledgeBase
    from moot.memory.store import resolve_path

    try:
        path = resolve_path(name)
        if "/" in name or name.startswith("."):
            path = confine(workspace, name)  # a path must stay inside the workspace
        if not path.is_file():
            return []
        with KnowledgeBase.open(path) as kb:
            found = kb.search(query, limit=5)
    except MootError:
        return []
    return [(1.0 + hit.score / 100, f"[kb {name}] {hit.fact.content}") for hit in found]


def file_tools(workspace: Path) -> dict[str, Tool]:
    """``read_file``, ``write_file`` and ``list_files``, confined to ``workspace``."""

    def read_file(path: str) -> str:
        """Read a text file inside the workspace (inputs are under context/, results under results/).

        Args:
            path: A path relative to the workspace, like context/notes.md.
        """
        target = confine(workspace, path)
        if not target.is_file():
            return _missing_file(workspace, path)
        return _read_text(workspace, target)

    def write_file(path: str, content: str) -> str:
        """Write a text file inside the workspace (results/ is the usual place).

        Args:
            path: A path relative to the workspace, like results/summary.md.
            content: The text to write.
        """
        target = confine(workspace, path, for_write=True)
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise MootError(f"content is {len(data)} bytes; the limit is {MAX_WRITE_BYTES}")
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, target)
        return f"wrote {len(data)} bytes to {target.relative_to(workspace.resolve()).as_posix()}"

    def list_files(path: str = ".") -> str:
        """List the files in a folder of the workspace.

        Args:
            path: A folder relative to the workspace; '.' is the workspace itself.
        """
        target = confine(workspace, path)
        if not target.is_dir():
            return f"no folder {path!r} in the workspace"
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir() if not p.name.startswith("."))
        return "\n".join(names[:200]) or "(empty)"

    return {t.name: t for t in (Tool.from_function(f) for f in (read_file, write_file, list_files))}


def _read_text(workspace: Path, target: Path) -> str:
    """At most :data:`MAX_READ_BYTES` of a workspace file, never one that holds credentials."""
    root = workspace.resolve()
    rel = target.relative_to(root).as_posix()
    if looks_like_credentials(rel):
        raise MootError(f"{rel} looks like a credentials file; agents may not read it")
    # The one safe reader (no link out, no FIFO or device); no more is read than is shown.
    with open_regular(rel, root=root, max_bytes=None) as handle:
        data = handle.read(MAX_READ_BYTES)
    if contains_credentials(data):
        raise MootError(f"{rel} holds a key or token; agents may not read it")
    return data.decode("utf-8", errors="replace")


def _missing_file(workspace: Path, path: str) -> str:
    """Path help for a file that is not there: the same name elsewhere, else what does exist.

    Small models guess folders (``results/wind.md`` for ``context/wind.md``). When exactly one
    file of that name exists under context/ or results/, reading it is what was meant, so it is
    read and the answer says so; with several, they are listed to choose from.
    """
    matches = [m for m in same_name_elsewhere(workspace, path) if m != Path(path).as_posix()]
    if len(matches) == 1:
        target = confine(workspace, matches[0])
        text = _read_text(workspace, target)
        return f"[{path} does not exist; this is {matches[0]}, the only file of that name]\n{text}"
    if matches:
        return f"no file {path!r}; files of that name: {', '.join(matches)} — read one of those paths"
    existing = document_files(workspace)
    shown = ", ".join(existing[:MAX_LISTED_FILES]) or "none"
    return f"no file {path!r} in the workspace; files under context/ and results/: {shown}"


def calculate_tool() -> Tool:
    def calculate(expression: str) -> str:
        """Compute an arithmetic expression exactly, like (12 + 30) * 2.

        Args:
            expression: Numbers with + - * / // % ** and parentheses.
        """
        return str(safe_calculate(expression))

    return Tool.from_function(calculate)


def validate_command(command: str, workspace: Path) -> list[str]:
    """The argument vector for an allow-listed command, or a one-line :class:`MootError`."""
    if _SHELL_META.search(command):
        raise MootError("shell syntax (; | & $ ` < > * ? ~ brackets, newlines) is not allowed; give one plain command")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise MootError(f"cannot parse the command: {exc}") from None
    if not argv:
        raise MootError("the command is empty")
    if argv[0] not in COMMAND_ALLOW_LIST:
        allowed = ", ".join(sorted(COMMAND_ALLOW_LIST))
        raise MootError(f"command {argv[0]!r} is not allow-listed; allowed: {allowed}")
    for argument in argv[1:]:
        if not argument.startswith("-"):
            confine(workspace, argument)  # every path-like argument stays inside the workspace
    return argv


def run_command_tool(workspace: Path, *, enabled: bool) -> Tool:
    def run_command(command: str) -> str:
        """Run one allow-listed read-only command (ls, cat, wc, grep, head, tail, sort, uniq, du) in the workspace.

        Args:
            command: The command line, like "wc -l context/notes.txt".
        """
        if not enabled:
            raise MootError(f"the terminal is off; set {TERMINAL_ENV}=1 to enable it")
        argv = validate_command(command, workspace)
        completed = subprocess.run(  # noqa: S603 - argv is allow-listed and shell=False
            argv,
            shell=False,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=10,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
        )
        output = (completed.stdout + completed.stderr)[:MAX_OUTPUT_CHARS]
        return f"exit {completed.returncode}\n{output}"

    return Tool.from_function(run_command, timeout_s=15)


def build_tools(
    names: Iterable[str],
    *,
    workspace: Path,
    knowledge_bases: Iterable[str] = (),
    allow_terminal: bool | None = None,
) -> list[Tool]:
    """The tools for a spec's tool names; an unknown name raises :class:`ConfigError`."""
    enabled = terminal_enabled(allow_terminal)
    files: dict[str, Tool] | None = None
    tools: list[Tool] = []
    for name in dict.fromkeys(names):
        if name == "search_documents":
            tools.append(search_documents_tool(workspace, knowledge_bases))
        elif name in ("read_file", "write_file", "list_files"):
            files = files or file_tools(workspace)
            tools.append(files[name])
        elif name == "calculate":
            tools.append(calculate_tool())
        elif name == "run_command":
            tools.append(run_command_tool(workspace, enabled=enabled))
        else:
            raise ConfigError(
                f"tool {name!r} is not on the board's allow-list",
                fix=f"use only: {', '.join(TOOL_ALLOW_LIST)}",
            )
    return tools


__all__ = [
    "COMMAND_ALLOW_LIST",
    "DOCUMENT_DIRS",
    "PATH_TOOLS",
    "TERMINAL_ENV",
    "TOOL_ALLOW_LIST",
    "WorkspaceEscapeError",
    "build_tools",
    "confine",
    "terminal_enabled",
    "document_files",
    "same_name_elsewhere",
    "validate_command",
    "workspace_listing",
]
