"""The candidate source lines for a question: gathered from the resolved definitions, described
by their structure, ranked.

A question about behaviour is answered by a few lines of code: the ``if`` on the status, the
``headers.pop(...)``, the ``raise`` when a limit is passed. Python gathers the lines that could
say it — the bodies of the resolved definitions, of the repository functions they call (those
called *to decide* first: in a condition, or as what a branch does), of the functions in their
own files that call them, and their files' module-level assignments — reads where the code
decides from the syntax tree (``CodeIndex.decisions``: each condition with what it does, the
early returns, the raises), and ranks them by structure (``ranking``). The model then only
chooses among them by number (``quotes``).
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, Field

from moot.codeindex import CodeIndex, Decision
from moot.errors import MootError
from moot.teams.research.ranking import rank, score
from moot.teams.research.relevance import (
    definition,
    line_terms,
    matched_terms,
    question_terms,
    symbol_relevance,
)
from moot.teams.research.resolve import ResolvedSymbol

MAX_CANDIDATES = 40
"""Lines offered to the model: more fills the small model's context with noise."""
MAX_BODY_LINES = 120
"""Lines read from one definition (a 700-line class is not read whole)."""
MAX_OWN_LINES = 400
"""Lines of a long function's own code (not its nested functions') read for candidates."""
MAX_CALLEES = 8
"""Repository functions called by the resolved symbols whose bodies are also searched."""
MAX_MODULE_LINES = 3000
"""Lines of a chosen definition's file read for its module-level constants."""
MAX_LITERAL_LINES = 60
"""Lines of one module-level literal (a defaults object over several lines) read for its entries."""
MAX_CALLERS = 4
"""Callers in the resolved symbols' own files whose bodies are also searched."""
MAX_CLASS_LINES = 30
CLASS_METHODS = 2
"""Methods of a chosen class read as chosen too (the best two for the question)."""
SIBLING_METHODS = 2
"""Other methods of a chosen method's class read for the question's words (the best two)."""
LOCATION_METHODS = 60
"""Definitions inside a class looked at to find them."""
LINE_CHARS = 140

CONDITION_KINDS = frozenset({"if", "elif", "else", "while", "except", "case", "default", "ternary", "assert"})
"""The decisions that branch on a condition (``raise`` and ``return`` are exits, not conditions)."""

CODE_IN_WORDS = re.compile(r"`([^`]+)`")
"""The code a decision's words quote, in backticks (a format of ``flow``'s own writing)."""
_PASS_ALONG = re.compile(r"^(\w+)\s*[=:]\s*\1,?$")
"""``timeout=timeout,`` or ``timeout: timeout,``: an argument handed on unchanged says nothing."""
_OPENS_BLOCK = re.compile(r"(?:if|elif|else|while|for|with|except|async with|async for)\b")
_TRIVIAL = re.compile(r"^(?:[)\]}{:,;]*|pass|else:|try:|finally:|while True:|\}?\s*else\s*\{|try\s*\{|\}?\s*finally\s*\{|"
                      r"return;?|return self;?|return this;?|break;?|continue;?|\.\.\.|#.*|//.*|@\w[\w.]*)$")
_LITERAL = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z]{3,}\b|\b\d+(?:\.\d+)?\b|\"[^\"]+\"|'[^']+'")
"""A literal, or a constant by its naming convention (``SEE_OTHER``, ``303``, ``"HEAD"``): formats."""
_REMOVES = re.compile(r"\b(?:pop|del|delete|remove|discard|clear)\b")
_ASSIGNS = re.compile(r"[^=!<>]=[^=>]")
_SIGNATURE = re.compile(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function)\b|@\w")
_RAISES = re.compile(r"(?:raise|throw)\b")
_MODULE_ASSIGNMENT = re.compile(r"(?:export\s+)?(?:(?:const|let|var)\s+)?[A-Za-z_$][\w$]*\s*(?::[^=]+)?=(?![=>])")


