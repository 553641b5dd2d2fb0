"""What fee and code rules share: numbers in words, sentences and examples, a case's quantities, conditions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from moot.memory.facts import match_terms

WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
ORDINAL_NUMBERS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}
NUM = r"(\d+(?:[.,]\d+)?|" + "|".join(WORD_NUMBERS) + r")"
_SENTENCE = re.compile(r"(?:[^.!?]|\.(?=\d))+(?:[.!?]+(?=\s|$)|$)")
"""A sentence; the point of a decimal ("3.5 tonnes") does not end one."""
_EXAMPLE_OPENING = re.compile(r"^\s*(?:[-*]\s*)?(?:for example|example|e\.g\.|for instance)\b", re.I)
NEGATION = re.compile(r"\b(?:not|non|isn'?t|aren'?t|no|without|never)\b[\w\s-]{0,20}$", re.I)
"""A condition's phrase preceded by this ("that is not in the Boat Club") does not hold."""


def number(token: str) -> float:
    token = token.lower().replace(",", "")
    return float(WORD_NUMBERS[token]) if token in WORD_NUMBERS else float(token)


def singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def fmt(value: float) -> str:
    """2.0 → "2", 2.5 → "2.5", 1/3 → "0.33"."""
    if abs(value - round(value)) < 1e-9:
        return str(int(round(value)))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def quantities_in(text: str, units: Sequence[str]) -> dict[str, float]:
    """A case's quantities in the given units: "a 12-metre boat … 7 ordinary nights" with units
    metre and night → {"metre": 12, "night": 7} (up to two words between a number and its unit)."""
    found: dict[str, float] = {}
    for unit in units:
        pattern = rf"\b{NUM}(?:-|\s+)(?:[a-z]+\s+){{0,2}}?{re.escape(unit)}(?:s|es)?\b"
        if match := re.search(pattern, text, re.I):
            found[unit] = number(match.group(1))
            if unit == "hour" and (minutes := re.match(r"\s*(?:and\s+)?(\d+)\s+min(?:ute)?s?\b", text[match.end():], re.I)):
                found[unit] += int(minutes.group(1)) / 60  # "2 hours and 20 minutes"
        elif unit == "hour" and (span := re.search(r"\bfrom\s+(\d{1,2})[:.](\d{2})\s+(?:to|until|till)\s+(\d{1,2})[:.](\d{2})\b",
                                                   text, re.I)):
            start, end = int(span[1]) * 60 + int(span[2]), int(span[3]) * 60 + int(span[4])
            found[unit] = ((end - start) % (24 * 60)) / 60  # "from 08:00 to 18:00"
    return found


def ordinal(token: str) -> int:
    token = token.lower()
    return ORDINAL_NUMBERS.get(token) or int(re.sub(r"\D", "", token))


def split_sentences(text: str) -> tuple[list[str], list[str]]:
    """(rule sentences, example sentences): a paragraph that opens with "Example"/"For example" is examples."""
    rules: list[str] = []
    examples: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:\d+[.)]|[-*])\s)", text):
        paragraph = " ".join(paragraph.split())
        if not paragraph or paragraph.startswith("#"):
            continue
        target = examples if _EXAMPLE_OPENING.match(paragraph) else rules
        sentences = [s.strip() for s in _SENTENCE.findall(paragraph) if s.strip()]
        # The whole paragraph: "For example, … has the code S15B. Boats must not move …" keeps its
        # second sentence too, which states no amount or code and so checks nothing.
        (examples if target is examples else rules).extend(sentences)
    return rules, examples


def heading(text: str) -> str:
    """The notice's first Markdown heading, which names the rule ("Port Hessel harbour dues …")."""
    return next((line.lstrip("#").strip() for line in text.splitlines() if line.strip().startswith("#")), "")


# --------------------------------------------------------------------------- conditions


@dataclass(frozen=True)
class Condition:
    """When an adjustment applies: "on festival nights", "boats registered with the Hessel Boat Club"."""

    phrase: str
    key: tuple[str, ...]
    """The words that must be in a case for it to hold (stemmed): {"festival"}, {"hessel", "boat", "club"}."""
    name: str = ""
    """A proper name the phrase turns on ("Hessel Boat Club"): where the case names it, a negation
    just before it ("not in the Hessel Boat Club") is what counts."""
    alternatives: tuple[tuple[str, ...], ...] = ()
    """"on a Saturday or a Sunday": the condition holds when the case names any one of them."""

    def holds(self, case: str) -> bool | None:
        """True/False when the case says; None when it names only some of the key words."""
        if self.alternatives:
            return any(Condition(self.phrase, alt).holds(case) for alt in self.alternatives)
        terms = match_terms(case)
        found = [k for k in self.key if k in terms]
        if not found:
            return False
        # the phrase's first key word in the case: is it negated just before?
        lowered = case.lower()
        at = lowered.find(self.name.lower()) if self.name else -1
        if at >= 0:
            negated = bool(NEGATION.search(lowered[:at]))
        else:  # "at Thessingley Town Bikes, for a rider without a Residents' Card": any key word negated
            negated = any(NEGATION.search(lowered[:m.start()]) for k in found
                          for m in re.finditer(r"\b" + re.escape(k), lowered))
        if len(found) < len(self.key):
            return False if negated else None  # "without a Residents' Card" does not hold, whatever else
        return not negated


_GENERIC = frozenset(match_terms("registered member members with who which that are is be boat boats customer customers "
                                 "visitor visitors user users on during for in at the a an of any every each all whole "
                                 "also get gets receive receives pay pays given have has day days night nights week weeks month months "
                                 "hour hours time times"))


def condition_from(phrase: str, *, unit: str | None = None) -> Condition | None:
    phrase = " ".join(phrase.split()).strip(" ,.")
    names = re.findall(r"\b(?:[A-Z][\w'’-]*\s+){1,4}[A-Z][\w'’-]*\b", phrase)
    name = max(names, key=len) if names else ""
    drop = _GENERIC | (match_terms(f"{unit} {unit}s") if unit else frozenset())
    if name:
        key = tuple(sorted(match_terms(name)))
    else:
        key = tuple(sorted(match_terms(phrase) - drop))
    sides = re.split(r"\s+or\s+", phrase)
    if not name and len(sides) > 1:
        # "a hire that starts on a Saturday or a Sunday": each side's last words, as many as the
        # last side has, are one alternative ({saturday}, {sunday}).
        last = [w for w in re.findall(r"[\w'’-]+", sides[-1]) if match_terms(w) - drop]
        width = max(1, len(last))
        alternatives = []
        for side in sides:
            content = [w for w in re.findall(r"[\w'’-]+", side) if match_terms(w) - drop]
            alt = tuple(sorted(match_terms(" ".join(content[-width:])) - drop))
            if alt:
                alternatives.append(alt)
        if len(alternatives) == len(sides):
            return Condition(phrase, tuple(sorted(set().union(*alternatives))), "", tuple(alternatives))
    return Condition(phrase, key, name) if key else None
