"""How much a piece of code speaks to a question: the words they share, counted in Python.

The 0.5B model chooses symbols and lines from lists it is shown, and it mostly takes the first
ones. So the order of those lists decides a great deal, and it is computed here, not by the
model: the question's content words against a symbol's name, docstring and body (or against
one line), with a little less for things that rarely answer a question (``__repr__``, a class
whose methods are listed on their own).
"""

from __future__ import annotations

import re
from typing import Any

from moot.codeindex import CodeIndex
from moot.codeindex.terms import STOPWORDS, identifier_parts
from moot.codeindex.walk import is_declaration

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")

MAX_SCORED_LINES = 120
"""Lines of a definition read to score it (a 700-line class is not read whole)."""
MAX_CLASS_LINES = 30
"""A class is scored by its head (docstring, attributes): its methods are definitions of their own."""


def stem(word: str) -> str:
    """"redirects", "redirected", "redirecting" → "redirect": enough for matching code words."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def question_terms(question: str) -> set[str]:
    """The question's content words, lower-cased, split like identifiers, lightly stemmed."""
    terms: set[str] = set()
    for word in _WORD.findall(question):
        for part in identifier_parts(word) or [word.lower()]:
            if part not in STOPWORDS and (len(part) > 2 or part.isdigit()):
                terms.add(stem(part))
    return terms


def line_terms(text: str) -> set[str]:
    """The words of a line of code or prose, whole and split like identifiers, stemmed."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        out.add(stem(word.lower()))
        out.update(stem(p) for p in identifier_parts(word))
    return out


def matched_terms(words: set[str], terms: set[str]) -> set[str]:
    """The question's terms found among some words: the same stem, or one a prefix of the
    other when both have four letters or more ("confirm" and "confirmation", "decod" and
    "decoder")."""
    found = words & terms
    for term in terms - found:
        if len(term) >= 4 and any(len(w) >= 4 and (w.startswith(term) or term.startswith(w)) for w in words):
            found.add(term)
    return found


def definition(index: CodeIndex, name: str) -> Any | None:
    """The definition ``name`` means: the index's first, except that of several definitions
    with its qualified name (``@overload`` stubs, then the implementation; a property's getter
    and setter) the longest is the one whose body says what it does."""
    return first_defined(index.resolve_symbol(name))


def first_defined(infos: list[Any]) -> Any | None:
    """Of definitions the index listed, the first; of several with its qualified name, the longest."""
    if not infos:
        return None
    same = [i for i in infos if i.qualified_name == infos[0].qualified_name and i.path == infos[0].path]
    return max(same, key=lambda i: (i.end_line - i.start_line, -i.start_line))


def body_lines(index: CodeIndex, path: str, start: int, end: int, kind: str) -> list[tuple[int, str]]:
    """The lines of a definition that are read for it: a class only by its head."""
    span = MAX_CLASS_LINES if kind == "class" else MAX_SCORED_LINES
    return index.source_lines(path, start, min(end, start + span - 1))


def symbol_relevance(index: CodeIndex, qualified_name: str, terms: set[str]) -> float:
    """How well one definition matches the question's words: words in its own name count most
    (2 each), then its docstring (1), then its body (0.5 each distinct word), and a word its
    decisions test or act on counts 0.5 more (see :func:`decision_terms`); a dunder method
    other than ``__init__``/``__call__`` and a class (whose methods are candidates of their own)
    count less, and one that does nothing (a stub, or a declaration in a ``.d.ts`` or ``.pyi``
    file) much less. 0 for a name the index does not define."""
    info = definition(index, qualified_name)
    if info is None or not terms:
        return 0.0
    named = matched_terms({stem(p) for p in identifier_parts(info.name)}, terms)
    documented = matched_terms(line_terms(info.docstring), terms) - named
    body: set[str] = set()
    lines = body_lines(index, info.path, info.start_line, info.end_line, info.kind)
    for _, text in lines:
        body |= line_terms(text)
    in_body = matched_terms(body, terms) - named - documented
    score = 2.0 * len(named) + 1.0 * len(documented) + 0.5 * len(in_body)
    if info.kind != "class":
        score += 0.5 * len(matched_terms(decision_terms(index, info), terms))
    if info.name.startswith("__") and info.name not in ("__init__", "__call__"):
        score -= 2.0
    if is_stub(lines) or is_declaration(info.path):
        score -= 3.0
    if info.kind == "class":
        score -= 0.5
    return score


def decision_terms(index: CodeIndex, info: Any) -> set[str]:
    """The words of what a definition decides: its conditions and the first lines of what each
    branch does (:meth:`CodeIndex.decisions`), and its raises. A question asks how something is
    decided, and of two definitions that mention its words, the one that branches on them (or
    whose branch does them) is the one that decides; one that only passes them along is not. A
    ``return`` that is no branch's is the way through, not a decision: a one-line getter that
    returns the word does not count it twice."""
    words: set[str] = set()
    for decision in index.decisions(info.path, info.start_line, info.end_line):
        if decision.kind == "return":
            continue
        words |= line_terms(decision.condition or decision.text)
        for _, text in decision.outcome:
            words |= line_terms(text)
    return words


_STUB_LINE = re.compile(r"(?:pass|\.\.\.|raise NotImplementedError\b.*|return NotImplemented)(?:\s*#.*)?$")


def is_stub(lines: list[tuple[int, str]]) -> bool:
    """Whether a definition's body does nothing (``pass``, ``...``, ``raise NotImplementedError``):
    an abstract method or a protocol's, which says nothing about what the code does (httpx's
    ``ContentDecoder.decode`` was resolved for "how are bodies decoded" over ``GZipDecoder.decode``)."""
    if lines and re.search(r":\s*(?:\.\.\.|pass)\s*(?:#.*)?$", lines[0][1]):
        return True  # `def parse(value: int) -> int: ...`
    body: list[str] = []
    in_doc = False
    for _, text in lines[1:]:
        stripped = text.strip()
        quotes = stripped.count('"""') + stripped.count("\'\'\'")
        if in_doc or quotes:
            if quotes % 2:
                in_doc = not in_doc
            continue
        if stripped and not stripped.startswith(("#", "@")):
            body.append(stripped)
    return bool(body) and all(_STUB_LINE.match(line) for line in body)


def rank_symbols(index: CodeIndex, question: str, names: list[str]) -> list[str]:
    """``names`` best first for ``question`` (ties keep their order: the search's order)."""
    terms = question_terms(question)
    if not terms:
        return list(names)
    scores = {name: symbol_relevance(index, name, terms) for name in names}
    return sorted(names, key=lambda n: -scores[n])


__all__ = ["decision_terms", "definition", "first_defined", "is_stub", "line_terms", "matched_terms", "question_terms", "rank_symbols", "stem", "symbol_relevance"]