class CodeLine(BaseModel, frozen=True):
    """One line of source, where it is, and which definition holds it."""

    path: str
    line: int
    text: str
    """The line as it is in the file (stripped of its indentation)."""
    then: str = ""
    then_line: int = 0
    """For a line that opens a block (``if …:``), the block's first line and its number: a
    condition is half a statement without what it does. When that line opens a block too,
    ``then`` holds its first line as well (on a second line) and ``then_line`` is the last."""
    symbol: str
    """The qualified name of the definition that holds it."""
    kind: str = ""
    """For a line where the code decides (``moot.codeindex.flow``): ``if``, ``elif``, ``else``,
    ``while``, ``except``, ``case``, ``default``, ``ternary``, ``assert``, ``raise``,
    ``return``; ``""`` for any other line."""
    words: str = ""
    """For a decision, what it decides in words, written by moot from the syntax tree."""
    score: float = 0.0
    """How well it matched the question (ranking only)."""
    features: dict[str, float] = Field(default_factory=dict, exclude=True)
    """The structural features it was ranked by (``ranking.FEATURES``)."""

    def location(self) -> str:
        return f"{self.path}:{self.line}-{self.then_line}" if self.then and self.then_line > self.line else f"{self.path}:{self.line}"

    def quoted(self) -> str:
        """The line (and its block's first line) in backticks, each verbatim from the file."""
        return " → ".join(f"`{short(part)}`" for part in [self.text, *self.then.splitlines()])

    def is_condition(self) -> bool:
        """A line where the code branches on a condition (what a how-question asks for)."""
        return self.kind in CONDITION_KINDS


def line_features(text: str, then: str, found: set[str], weights: dict[str, float], *, decision: Decision | None,
                  role: str, prose: bool, delegates: set[str], terms: set[str]) -> dict[str, float]:
    """The structural features of one candidate line (``ranking.FEATURES``): the question's
    words it holds (``found``, each weighted by its rarity among the candidates), whether they
    are in a condition, and what the line does in the code's structure. ``role`` is
    ``chosen``, ``callee``, ``caller`` or ``module``."""
    stripped = text.strip()
    f: dict[str, float] = {"terms": sum(weights.get(t, 1.0) for t in found)}
    if not found:
        f["no_terms"] = 1.0
    if role in ("callee", "caller", "module"):
        f[role] = 1.0
    if prose:
        f["prose"] = 1.0
        return f
    if _SIGNATURE.match(stripped):
        f["signature"] = 1.0
        return f
    if decision is not None:
        if decision.kind in ("if", "elif", "while", "case", "assert", "ternary"):
            f["condition"] = 1.0
            if in_condition := matched_terms(line_terms(decision.condition), terms):
                f["cond_terms"] = sum(weights.get(t, 1.0) for t in in_condition)
        elif decision.kind in ("except", "else", "default"):
            f["handler"] = 1.0
        if decision.exit == "raise" or decision.kind == "raise":
            f["raises"] = 1.0
        elif decision.kind == "return":
            f["returns"] = 1.0
        elif decision.exit == "return":
            f["early_return"] = 1.0
        if decision.literal:
            f["literal"] = 1.0
        if set(decision.calls) & delegates:
            f["deciding_call"] = 1.0
    else:
        if _RAISES.match(stripped) or _RAISES.match(then):
            f["raises"] = 1.0
        elif stripped.startswith("return"):
            f["returns"] = 1.0
        if _LITERAL.search(stripped):
            f["literal"] = 1.0
        if _ASSIGNS.search(stripped):
            f["assignment"] = 1.0
        if delegates and not _LITERAL.search(stripped) and any(re.search(rf"\b{re.escape(d)}\s*\(", stripped) for d in delegates):
            f["delegate"] = 1.0
    if _REMOVES.search(stripped) or _REMOVES.search(then):
        f["removal"] = 1.0
    return f


def _body(index: CodeIndex, symbol: ResolvedSymbol) -> list[tuple[int, str]]:
    # A class's methods are definitions of their own (resolved or called separately): of the
    # class itself only its head (docstring, attributes) is read.
    if symbol.kind == "class":
        return index.source_lines(symbol.path, symbol.start_line, min(symbol.end_line, symbol.start_line + MAX_CLASS_LINES - 1))
    if symbol.end_line - symbol.start_line < MAX_BODY_LINES:
        return index.source_lines(symbol.path, symbol.start_line, symbol.end_line)
    # A long function is read by its own lines: the functions nested in it are definitions of
    # their own, and what it decides may come after them (a parser's main loop after its
    # helpers, 200 lines down).
    nested = index.spans_in(symbol.path, symbol.start_line, symbol.end_line, limit=2000)
    own = [(n, text) for n, text in index.source_lines(symbol.path, symbol.start_line, symbol.end_line)
           if not any(a <= n <= b for a, b in nested)]
    return own[:MAX_OWN_LINES]


