"""The answer checker: every number, date and name in a draft must come from the evidence.

Runs in Python before an answer is returned. The evidence is the retrieved facts, the source
passages, the question itself and every value computed for the answer (the ComputeAgent's
value, the calculator's results). A draft that states anything else fails, and the verdict
names the offending spans so the draft can be sent back once with them, or replaced by a plain
statement of what the sources do and do not say (:func:`plain_statement`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_CITATION = re.compile(r"\[#\d+\]|#\d+")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_LIST_MARKER = re.compile(r"(?m)^\s*(?:step\s+)?\d{1,2}[.):]\s")
_STEP_COUNT = re.compile(r"\b(?:step|steps|stage|stages|no\.?)\s+(\d{1,2})\b|\b(\d{1,2})\s+(?:steps|stages)\b", re.I)
_NAME = re.compile(r"(?<![\w'’-])([A-Z][a-zà-ÿ'’]+(?:[ -][A-Z][a-zà-ÿ'’]+)*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•]|\d+[.)])?\s*|\(\s*|\"\s*)$")
UNKNOWN_TEXT = re.compile(
    r"\b(do(?:es)? not (?:say|hold|mention|give|state)|don't know|do not know|not (?:mentioned|stated|given)|"
    r"no information|cannot be determined|can't be determined|not enough information|sources do not)\b", re.I)

COMMON_CAPITALISED = frozenset("""
I A An The This That These Those It Its They Their There Then Yes No Not Both Each Every All Some Any One Two
Three Four Five Six Seven Eight Nine Ten First Second Third Last Next After Before When While If So But And Or
According Based From In On At By For With Without To Of As Because Since Therefore However Also Only Step Steps
Source Sources Fact Facts Answer Question Result Note Total Sum Difference Monday Tuesday Wednesday Thursday
Friday Saturday Sunday January February March April May June July August September October November December
Mr Mrs Ms Dr Sir What Which Who Why How Where He She We You My Our Your His Her Yesterday Today Tomorrow
""".split())


def numbers_in(text: str) -> set[str]:
    """Numbers as compared: thousands separators and trailing zeros dropped (``4,200`` = ``4200.0``)."""
    out: set[str] = set()
    for match in _NUMBER.finditer(_CITATION.sub(" ", text)):
        token = match.group().replace(",", "").rstrip(".")
        if "." in token:
            token = token.rstrip("0").rstrip(".")
        if token:
            out.add(token)
    return out


def names_in(text: str) -> set[str]:
    """Capitalised words and runs of them that are not at a sentence start and not common words."""
    found: set[str] = set()
    clean = _CITATION.sub(" ", text)
    for match in _NAME.finditer(clean):
        words = [w for w in re.split(r"[ -]", match.group(1)) if w not in COMMON_CAPITALISED]
        if not words:
            continue
        if _SENTENCE_START.search(clean[: match.start()]) and len(match.group(1).split()) == 1:
            continue  # one capitalised word opening a sentence is just a sentence
        found.update(words)
    return found


@dataclass
class Evidence:
    """What a draft may draw on."""

    texts: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)
    """Values computed in Python for this answer (the ComputeAgent's, the calculator's)."""

    @classmethod
    def build(cls, *, question: str, facts: Sequence[Mapping[str, Any]] = (),
              passages: Sequence[Mapping[str, Any]] = (), computed: Iterable[str] = ()) -> Evidence:
        texts = [question]
        for fact in facts:
            texts.append(" ".join(str(fact.get(k) or "") for k in ("content", "value", "entity", "source", "source_date")))
        for passage in passages:
            texts.append(" ".join(str(passage.get(k) or "") for k in ("text", "source", "published")))
        return cls(texts=texts, computed=[str(c) for c in computed if c])

    def numbers(self) -> set[str]:
        out: set[str] = set()
        for text in (*self.texts, *self.computed):
            out |= numbers_in(text)
            # ISO dates in metadata ("2024-03-05") ground the day, month and year as written in prose.
            for y, m, d in re.findall(r"\b(\d{4})-(\d{2})-(\d{2})\b", text):
                out |= {y, str(int(m)), str(int(d))}
        return out

    def words(self) -> str:
        return " ".join((*self.texts, *self.computed)).lower()


@dataclass
class Verdict:
    """The checker's finding about one draft."""

    ok: bool
    unsupported: list[str] = field(default_factory=list)
    """The offending spans: numbers, dates and names found in no fact, passage or computed value."""
    says_unknown: bool = False
    empty: bool = False

    def reason(self) -> str:
        if self.empty:
            return "no draft"
        if self.ok:
            return "every number and name is in the evidence"
        return "states " + ", ".join(repr(s) for s in self.unsupported) + ", found in no retrieved fact or computed value"


def check_draft(draft: str, evidence: Evidence) -> Verdict:
    """Check one draft against the evidence (see the module docstring)."""
    text = (draft or "").strip()
    if not text:
        return Verdict(ok=False, empty=True)
    allowed = evidence.numbers()
    free = {m.group().split()[-1].rstrip(".):") for m in _LIST_MARKER.finditer(text)}
    for match in _STEP_COUNT.finditer(text):
        free.add(match.group(1) or match.group(2))
    unsupported = sorted(n for n in numbers_in(text) - allowed - free)
    words = evidence.words()
    for name in sorted(names_in(text)):
        if not re.search(r"(?<![a-z])" + re.escape(name.lower().rstrip("'’s")), words):
            unsupported.append(name)
    return Verdict(ok=not unsupported, unsupported=unsupported, says_unknown=bool(UNKNOWN_TEXT.search(text)))


def plain_statement(question: str, facts: Sequence[Mapping[str, Any]], *, unsupported: Sequence[str] = (),
                    limit: int = 2) -> str:
    """What the sources do and do not say, when no draft survives the checker."""
    said = "; ".join(str(f.get("content") or "").rstrip(".") for f in list(facts)[:limit] if f.get("content"))
    missing = f" (nothing in them supports {', '.join(unsupported[:3])})" if unsupported else ""
    head = f"The sources do not say{missing}."
    return f"{head} What they do say: {said}." if said else head


__all__ = ["Evidence", "UNKNOWN_TEXT", "Verdict", "check_draft", "names_in", "numbers_in", "plain_statement"]
