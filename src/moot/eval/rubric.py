"""The deterministic rubric grader: the default grader, reproducible to the byte.

Semantics (shared with the content writers; docs/eval.md):

* ``required`` is a list of groups; a group is satisfied when ANY alternative matches.
  Score = satisfied groups / groups.
* An alternative is a plain string, matched case-insensitively as a substring after
  collapsing whitespace, with thousands separators and ``$`` normalised away on both sides
  ("4,200" == "4200"); or ``re:PATTERN``, a case-insensitive Python regex (tried on the
  answer as written and on its normalised form).
* ``forbidden``: any match makes the score 0.
* ``expects_unknown``: the answer passes only if it plainly says the sources do not give the
  answer (:data:`UNKNOWN_PHRASES`) and matches nothing forbidden (and any required group).
* A question passes when its score reaches ``pass_threshold`` (1.0 unless the level says less).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from moot.eval.levels import Question, Rubric

UNKNOWN_PHRASES: tuple[str, ...] = (
    r"\bi (?:do not|don't|dont) know\b",
    r"\b(?:do not|don't|does not|doesn't|did not|didn't) (?:say|state|mention|give|specify|report|include|contain|record|tell)\b",
    r"(?:\b(?:is|are|was|were)|['’]s|['’]re)(?:n't| not) (?:mentioned|stated|given|specified|reported|recorded|known|provided|available|included)\b",
    r"\bnot (?:mentioned|stated|given|specified|reported|recorded|provided|available) in\b",
    r"\b(?:no|not enough|insufficient) (?:information|data|details?|record|facts?|mention)\b",
    r"\bnot in the (?:sources?|articles?|facts?|notes?|knowledge base|text)\b",
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to) (?:be )?(?:determine|determined|find|found|tell|say|answer|know)\b",
    r"\b(?:is|remains) unknown\b",
    r"\bunknown from the\b",
    r"\bno facts? about\b",
    r"\bthe (?:sources?|articles?|facts?|knowledge base) (?:give|gives|provide|provides|hold|holds|have|has) no\b",
)
"""The ways an answer says the sources do not hold the answer (case-insensitive regexes)."""

_UNKNOWN = re.compile("|".join(f"(?:{p})" for p in UNKNOWN_PHRASES), re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def normalise(text: str) -> str:
    """Lower case, whitespace collapsed, thousands separators and ``$`` removed."""
    text = _collapse(text).lower().replace("$", "")
    # "1,200,000" → "1200000": apply until stable (overlapping groups).
    previous = None
    while previous != text:
        previous, text = text, _THOUSANDS.sub("", text)
    return text


def matches(alternative: str, answer: str) -> bool:
    """Whether one rubric alternative (plain string or ``re:…``) matches the answer."""
    if alternative.startswith("re:"):
        pattern = re.compile(alternative[3:], re.IGNORECASE)
        return bool(pattern.search(_collapse(answer)) or pattern.search(normalise(answer)))
    needle = normalise(alternative)
    return bool(needle) and needle in normalise(answer)


def says_unknown(answer: str) -> bool:
    """Whether the answer plainly says the sources do not hold the answer."""
    return bool(_UNKNOWN.search(_collapse(answer).replace("’", "'")))


class RubricGrade(BaseModel):
    """The rubric's verdict on one answer, with the reason in words."""

    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    satisfied: list[int] = Field(default_factory=list)
    """Indexes of the required groups the answer satisfies."""
    missing: list[int] = Field(default_factory=list)
    """Indexes of the required groups it does not."""
    forbidden_hit: list[str] = Field(default_factory=list)
    said_unknown: bool = False
    reason: str = ""


def grade(answer: str, rubric: Rubric, *, pass_threshold: float = 1.0) -> RubricGrade:
    """Grade ``answer`` against ``rubric`` (the semantics in the module docstring)."""
    satisfied = [i for i, group in enumerate(rubric.required) if any(matches(alt, answer) for alt in group)]
    missing = [i for i in range(len(rubric.required)) if i not in satisfied]
    hits = [p for p in rubric.forbidden if matches(p, answer)]
    unknown = says_unknown(answer)
    score = len(satisfied) / len(rubric.required) if rubric.required else 1.0
    reasons: list[str] = []
    if hits:
        score = 0.0
        reasons.append(f"states something forbidden ({hits[0]})")
    if rubric.expects_unknown and not unknown:
        score = 0.0
        reasons.append("answers although the sources do not say (expected a plain 'the sources don't say')")
    if missing and not hits:
        reasons.append("missing " + "; ".join(" / ".join(rubric.required[i]) for i in missing))
    passed = score > 0 and score >= pass_threshold
    if not reasons:
        reasons.append("says it is unknown, as expected" if rubric.expects_unknown else "every required fact is there")
    return RubricGrade(score=round(score, 4), passed=passed, satisfied=satisfied, missing=missing,
                       forbidden_hit=hits, said_unknown=unknown, reason="; ".join(reasons))  # fmt: skip


def grade_question(answer: str, question: Question) -> RubricGrade:
    """Grade an answer to one suite question with its own rubric and threshold."""
    return grade(answer, question.rubric, pass_threshold=question.pass_threshold)


__all__ = ["UNKNOWN_PHRASES", "RubricGrade", "grade", "grade_question", "matches", "normalise", "says_unknown"]
