"""Lines of the source that answer the question: the model picks them, moot quotes them.

The index can say where a thing is defined and who calls it, but a question about behaviour
("what happens to the method on a redirect?") is answered by a few lines of code: an ``if``
on the status, a ``headers.pop(...)``, a default value. A 0.5B model paraphrases such lines
badly, and invents them when it writes from memory. Here Python gathers the candidate lines
(the bodies of the resolved symbols and of the repository functions they call), ranks them
by the question's words, and the model only *chooses* among them, by number, under a schema
that admits nothing else. The answer then quotes the chosen lines verbatim from the file,
with ``path:line``, so every quoted line really occurs where it is cited.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, Field, create_model

from moot.codeindex import CodeIndex
from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.research.relevance import definition, line_terms, matched_terms, question_terms
from moot.teams.research.resolve import ResolvedSymbol

MAX_CANDIDATES = 40
"""Lines offered to the model: more fills the small model's context with noise."""
MAX_PICKED = 8
"""Lines quoted in one answer from one list (single mode: one picker)."""
PICKED_PER_SUB_QUESTION = 4
"""Multi mode: lines one sub-question's picker may quote (each researcher's own list)."""
MAX_BODY_LINES = 120
"""Lines read from one definition (a 700-line class is not read whole)."""
MAX_CALLEES = 8
"""Repository functions called by the resolved symbols whose bodies are also searched."""
MAX_MODULE_LINES = 3000
"""Lines of a chosen definition's file read for its module-level constants."""
MAX_CALLERS = 4
"""Callers in the resolved symbols' own files whose bodies are also searched."""
MAX_CLASS_LINES = 30
LINE_CHARS = 140
DECIDING_WITHOUT_WORDS = 1.5
"""The rank of a deciding line of a chosen definition that holds none of the question's words:
below a line that holds them and decides, above most lines that only mention them."""
PROSE_WEIGHT = 0.5
"""Docstring prose holds the question's words more often than code (it is written in them) but
says less about what the code does: its score counts half."""
SPREAD = 0.5
"""How much lower each further line of one definition ranks (keeps the list spread over definitions)."""

_PASS_ALONG = re.compile(r"^(\w+)=\1,?$")
"""``timeout=timeout,``: an argument handed on unchanged says nothing about behaviour."""
_OPENS_BLOCK = re.compile(r"(?:if|elif|else|while|for|with|except|async with|async for)\b")
_TRIVIAL = re.compile(r"^(?:[)\]}:,]*|pass|else:|try:|finally:|while True:|return|return self|break|continue|\.\.\.|#.*|@\w[\w.]*)$")


class CodeLine(BaseModel, frozen=True):
    """One line of source, where it is, and which definition holds it."""

    path: str
    line: int
    text: str
    """The line as it is in the file (stripped of its indentation)."""
    then: str = ""
    then_line: int = 0
    """For a line that opens a block (``if …:``), the block's first line and its number: a
    condition is half a statement without what it does. When that line opens a block itself,
    ``then`` holds its first line too (on a second line) and ``then_line`` is the last."""
    symbol: str
    """The qualified name of the definition that holds it."""
    score: float = 0.0
    """How well it matched the question's words (ranking only)."""

    def location(self) -> str:
        return f"{self.path}:{self.line}-{self.then_line}" if self.then else f"{self.path}:{self.line}"

    def quoted(self) -> str:
        """The line (and its block's first line) in backticks, each verbatim from the file."""
        return " → ".join(f"`{_short(part)}`" for part in [self.text, *self.then.splitlines()])


class QuotePick(BaseModel):
    """The line picker's answer: numbers from the list it was shown."""

    lines: list[int] = Field(default_factory=list, max_length=MAX_PICKED)


_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+|\b[A-Z]{3,}\b|\bcodes\.\w+|\b\d+(?:\.\d+)?\b|\"[^\"]+\"|'[^']+'")
_REMOVES = re.compile(r"\b(?:pop|del|remove|discard|clear)\b")


def _decides(line: str, then: str) -> bool:
    """A line that decides behaviour on its own: an ``except``, a ``raise``, a removal, or a
    condition on a literal or constant (``if status == SEE_OTHER``), with its block."""
    return bool(re.match(r"(?:except|raise)\b", line) or re.match(r"raise\b", then) or _REMOVES.search(line)
                or (re.match(r"(?:if|elif)\b", line) and _CONSTANT.search(line)))


