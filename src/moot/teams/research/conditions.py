"""Deciding conditions in an answer: stated in words beside the quoted line, and every "if /
when / unless" statement of the model held to one.

A how-question ("what happens to the method on a redirect?") is answered by the conditions the
code decides on. The model chooses them among the conditions Python read from the syntax tree
(``codelines``, ``quotes``); this module writes each chosen one as a statement — the condition
and what it does in words (``Decision.words``, written by moot from the tree), next to the
line quoted verbatim from the file — and checks the model's own prose: a sentence that says
something happens *if*, *when* or *unless* something holds must rest on a quoted condition
that reads the same things. One that matches a condition the code has but the model did not
choose gets that condition quoted; one that matches none is removed, with a verdict saying why.
"""

from __future__ import annotations

import math
import re

from moot.teams.research.codelines import CodeLine
from moot.teams.research.models import VerificationResult
from moot.teams.research.quotes import CHOOSERS
from moot.teams.research.relevance import line_terms, matched_terms, question_terms

_CONDITIONAL = re.compile(r"\b(if|when|whenever|unless)\b", re.I)
"""The conditional connectives of English (the issue's "if / when / unless"): grammar, not any
one question's wording."""
_CLAUSE_END = re.compile(r"[,;:]|\s(?:then|it|the code|moot)\s|\s\(|$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*-])|\n+")
_CITATION = re.compile(r"(?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,5}:\d+(?:-\d+)?")
_ASKS_HOW = re.compile(r"\b(how|why|when|whether|unless|what happens|under what|in what case|which case|decides?|determines?)\b", re.I)

SECTION_TITLE = ("How it decides (conditions chosen by {chooser} from the code's control flow, "
                 "in words by moot, quoted from the files):")
"""The section's first line; ``chooser`` is who chose the conditions (``CHOOSERS``)."""


def asks_how(question: str) -> bool:
    """Whether a question asks how, why or when the code does something (its answer is the
    conditions the code decides on), by its interrogative words."""
    return bool(_ASKS_HOW.search(question))


def statement(line: CodeLine) -> str:
    """One deciding condition as the answer states it: in words, then where, then the code."""
    words = line.words or f"The code checks `{line.text}`."
    return f"- {words} — {line.location()} (in `{line.symbol}`): {line.quoted()}"


def conditions_section(conditions: list[CodeLine], for_claims: list[CodeLine] | None = None,
                       *, chosen_by: str = "model") -> str:
    """The answer's deciding conditions; those quoted because a statement of the answer
    needed them (not chosen) are marked so. ``chosen_by`` is a ``CHOOSERS`` key."""
    if not conditions and not for_claims:
        return ""
    lines = [statement(c) for c in conditions]
    lines += [statement(c) + " (quoted for a statement of the answer)" for c in for_claims or []]
    return SECTION_TITLE.format(chooser=CHOOSERS[chosen_by]) + "\n" + "\n".join(lines)


def condition_clause(sentence: str) -> str | None:
    """The condition a sentence states ("… when the status is 303, …" → "the status is 303"),
    or ``None`` when it states none."""
    text = _CITATION.sub(" ", sentence)
    m = _CONDITIONAL.search(text)
    if m is None:
        return None
    rest = text[m.end():]
    end = _CLAUSE_END.search(rest)
    clause = rest[: end.start()] if end else rest
    return clause.strip(" `.") or None


def _code_terms(line: CodeLine) -> set[str]:
    return line_terms(f"{line.text} {line.then}")


def maps_to(clause: str, line: CodeLine) -> bool:
    """Whether a stated condition reads the same things as a quoted one: at least a third of
    its content words (identifiers split, stemmed; at least one) are in the quoted condition
    or what it does."""
    terms = question_terms(clause)
    if not terms:
        return False
    shared = matched_terms(_code_terms(line), terms)
    return len(shared) >= max(1, math.ceil(len(terms) / 3))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def check_conditions(answer: str, quoted: list[CodeLine], offered: list[CodeLine]
                     ) -> tuple[list[VerificationResult], dict[str, str], list[CodeLine]]:
    """Verdicts on the answer's conditional statements, the replacements they imply, and the
    conditions quoted for them.

    A sentence with an *if / when / unless* clause is VERIFIED when its clause maps to a
    quoted condition (``quoted``); else, when it maps to a condition the code has that was
    offered but not chosen (``offered``), that one is quoted for it; else it is removed
    (CORRECTED, ``method="condition"``): moot does not keep a condition it cannot show in the
    code."""
    verdicts: list[VerificationResult] = []
    replace: dict[str, str] = {}
    added: list[CodeLine] = []
    conditions = [c for c in quoted if c.is_condition()]
    spare = [c for c in offered if c.is_condition() and all((c.path, c.line) != (q.path, q.line) for q in conditions)]
    for sentence in sentences(answer):
        clause = condition_clause(sentence)
        if clause is None or sentence.startswith(("Evidence locations (added by moot", "(no answer", "(moot removed")):
            continue
        match = next((c for c in [*conditions, *added] if maps_to(clause, c)), None)
        if match is not None:
            verdicts.append(VerificationResult(claim=sentence, status="VERIFIED", citation=match.location(), method="condition",
                                               correction=f"its condition is quoted: `{match.text}`"))
            continue
        match = next((c for c in spare if maps_to(clause, c)), None)
        if match is not None:
            added.append(match)
            spare.remove(match)
            verdicts.append(VerificationResult(claim=sentence, status="VERIFIED", citation=match.location(), method="condition",
                                               correction=f"its condition is in the code and is now quoted: `{match.text}`"))
            continue
        replace[sentence] = ""
        verdicts.append(VerificationResult(
            claim=sentence, status="CORRECTED", method="condition",
            correction=f"the condition \"{clause}\" is not among the conditions quoted from the code: the statement was removed",
        ))  # fmt: skip
    return verdicts, replace, added


__all__ = ["SECTION_TITLE", "asks_how", "check_conditions", "condition_clause", "conditions_section", "maps_to", "statement"]