def flow_of(index: CodeIndex, symbol: ResolvedSymbol) -> list[Decision]:
    """The decisions of a function or method (``[]`` for a class, a module, an unreadable file)."""
    if symbol.kind in ("class", "module"):
        return []
    try:
        return index.decisions(symbol.path, symbol.start_line, symbol.end_line)
    except (MootError, ValueError):  # a file gone since the build, an unknown grammar
        return []


def deciding_callees(index: CodeIndex, resolved: list[ResolvedSymbol]) -> list[str]:
    """The repository functions the resolved definitions call *to decide*: in a condition, or
    as what a branch does (``if not _same_origin(…)``; ``raise self._error(…)``), in the order
    they occur. Their own conditions often hold the answer the caller only delegates."""
    out: list[str] = []
    for r in resolved:
        for d in flow_of(index, r):
            # what a branch does, not what a plain `return` computes (`return b"".join(x.decode(c) …)`
            # hands work on; it decides nothing)
            for name in (*d.calls, *(d.outcome_calls if d.kind in CONDITION_KINDS else ())):
                if name not in out and name != r.name and index.defined_as(name) is not None:
                    out.append(name)
    return out


def candidate_lines(index: CodeIndex, question: str, resolved: list[ResolvedSymbol],
                    limit: int = MAX_CANDIDATES) -> list[CodeLine]:
    """The lines the model may pick from, best first, each location once: every non-trivial
    line that shares a word with the question in the resolved definitions, the repository
    functions they call (those that decide first), the functions in their own files that call
    them, and their files' module-level assignments; plus, in the resolved definitions and the
    callees that decide, every line where the code decides (a condition, an ``except``, a
    ``raise``, an early ``return``) even without the question's words. The order is
    :func:`ranking.rank` over each line's structural features."""
    terms = question_terms(question)
    if not terms:
        return []
    symbols: list[ResolvedSymbol] = list(resolved)
    roles: dict[str, str] = {r.qualified_name: "chosen" for r in resolved}
    seen_defs = {(r.path, r.start_line) for r in resolved}
    # A class does what its methods do: of a chosen class (whose own head is all that is read of
    # it), the methods that best match the question are read as chosen too. Asked how
    # `wait_exponential` computes a delay, the answer is in its `__call__`, not its head.
    # Its methods are read before its head, so that in a class shorter than the head's thirty
    # lines a method's lines are offered as the method's, with its conditions.
    for r in resolved:
        if r.kind != "class":
            continue
        for name in _best_methods(index, r.qualified_name, r.path, r.start_line, r.end_line, terms)[:CLASS_METHODS]:
            info = definition(index, name)
            if info is None or (info.path, info.start_line) in seen_defs:
                continue
            seen_defs.add((info.path, info.start_line))
            roles[info.qualified_name] = "chosen"
            method = ResolvedSymbol(name=info.name, qualified_name=info.qualified_name, kind=info.kind, path=info.path,
                                    start_line=info.start_line, end_line=info.end_line,
                                    callees=[c for c in info.callees if index.defined_as(c) is not None][:8])
            symbols.insert(symbols.index(r), method)
    # A method's siblings: the class's other methods that share the question's words. How a
    # class behaves is split across them (`unsign` checks, `verify_signature` loops over the
    # keys), and neither calls the other. Read like a callee: their lines need the question's
    # words, and their conditions are not offered on their own.
    siblings: list[ResolvedSymbol] = []
    for r in resolved:
        holder = r.qualified_name.rsplit(".", 1)[0] if r.kind == "method" else ""
        info = definition(index, holder) if holder else None
        if info is None or info.kind != "class":
            continue
        for name in _best_methods(index, holder, info.path, info.start_line, info.end_line, terms)[:SIBLING_METHODS]:
            method = definition(index, name)
            if method is None or (method.path, method.start_line) in seen_defs:
                continue
            seen_defs.add((method.path, method.start_line))
            roles[method.qualified_name] = "callee"
            siblings.append(ResolvedSymbol(name=method.name, qualified_name=method.qualified_name, kind=method.kind,
                                           path=method.path, start_line=method.start_line, end_line=method.end_line))
    deciding = deciding_callees(index, symbols)
    callees: list[str] = list(deciding)
    for r in symbols:
        callees.extend(name for name in r.callees if name not in callees)
    # What they call, then the code in their own file that calls them: a callee holds the
    # deciding `if`, a caller the loop or the limit around it (`max_redirects` is checked
    # where `_build_redirect_request` is called, not in it).
    callers = [c.caller for r in resolved for c in r.callers if c.path == r.path]
    wanted = [(name, "callee") for name in callees[:MAX_CALLEES]] + [(name, "caller") for name in dict.fromkeys(callers)]
    deciding_defs: set[str] = set()
    for name, role in wanted[:MAX_CALLEES + MAX_CALLERS]:
        qualified = name if "." in name else index.defined_as(name)
        for info in filter(None, [definition(index, qualified or name)]):
            if (info.path, info.start_line) in seen_defs:
                continue
            seen_defs.add((info.path, info.start_line))
            roles[info.qualified_name] = role
            if name in deciding:
                deciding_defs.add(info.qualified_name)
            symbols.append(ResolvedSymbol(name=info.name, qualified_name=info.qualified_name, kind=info.kind,
                                          path=info.path, start_line=info.start_line, end_line=info.end_line))
    symbols.extend(siblings)
    delegates = {symbol.name for symbol in symbols}
    raw: list[tuple[ResolvedSymbol, int, str, str, int, bool, set[str], Decision | None]] = []
    seen_text: set[str] = set()
    for symbol in symbols:
        flow: dict[int, Decision] = {}
        for d in flow_of(index, symbol):
            flow.setdefault(d.line, d)  # in order: a condition before a return on the same line
        structural = roles[symbol.qualified_name] == "chosen" or symbol.qualified_name in deciding_defs
        in_doc = False
        body = _body(index, symbol)
        for at, (number, text) in enumerate(body):
            stripped = text.strip()
            quotes = stripped.count('"""') + stripped.count("'''")
            prose = in_doc or quotes > 0 or stripped.startswith(("/*", "* ", "*/")) or stripped == "*"
            if quotes % 2:
                in_doc = not in_doc
            key = " ".join(stripped.split())
            if not stripped or _TRIVIAL.match(stripped) or _PASS_ALONG.match(stripped) or key in seen_text:
                continue
            decision = None if prose else flow.get(number)
            if decision is not None:
                then = "\n".join(t for n, t in decision.outcome if n != number)
                then_line = max((n for n, _ in decision.outcome), default=0) if then else 0
            elif prose or flow:
                then, then_line = "", 0
            else:  # no syntax tree for it (a class head): the block's first line by indentation
                then, then_line = _block_start(body, at)
            # A decision's words quote the code of every step it states (a branch's later lines,
            # the steps before a `return`): what they touch is what the line decides.
            stated = " ".join(CODE_IN_WORDS.findall(decision.words)) if decision is not None else ""
            found = matched_terms(line_terms(f"{stripped} {then} {stated}"), terms)
            # A line where a chosen definition (or a callee that decides for it) decides is
            # offered even without the question's words: `except SystemExit as e:` answers
            # "how does the runner run a command" in no word of it. Other lines need a word.
            if not found and not (structural and decision is not None and decision.kind != "return"):
                continue
            seen_text.add(key)
            for part in then.splitlines():  # shown with its condition: not again on its own
                seen_text.add(" ".join(part.split()))
            raw.append((symbol, number, stripped, then, then_line, prose, found, decision))
    for symbol, number, stripped in _module_constants(index, resolved):
        key = " ".join(stripped.split())
        found = matched_terms(line_terms(stripped), terms)
        if found and key not in seen_text:
            seen_text.add(key)
            roles.setdefault(symbol.qualified_name, "module")
            raw.append((symbol, number, stripped, "", 0, False, found, None))
    if not raw:
        return []
    # The question's words, each weighted by how few candidates hold it: a word on every line
    # tells them apart no more than none.
    frequency = {t: sum(1 for item in raw if t in item[6]) for t in terms}
    rarity = {t: min(2.0, max(0.5, 1.0 + math.log2(len(raw) / (2 * n)))) for t, n in frequency.items() if n}
    lines: list[CodeLine] = []
    for symbol, number, stripped, then, then_line, prose, found, decision in raw:
        features = line_features(stripped, then, found, rarity, decision=decision, role=roles.get(symbol.qualified_name, "chosen"),
                                 prose=prose, delegates=delegates - {symbol.name}, terms=terms)
        lines.append(CodeLine(
            path=symbol.path, line=number, text=stripped, then=then, then_line=then_line, symbol=symbol.qualified_name,
            kind=decision.kind if decision is not None else "", words=decision.words if decision is not None else "",
            score=round(score(features), 3), features=features,
        ))  # fmt: skip
    return rank(lines)[:limit]