def score_line(text: str, terms: set[str], *, prose: bool = False, weights: dict[str, float] | None = None,
               delegates: set[str] | None = None) -> float:
    """How much of the question a line speaks to: the question's words it holds (each weighted
    by how rare it is among the candidate lines, ``weights``; a word on every line tells them
    apart no more than none), plus what makes a line *decide* behaviour — a condition with
    what it does, a raise, a removal, a literal or constant, an assignment — and less for a
    signature (the index section states it), docstring prose, and a line that only hands the
    work to another candidate definition (``delegates``: its own lines say more)."""
    found = matched_terms(line_terms(text), terms)
    if not found:
        return 0.0
    score = sum((weights or {}).get(t, 1.0) for t in found)
    stripped = text.strip()
    if prose:
        return score * PROSE_WEIGHT
    if re.match(r"(?:def|class|async def)\b", stripped):
        return score - 1.5
    if re.match(r"(?:if|elif|while|except)\b", stripped):
        score += 1.0
    if re.search(r"\braise\b", stripped):
        score += 1.5
    elif re.match(r"(?:return|assert)\b", stripped):
        score += 0.25
    if _REMOVES.search(stripped):
        score += 1.0
    if _CONSTANT.search(stripped):
        score += 1.0
    if re.search(r"[^=!<>]=[^=]", stripped):
        score += 0.5
    if delegates and any(re.search(rf"\b{re.escape(d)}\s*\(", stripped) for d in delegates) and not _CONSTANT.search(stripped):
        score -= 1.0
    return score


def _body(index: CodeIndex, symbol: ResolvedSymbol) -> list[tuple[int, str]]:
    # A class's methods are definitions of their own (resolved or called separately): of the
    # class itself only its head (docstring, attributes) is read.
    span = MAX_CLASS_LINES if symbol.kind == "class" else MAX_BODY_LINES
    end = min(symbol.end_line, symbol.start_line + span - 1)
    return index.source_lines(symbol.path, symbol.start_line, end)


def candidate_lines(index: CodeIndex, question: str, resolved: list[ResolvedSymbol],
                    limit: int = MAX_CANDIDATES) -> list[CodeLine]:
    """The lines the model may pick from, best first (ties in source order), each location once:
    every non-trivial line that shares a word with the question in the resolved definitions,
    the repository functions they call, the functions in their own files that call them, and
    their files' module-level assignments; plus the deciding lines of the resolved definitions
    themselves that share none (see :func:`score_line` for the order)."""
    terms = question_terms(question)
    if not terms:
        return []
    symbols: list[ResolvedSymbol] = list(resolved)
    seen_defs = {(r.path, r.start_line) for r in resolved}
    callees: list[str] = []
    for r in resolved:
        for name in r.callees:
            if name not in callees:
                callees.append(name)
    # What they call, then the code in their own file that calls them: a callee holds the
    # deciding `if`, a caller the loop or the limit around it (`max_redirects` is checked
    # where `_build_redirect_request` is called, not in it).
    callers = [c.caller for r in resolved for c in r.callers if c.path == r.path]
    for name in [*callees[:MAX_CALLEES], *dict.fromkeys(callers).keys()][:MAX_CALLEES + MAX_CALLERS]:
        qualified = name if "." in name else index.defined_as(name)
        for info in filter(None, [definition(index, qualified or name)]):
            if (info.path, info.start_line) in seen_defs:
                continue
            seen_defs.add((info.path, info.start_line))
            symbols.append(ResolvedSymbol(name=info.name, qualified_name=info.qualified_name, kind=info.kind,
                                          path=info.path, start_line=info.start_line, end_line=info.end_line))
    chosen_names = {r.qualified_name for r in resolved}
    # Every line that shares a word with the question, then each scored; the question's words
    # are weighted by how few of these lines hold them.
    delegates = {symbol.name for symbol in symbols}
    raw: list[tuple[ResolvedSymbol, int, str, str, int, bool, set[str]]] = []
    seen_text: set[str] = set()
    for symbol in symbols:
        in_doc = False
        body = _body(index, symbol)
        for at, (number, text) in enumerate(body):
            stripped = text.strip()
            quotes = stripped.count('"""') + stripped.count("'''")
            prose = in_doc or quotes > 0
            if quotes % 2:
                in_doc = not in_doc
            key = " ".join(stripped.split())
            if not stripped or _TRIVIAL.match(stripped) or _PASS_ALONG.match(stripped) or key in seen_text:
                continue
            then, then_line = ("", 0) if prose else _block_start(body, at)
            found = matched_terms(line_terms(f"{stripped} {then}"), terms)
            # A line of a chosen definition that decides something (an except, a raise, a
            # condition on a constant) is offered even without the question's words:
            # `except SystemExit as e:` answers "how does the runner run a command" in no word
            # of it. Lines of callees and callers still need a word of the question.
            if not found and not (symbol.qualified_name in chosen_names and not prose and _decides(stripped, then)):
                continue
            seen_text.add(key)
            for part in then.splitlines():  # shown with its condition: not again on its own
                seen_text.add(" ".join(part.split()))
            raw.append((symbol, number, stripped, then, then_line, prose, found))
    for symbol, number, stripped in _module_constants(index, resolved):
        key = " ".join(stripped.split())
        found = matched_terms(line_terms(stripped), terms)
        if found and key not in seen_text:
            seen_text.add(key)
            raw.append((symbol, number, stripped, "", 0, False, found))
    if not raw:
        return []
    frequency = {t: sum(1 for *_, found in raw if t in found) for t in terms}
    weights = {t: min(2.0, max(0.5, 1.0 + math.log2(len(raw) / (2 * n)))) for t, n in frequency.items() if n}
    groups: dict[str, list[CodeLine]] = {}
    for symbol, number, stripped, then, then_line, prose, found in raw:
        score = score_line(f"{stripped} {then}", terms, prose=prose, weights=weights, delegates=delegates - {symbol.name})
        if not found:
            score = DECIDING_WITHOUT_WORDS
        groups.setdefault(symbol.qualified_name, []).append(CodeLine(
            path=symbol.path, line=number, text=stripped, then=then, then_line=then_line,
            symbol=symbol.qualified_name, score=score))  # fmt: skip
    # Best first, each definition's later lines a little lower each (so one long function
    # cannot fill the list, and the one `if` in a callee that decides the answer is not
    # crowded out), ties in source order.
    ranked: list[tuple[float, int, CodeLine]] = []
    for group in groups.values():
        for rank, line in enumerate(sorted(group, key=lambda c: -c.score)):
            ranked.append((line.score - SPREAD * rank, len(ranked), line))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [line for _, _, line in ranked[:limit]]


