"""Facts about code taken from the index, never from the model: definitions, callers, callees.

The 0.5B model cannot write a correct account of code from memory, but it can choose which
symbols matter. The researchers (and the single agent's draft) *nominate* symbols, from a
closed list of the names their search results show; this module resolves each against the
index and writes the relationship statements itself ("`check` is defined at
pkg/rules.py:3-5 … called by `app.run` at pkg/app.py:8"), so where a thing is defined and
who calls it comes from the symbol graph.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from moot.codeindex import CodeIndex

MAX_CANDIDATES = 24
"""Symbol names a researcher may choose from (its search results' definitions and calls)."""
MAX_RESOLVED = 4
"""Symbols resolved per researcher: the synthesizer's context is small and shared."""


class CallSite(BaseModel):
    """One place that calls a symbol."""

    caller: str
    """The calling definition's qualified name (or the module, for a call at module level)."""
    path: str
    line: int

    def location(self) -> str:
        return f"{self.path}:{self.line}"


class ResolvedSymbol(BaseModel):
    """A definition as the index knows it."""

    name: str
    qualified_name: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    callers: list[CallSite] = Field(default_factory=list)
    callees: list[str] = Field(default_factory=list)

    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}" if self.end_line > self.start_line else f"{self.path}:{self.start_line}"

    def statement(self, max_callers: int = 3, max_callees: int = 5) -> str:
        """One sentence written from the index, citing path:line for every place it names."""
        text = f"`{self.qualified_name}` ({self.kind}) is defined at {self.location()}"
        if self.signature:
            text += f" as `{_short(self.signature, 140)}`"
        text += "."
        if self.docstring:
            text += f" Its docstring: \"{_short(self.docstring, 160).rstrip('.')}.\""
        if self.callers:
            shown = ", ".join(f"`{c.caller}` ({c.location()})" for c in self.callers[:max_callers])
            more = f" and {len(self.callers) - max_callers} more" if len(self.callers) > max_callers else ""
            text += f" It is called by {shown}{more}."
        else:
            text += " No call of it was found in the repository."
        if self.callees:
            text += " It calls " + ", ".join(f"`{c}`" for c in self.callees[:max_callees]) + "."
        return text


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def resolve(index: CodeIndex, names: Iterable[str], limit: int = MAX_RESOLVED) -> list[ResolvedSymbol]:
    """The definitions of ``names`` (qualified or plain), in order, without repeats.

    A plain name with several definitions resolves to the first the index lists; a name the
    repository does not define is skipped (the model cannot add a symbol by naming it)."""
    out: list[ResolvedSymbol] = []
    seen: set[tuple[str, int]] = set()
    for name in names:
        name = name.strip().strip("`").removesuffix("()")
        if not name:
            continue
        for info in index.resolve_symbol(name)[:1]:
            key = (info.path, info.start_line)
            if key in seen:
                continue
            seen.add(key)
            sites = [CallSite(caller=c, path=p, line=n) for c, p, n in index.call_sites(info.name)
                     if not (p == info.path and info.start_line <= n <= info.end_line)]  # a recursive call is not a caller
            out.append(ResolvedSymbol(
                name=info.name, qualified_name=info.qualified_name, kind=info.kind, path=info.path,
                start_line=info.start_line, end_line=info.end_line, signature=info.signature,
                docstring=info.docstring, callers=sites,
                # calls of the repository's own code: `split` or `append` would only be noise
                callees=[c for c in info.callees if index.defined_as(c) is not None][:8],
            ))  # fmt: skip
        if len(out) >= limit:
            break
    return out


def candidates(index: CodeIndex, locations: Iterable[tuple[str, int, int]], limit: int = MAX_CANDIDATES) -> list[str]:
    """The symbols a researcher may nominate: the definitions at its evidence locations and the
    names those definitions call, as qualified names the index can resolve."""
    out: list[str] = []

    def add(name: str) -> None:
        if name and name not in out and len(out) < limit:
            out.append(name)

    # The definitions at each location, innermost first; the two innermost also give the
    # repository functions they call (one symbol lookup each, no second pass).
    at_locations = [index.symbols_in(path, start, end, limit=4) for path, start, end in locations]
    for names in at_locations:
        for name in names:
            add(name)
    for names in at_locations:
        for name in names[:2]:
            for info in index.resolve_symbol(name)[:1]:
                for callee in info.callees:
                    if (qualified := index.defined_as(callee)) is not None:
                        add(qualified)
    return out


def render_facts(resolved: list[ResolvedSymbol]) -> str:
    """The resolved symbols as lines for the synthesizer's evidence."""
    return "\n".join(f"- {r.statement()}" for r in resolved)


def index_section(resolved: list[ResolvedSymbol], limit: int = 6) -> str:
    """The part of the answer that moot writes from the index (not the model)."""
    if not resolved:
        return ""
    lines = [f"- {r.statement()}" for r in resolved[:limit]]
    return "From the code index (written by moot from the symbol graph):\n" + "\n".join(lines)


__all__ = [
    "CallSite",
    "ResolvedSymbol",
    "candidates",
    "index_section",
    "render_facts",
    "resolve",
]
