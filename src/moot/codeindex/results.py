"""What a search or a symbol lookup returns: plain dataclasses, easy to print or serialise."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class CodeHit:
    """One chunk of code or text that matched a search."""

    path: str
    """Relative to the indexed root, with forward slashes."""
    start_line: int
    """First line of the chunk (1-based, inclusive)."""
    end_line: int
    """Last line of the chunk (inclusive)."""
    kind: str
    """``function``, ``class``, ``method``, ``module`` or ``text`` (docs, config, other files)."""
    name: str
    """The qualified name of a definition, or the file (and heading) for module and text chunks."""
    snippet: str
    """A few numbered lines of the chunk, those with the query's words first."""
    score: float
    """Higher is better; comparable only within one result list."""

    def header(self) -> str:
        """``path:start-end kind name``, the line a model cites."""
        return f"{self.path}:{self.start_line}-{self.end_line} {self.kind} {self.name}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SymbolInfo:
    """A definition with what the index knows about its use (resolved by name, not by type)."""

    name: str
    qualified_name: str
    """Module path plus enclosing classes: ``pkg.mod.Class.method``."""
    kind: str
    """``function``, ``class`` or ``method``."""
    path: str
    start_line: int
    end_line: int
    signature: str
    """The definition's first line(s) up to the body, whitespace collapsed."""
    docstring: str
    """First line of the docstring (Python) or of the doc comment above it (JS/TS); may be empty."""
    callers: list[str] = field(default_factory=list)
    """Qualified names of the definitions (or modules) that call something of this name."""
    callees: list[str] = field(default_factory=list)
    """Names this definition calls, in order of first call."""
    references: list[str] = field(default_factory=list)
    """``path:line`` of every use of the name outside its own definition line."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