def _best_methods(index: CodeIndex, holder: str, path: str, start_line: int, end_line: int, terms: set[str]) -> list[str]:
    """The methods of the class ``holder`` (spanning ``start_line``..``end_line`` of ``path``)
    that share a word with the question, best first (ties: the index's order)."""
    inside = list(dict.fromkeys(n for n in index.symbols_in(path, start_line, end_line, limit=LOCATION_METHODS)
                                if n.startswith(holder + ".") and "." not in n[len(holder) + 1:]))
    scores = {n: symbol_relevance(index, n, terms) for n in inside}
    return sorted((n for n in inside if scores[n] > 0), key=lambda n: -scores[n])


def _module_constants(index: CodeIndex, resolved: list[ResolvedSymbol]) -> list[tuple[ResolvedSymbol, int, str]]:
    """The module-level assignments (``DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)``,
    ``export const DEFAULTS = {…}``) of the files that hold the chosen definitions: a module's
    defaults live there, outside every definition, where no body that uses them is read."""
    out: list[tuple[ResolvedSymbol, int, str]] = []
    for path in dict.fromkeys(r.path for r in resolved):
        first = next(r for r in resolved if r.path == path)
        outer = index.symbols_in(path, first.start_line, first.start_line, limit=10)
        module = outer[-1].rsplit(".", 1)[0] if outer else path
        holder = ResolvedSymbol(name=module.rsplit(".", 1)[-1], qualified_name=module, kind="module",
                                path=path, start_line=1, end_line=1)
        open_brackets, inside = 0, 0  # in a module-level assignment's literal (`defaults = {` … `}`)
        for number, text in index.source_lines(path, 1, MAX_MODULE_LINES):
            if open_brackets > 0 and inside < MAX_LITERAL_LINES:
                # an entry of a defaults object written over several lines (`  depth: 5,`)
                out.append((holder, number, text.strip()))
                open_brackets += _bracket_balance(text)
                inside += 1
            elif _MODULE_ASSIGNMENT.match(text) and not text.startswith(("__all__", "__version__", "logger")):
                out.append((holder, number, text.strip()))
                open_brackets, inside = max(0, _bracket_balance(text)), 0
            else:
                open_brackets = 0
    return out


