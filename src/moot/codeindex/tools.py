"""The index as tools for a model: ``search_code``, ``resolve_symbol``, ``read_file``, ``read_map``.

Outputs are compact text a 0.5B model can use: a ``path:start-end`` header per item, numbered
lines, and a note whenever something was cut, saying how to get the rest. Every path goes
through :func:`moot.codeindex.sandbox.confine`, so a model cannot read outside the indexed
root with ``..``, an absolute path or a symlink. Mistakes come back as tool errors (with the
fix) that the model can correct, never as a crash of the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

from moot.codeindex.index import CodeIndex
from moot.errors import MootError
from moot.runtime import Tool

MAX_OUTPUT_CHARS = 4000
"""About 1,000 tokens: a researcher's context stays small, as the seed wants."""
SEARCH_RESULTS = 8
SYMBOLS_SHOWN = 4
LIST_ITEMS = 10


class CodeToolError(ValueError):
    """A tool call the model can fix (bad path, unknown mode); the text names the fix."""


def _model_errors(fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except MootError as exc:
            raise CodeToolError(exc.one_line()) from None

    return wrapper


def _cap(text: str, note: str) -> str:
    """Cut ``text`` at :data:`MAX_OUTPUT_CHARS` on a line boundary, ending with ``note``."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_OUTPUT_CHARS)
    kept = text[: cut if cut > 0 else MAX_OUTPUT_CHARS]
    dropped = text[len(kept):].count("\n")
    return f"{kept}\n… cut: {dropped} more lines; {note}"


def _listing(items: list[str], total: int | None = None) -> str:
    shown = items[:LIST_ITEMS]
    more = (total if total is not None else len(items)) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "") if shown else "none found"


def code_tools(index: CodeIndex) -> list[Tool]:
    """The four tools over one open index, ready for ``SubAgent(tools=...)``."""

    @_model_errors
    def search_code(query: str, mode: Literal["lexical", "semantic", "hybrid"] = "hybrid") -> str:
        """Find code by words or names (start here): returns matching functions, classes and docs with path:line ranges.

        Args:
            query: Words or identifiers to look for, e.g. "parse config file" or "read_file".
            mode: lexical (exact words), semantic (meaning; needs embeddings) or hybrid (both).
        """
        hits = index.search(query, mode=mode, limit=SEARCH_RESULTS)
        if not hits:
            return f"no results for {query!r}; try other words, an identifier, or read_map to look around"
        blocks = [f"{len(hits)} results for {query!r}:"]
        for n, hit in enumerate(hits, start=1):
            blocks.append(f"[{n}] {hit.header()}\n{hit.snippet}")
        return _cap("\n".join(blocks), "call read_file on a result's path and lines to see it whole")

    @_model_errors
    def resolve_symbol(name: str, kind: Literal["function", "class", "method"] | None = None) -> str:
        """Find where a function, class or method is defined, and who calls it, what it calls, and where it is used.

        Args:
            name: The symbol's name, e.g. "read_file", or a qualified name like "pkg.mod.Class.method".
            kind: Only symbols of this kind: function, class or method.
        """
        found = index.resolve_symbol(name, kind)
        if not found:
            return f"no definition named {name!r}" + (f" of kind {kind}" if kind else "") + "; try search_code"
        calls, uses = index.count_references(found[0].name)
        blocks = [f"{len(found)} definition{'s' if len(found) != 1 else ''} of {name!r}:"]
        for s in found[:SYMBOLS_SHOWN]:
            lines = [f"{s.path}:{s.start_line}-{s.end_line} {s.kind} {s.qualified_name}", f"  {s.signature}"]
            if s.docstring:
                lines.append(f"  doc: {s.docstring}")
            lines.append(f"  calls: {_listing(s.callees)}")
            lines.append(f"  called by: {_listing(s.callers, calls)}")
            lines.append(f"  used at: {_listing(s.references, uses)}")
            blocks.append("\n".join(lines))
        if len(found) > SYMBOLS_SHOWN:
            blocks.append(f"… cut: {len(found) - SYMBOLS_SHOWN} more definitions; pass a qualified name or kind")
        blocks.append("(callers and uses are matched by name only)")
        return _cap("\n".join(blocks), "pass a qualified name to narrow it")

    @_model_errors
    def read_file(path: str, start: int | None = None, end: int | None = None) -> str:
        """Read numbered lines of one file whose path you know from search_code or read_map (not for searching).

        Args:
            path: The file's path relative to the repository root, as shown by search_code.
            start: First line to show (1 = the beginning).
            end: Last line to show.
        """
        return index.read_file(path, start, end, max_chars=MAX_OUTPUT_CHARS)

    @_model_errors
    def read_map(path: str = ".") -> str:
        """Show the repository's folders with a summary of each: main files, classes and functions.

        Args:
            path: A folder relative to the repository root; "." for the whole repository.
        """
        return _cap(index.read_map(path), "call read_map with a subfolder path")

    return [Tool.from_function(fn) for fn in (search_code, resolve_symbol, read_file, read_map)]


__all__ = ["MAX_OUTPUT_CHARS", "CodeToolError", "code_tools"]