_MODULE_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*\s*(?::[^=]+)?=(?!=)")


def _module_constants(index: CodeIndex, resolved: list[ResolvedSymbol]) -> list[tuple[ResolvedSymbol, int, str]]:
    """The module-level assignments (``DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)``) of the
    files that hold the chosen definitions: a module's defaults live there, outside every
    definition, where no body that uses them is read."""
    out: list[tuple[ResolvedSymbol, int, str]] = []
    for path in dict.fromkeys(r.path for r in resolved):
        first = next(r for r in resolved if r.path == path)
        outer = index.symbols_in(path, first.start_line, first.start_line, limit=10)
        module = outer[-1].rsplit(".", 1)[0] if outer else path
        holder = ResolvedSymbol(name=module.rsplit(".", 1)[-1], qualified_name=module, kind="module",
                                path=path, start_line=1, end_line=1)
        for number, text in index.source_lines(path, 1, MAX_MODULE_LINES):
            if _MODULE_ASSIGNMENT.match(text) and not text.startswith(("__all__", "__version__", "logger")):
                out.append((holder, number, text.strip()))
    return out


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
    """The first line of the block that line ``at`` opens (``if x:`` → its next line), if it
    opens one. When that line opens a block too, its first line follows as well (two levels at
    most, one line each, joined by a newline): ``if not _same_origin(…):`` →
    ``if not _is_https_redirect(…):`` → ``headers.pop("Authorization", None)``; a nested
    condition alone is half a statement again. ``then_line`` is the last line shown."""
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


def pick_type(count: int, limit: int = MAX_PICKED) -> type[QuotePick]:
    """The picker's schema with line numbers limited to 1..``count`` (constrained decoding
    cannot name a line it was not shown)."""
    if count <= 0:
        return QuotePick
    return create_model(  # type: ignore[call-overload, no-any-return]
        "QuotePick", __base__=QuotePick,
        # Required and at least one: with an optional list the 0.5B model answered `{ }` for
        # five of six questions. "None of them" is not an option a picker of shown lines needs.
        lines=(list[Literal[tuple(range(1, count + 1))]], Field(min_length=1, max_length=limit,  # type: ignore[misc]
                                                                  description="numbers of the lines that answer the question")),
    )


def picker_agent(model: object, count: int, limit: int = MAX_PICKED) -> SubAgent:
    return SubAgent("line-picker", "chooses the source lines that answer the question, by number",
                    load_prompt("quote", __package__), model=model, output_type=pick_type(count, limit),  # type: ignore[arg-type]
                    max_turns=2, settings=ModelSettings(max_tokens=120))


def picker_task(question: str, lines: list[CodeLine]) -> str:
    shown = "\n".join(f"{n}. {c.location()} (in `{c.symbol}`): {c.quoted()}" for n, c in enumerate(lines, 1))
    return f"Question: {question}\n\nLines:\n{shown}\n\nGive the numbers of the lines that answer the question."


def chosen(lines: list[CodeLine], output: object) -> list[CodeLine]:
    """The lines the model picked, each once, in source order (file, then line); nothing when it
    picked none or gave no valid answer (nothing is guessed for it)."""
    numbers = output.lines if isinstance(output, QuotePick) else []
    picked = [lines[n - 1] for n in dict.fromkeys(numbers) if 1 <= n <= len(lines)][:MAX_PICKED]
    return sorted(picked, key=lambda c: (c.path, c.line))


def quote_section(lines: list[CodeLine]) -> str:
    """The answer's quoted lines: verbatim from the file at the cited line."""
    if not lines:
        return ""
    body = "\n".join(f"- {c.location()} (in `{c.symbol}`): {c.quoted()}" for c in lines)
    return "Lines of the source that answer it (chosen by the model, quoted by moot from the files):\n" + body


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


__all__ = [
    "CodeLine",
    "QuotePick",
    "candidate_lines",
    "led_elsewhere",
    "chosen",
    "pick_type",
    "picker_agent",
    "picker_task",
    "question_terms",
    "quote_section",
    "score_line",
]