def _bracket_balance(text: str) -> int:
    """Brackets a line opens and leaves open (``{`` ``[`` ``(`` against their closers), with
    what its strings hold left out: a format of code, read to follow a literal to its end."""
    bare = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`", "", text.split("//")[0] if "://" not in text else text)
    bare = bare.split(" #")[0]
    return sum(bare.count(c) for c in "{[(") - sum(bare.count(c) for c in "}])")


def led_elsewhere(lists: list[list[CodeLine]], lead: int) -> list[list[CodeLine]]:
    """The lists with each line left out of a later list when an earlier list leads with it
    (among its first ``lead``): pickers that run in parallel over overlapping definitions
    would otherwise pick the same first lines (two pooling sub-questions both resolved
    ``HTTPTransport.__init__``, and eight picks quoted five lines)."""
    out: list[list[CodeLine]] = []
    led: set[tuple[str, int]] = set()
    for lines in lists:
        kept = [c for c in lines if (c.path, c.line) not in led]
        out.append(kept)
        led.update((c.path, c.line) for c in kept[:lead])
    return out


def _block_start(body: list[tuple[int, str]], at: int) -> tuple[str, int]:
    """The first line of the block that line ``at`` opens (``if x:`` → its next line), by
    indentation, for code the syntax tree was not read for (a class head). When that line
    opens a block too, its first line follows as well (two levels at most)."""
    stripped = body[at][1].strip()
    if not (_OPENS_BLOCK.match(stripped) and stripped.endswith(":")):
        return "", 0
    shown: list[str] = []
    number_shown = 0
    for number, text in body[at + 1:at + 8]:
        line = text.strip()
        if not line or line.startswith("#"):
            continue
        shown.append(line)
        number_shown = number
        if len(shown) == 2 or not (_OPENS_BLOCK.match(line) and line.endswith(":")):
            break
    return "\n".join(shown), number_shown


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


__all__ = ["CONDITION_KINDS", "CodeLine", "candidate_lines", "deciding_callees", "flow_of", "led_elsewhere",
           "line_features", "question_terms"]
