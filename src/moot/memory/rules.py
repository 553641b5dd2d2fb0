"""Documented rules: a fee schedule or a code format that a source writes out, parsed in Python.

A notice that says "every boat pays a base fee of 10 marks a night; boats longer than 8 metres
also pay 2 marks for each metre over 8 metres; on festival nights the fee is doubled …" states
no answer to "what does a 12-metre boat pay?", and a 0.5B model that reads it adds, doubles and
discounts in whatever order it likes. The rule itself is plain enough to read as data:

- :class:`FeeRule` — charges (a fixed fee, a rate for each unit, or for each unit over a
  threshold), adjustments under a condition (doubled/halved/multiplied; an amount or a percentage
  off, before or after the multiplying, as the notice says), "every Nth night free", and a cap;
- :class:`CodeRule` — a code of parts written in order (``First, …``/bullets): a letter for one
  of several named things, a number padded to N digits, a letter for a numeric range ("A for
  boats up to and including 8 metres, B for over 8 and up to 12 …"), joined as the notice says.

Both are *checked against the notice's own worked example* ("Example: an 11-metre boat pays …
16 marks on an ordinary night and 32 marks on a festival night"): a rule whose evaluation does
not give every amount (or the code) that example states was misread, and is not offered. That is
the check a careful reader makes, done in Python. Deterministic, no model call.

The phrasings read are the common ones of tariffs and code formats; a rule written otherwise is
simply not found here, and the other specialists answer.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from moot.memory.facts import match_terms

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase

_WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_ORDINAL_NUMBERS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}
_NUM = r"(\d+(?:[.,]\d+)?|" + "|".join(_WORD_NUMBERS) + r")"
_SENTENCE = re.compile(r"(?:[^.!?]|\.(?=\d))+(?:[.!?]+(?=\s|$)|$)")
"""A sentence; the point of a decimal ("3.5 tonnes") does not end one."""
_EXAMPLE_OPENING = re.compile(r"^\s*(?:[-*]\s*)?(?:for example|example|e\.g\.|for instance)\b", re.I)
NEGATION = re.compile(r"\b(?:not|non|isn'?t|aren'?t|no|without|never)\b[\w\s-]{0,20}$", re.I)
"""A condition's phrase preceded by this ("that is not in the Boat Club") does not hold."""


def number(token: str) -> float:
    token = token.lower().replace(",", "")
    return float(_WORD_NUMBERS[token]) if token in _WORD_NUMBERS else float(token)


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


# --------------------------------------------------------------------------- fee rules


@dataclass(frozen=True)
class Charge:
    amount: float
    per: str | None = None
    """The unit a rate is charged for ("metre"); None for a fixed fee."""
    over: float = 0.0
    """A rate charged only for each unit over this ("for each metre over 8 metres")."""
    text: str = ""


@dataclass(frozen=True)
class Adjustment:
    kind: Literal["multiply", "subtract", "percent_off"]
    amount: float
    condition: Condition
    text: str = ""
    before_multiply: bool = False
    """An amount off taken before any multiplying (the notice says so); after it otherwise."""


@dataclass(frozen=True)
class FeeRule:
    """A fee schedule read from one source (see the module docstring)."""

    title: str
    currency: str
    period: str | None
    """What the fee is charged for ("night"): a stay of 7 nights is 7 of them."""
    charges: tuple[Charge, ...]
    adjustments: tuple[Adjustment, ...] = ()
    free_every: int | None = None
    free_unit: str | None = None
    """What every Nth of is free: the period (a stay's nights) or a charged unit (a hire's hours)."""
    round_up: tuple[str, ...] = ()
    """Units charged whole: "part of an hour is charged as a whole hour"."""
    cap: float | None = None
    """No more than this per period ("at most 40 marks a night")."""
    examples: tuple[str, ...] = ()
    source: str = ""
    episode_id: int = 0
    verified: bool = False
    """True when the notice's worked example comes out of the rule as read."""
    contradicted: bool = False
    """True when it does not: the rule was misread and is not applied."""

    @property
    def units(self) -> set[str]:
        return {c.per for c in self.charges if c.per}

    def evaluate(self, inputs: dict[str, float], conditions: dict[str, bool], *, periods: int = 1
                 ) -> tuple[float, str] | None:
        """The fee and the expression that gives it, or None when an input it needs is missing."""
        parts, value = [], 0.0
        for charge in self.charges:
            if charge.per is None:
                parts.append(fmt(charge.amount))
                value += charge.amount
                continue
            if charge.per not in inputs:
                return None
            given = math.ceil(inputs[charge.per] - 1e-9) if charge.per in self.round_up else inputs[charge.per]
            shown = fmt(given)
            if self.free_every and self.free_unit == charge.per and given >= self.free_every:
                free = given // self.free_every
                given, shown = given - free, f"{shown} − {fmt(free)} free"
            units = max(0.0, given - charge.over)
            value += charge.amount * units
            if units:
                counted = f"({shown} − {fmt(charge.over)})" if charge.over else (f"({shown})" if " " in shown else shown)
                parts.append(f"{fmt(charge.amount)} × {counted}")
        expression = " + ".join(parts) or "0"
        if len(parts) > 1:
            expression = f"({expression})"
        for adj in self.adjustments:
            if not conditions.get(adj.condition.phrase):
                continue
            if adj.kind == "subtract" and adj.before_multiply:
                value -= adj.amount
                expression = f"({expression} − {fmt(adj.amount)})"
        for adj in self.adjustments:
            if adj.kind == "multiply" and conditions.get(adj.condition.phrase):
                value *= adj.amount
                expression = f"{expression} × {fmt(adj.amount)}"
        for adj in self.adjustments:
            if not conditions.get(adj.condition.phrase) or adj.kind == "multiply" or adj.before_multiply:
                continue
            if adj.kind == "subtract":
                value -= adj.amount
                expression = f"{expression} − {fmt(adj.amount)}"
            else:
                value -= value * adj.amount / 100
                expression = f"{expression} × (1 − {fmt(adj.amount)}%)"
        value = max(0.0, value)
        if self.cap is not None and value > self.cap:
            value, expression = self.cap, f"{expression}, capped at {fmt(self.cap)}"
        if periods > 1:
            per_period = self.free_every if self.free_unit in (None, self.period) else None
            charged = periods - (periods // per_period if per_period else 0)
            free = f" ({periods} − {periods // per_period} free)" if per_period and periods >= per_period else ""
            expression = f"{parenthesised(expression)} × {charged}{free}"
            value *= charged
        return value, expression


def parenthesised(expression: str) -> str:
    """``expression`` in parentheses, unless it is one number or already one parenthesised group."""
    if re.fullmatch(r"[\d.]+", expression):
        return expression
    depth = 0
    for i, ch in enumerate(expression):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and i < len(expression) - 1:
            return f"({expression})"
    return expression


def unwrapped(expression: str) -> str:
    """``expression`` without one pair of parentheses around all of it: "(10 + 8)" → "10 + 8"."""
    if expression.startswith("(") and parenthesised(expression) == expression:
        return expression[1:-1]
    return expression


_CURRENCY = r"([A-Za-z€$£]+)"
_BASE = re.compile(rf"\b(?:base|basic|flat|standard|fixed|minimum|starting)\s+(?:fee|charge|rate|price|fare|toll|cost)\s+"
                   rf"(?:of\s+|is\s+)?{_NUM}\s+{_CURRENCY}(?:\s+(?:a|an|per|each|for each|every)\s+([a-z]+))?", re.I)
_COVERS = re.compile(rf"\b(?:includes?|including|covers?|covering)\s+the\s+first\s+(?:{_NUM}\s+)?([a-z]+)", re.I)
""""a basic charge of 6 florins, which includes the first hour": a rate for each hour starts after it."""
_RATE_AFTER = re.compile(rf"\b(?:for|per)\s+(?:each|every)\s+(?:extra\s+|additional\s+|further\s+)?([a-z]+)"
                         rf"((?:\s+(?:over|above|beyond|after|more than|in excess of)\s+(?:the\s+first(?:\s+{_NUM})?|{_NUM})"
                         rf"(?:\s+[a-z]+)?)?)\s*,?\s+{_NUM}\s+{_CURRENCY}", re.I)
"""A rate written unit first: "for every hour after the first, 2 florins are added"."""
_ROUND_UP = re.compile(r"\bpart of an?\s+([a-z]+)\s+(?:(?:is|will be)\s+(?:charged|counted|billed|paid)|counts|is treated)\s+as\s+(?:a\s+)?"
                       r"(?:whole|full)\b|\brounded up to the next (?:whole\s+|full\s+)?([a-z]+)", re.I)
_RATE = re.compile(rf"{_NUM}\s+{_CURRENCY}\s+(?:for each|for every|per|a|an)\s+(?:extra\s+|additional\s+|full\s+)?([a-z]+)"
                   rf"(?:\s+(?:over|above|beyond|more than|after(?: the first)?)\s+{_NUM}(?:\s+[a-z]+)?)?", re.I)
_MULTIPLY = re.compile(r"\b(doubled|tripled|halved|twice|multiplied by\s+" + _NUM + r"|(?:one and a half|1\.5) times)\b", re.I)
_OFF = re.compile(rf"(?:{_NUM}\s+{_CURRENCY}\s+(?:off|less)\b|discount of\s+{_NUM}\s+{_CURRENCY}|{_NUM}\s*(?:%|per\s*cent|percent)\s+(?:off|"
                  rf"discount|less))", re.I)
_FREE = re.compile(r"\bevery\s+(" + "|".join(_ORDINAL_NUMBERS) + r"|\d+(?:st|nd|rd|th))\s+([a-z]+)(?:\s+of\s+(?:a|an|the|each)\s+[a-z]+)?"
                   r"\s+(?:is|are)\s+free\b",
                   re.I)
_CAP = re.compile(rf"\b(?:at most|no more than|never more than|capped at|maximum of|up to a maximum of|(?:no|never)\b.*?\bmore "
                  rf"than)\s+{_NUM}\s+{_CURRENCY}", re.I)
_CONDITION_OPENING = re.compile(r"^\s*(?:\d+[.)]\s*)?(?:[-*]\s*)?(?:on|during|for|if|when|in)\s+(.+?)(?:,|\s+(?:the|its|their|all)\s+"
                                r"(?:whole\s+|total\s+|full\s+|usual\s+)?(?:\w+\s+)?(?:fee|charge|fare|price|amount|cost|dues|rate)s?\b)",
                                re.I)
_THRESHOLD = r"(?:each|every|any)\s+(?:extra\s+|additional\s+)?{unit}s?\s+(?:over|above|beyond|after|more than)\s+(?:the first\s+)?" + _NUM
_SUBJECT = re.compile(r"^\s*(?:\d+[.)]\s*)?(?:[-*]\s*)?(.+?)\s+(?:get|gets|receive|receives|are given|is given|have|has|pay|"
                      r"pays)\b", re.I)


def _subject(clause: str) -> str:
    """"A hire that starts on a Saturday or a Sunday costs" → the part before its verb."""
    return re.split(r"\s+(?:costs?|pays?|is|are|will|gets?|receives?|has|have|must)\b", clause, maxsplit=1)[0]


def _multiplier(match: re.Match[str]) -> float:
    word = match.group(1).lower()
    if word.startswith("doubled") or word == "twice":
        return 2.0
    if word.startswith("tripled"):
        return 3.0
    if word.startswith("halved"):
        return 0.5
    if "half" in word or word.startswith("1.5"):
        return 1.5
    return number(match.group(2))


def _ordinal(token: str) -> int:
    token = token.lower()
    return _ORDINAL_NUMBERS.get(token) or int(re.sub(r"\D", "", token))


def _sentences(text: str) -> tuple[list[str], list[str]]:
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


def _heading(text: str) -> str:
    """The notice's first Markdown heading, which names the rule ("Port Hessel harbour dues …")."""
    return next((line.lstrip("#").strip() for line in text.splitlines() if line.strip().startswith("#")), "")


def parse_fee_rule(text: str, *, source: str = "", episode_id: int = 0) -> FeeRule | None:
    """The fee schedule that ``text`` writes out, or None when it has no fixed fee and rate to read."""
    rules, examples = _sentences(text)
    title = _heading(text)
    currency = period = None
    charges: list[Charge] = []
    adjustments: list[Adjustment] = []
    free_every = cap = None
    free_unit: str | None = None
    round_up: list[str] = []
    covers: dict[str, float] = {}
    for sentence in rules:
        if base := _BASE.search(sentence):
            currency = currency or base.group(2).lower()
            period = period or (singular(base.group(3)) if base.group(3) else None)
            charges.append(Charge(number(base.group(1)), text=sentence))
            if covered := _COVERS.search(sentence):
                covers[singular(covered.group(2))] = number(covered.group(1)) if covered.group(1) else 1.0
            continue
        if currency is None:
            continue
        if free := _FREE.search(sentence):
            free_every, free_unit = _ordinal(free.group(1)), singular(free.group(2))
            continue
        if rounded := _ROUND_UP.search(sentence):
            round_up.append(singular(rounded.group(1) or rounded.group(2)))
            continue
        if capped := _CAP.search(sentence):
            if capped.group(2).lower() == currency:
                cap = number(capped.group(1))
                continue
        if multiply := _MULTIPLY.search(sentence):
            opening = _CONDITION_OPENING.match(sentence)
            condition = condition_from(opening.group(1) if opening else _subject(sentence[: multiply.start()]), unit=period)
            if condition is not None:
                adjustments.append(Adjustment("multiply", _multiplier(multiply), condition, sentence))
            continue
        if off := _OFF.search(sentence):
            subject = _SUBJECT.match(sentence)
            opening = _CONDITION_OPENING.match(sentence)
            phrase = (opening.group(1) if opening else subject.group(1) if subject else "")
            condition = condition_from(phrase, unit=period)
            if condition is None:
                continue
            if off.group(1):
                adjustments.append(Adjustment("subtract", number(off.group(1)), condition, sentence))
            elif off.group(3):
                adjustments.append(Adjustment("subtract", number(off.group(3)), condition, sentence))
            else:
                adjustments.append(Adjustment("percent_off", number(off.group(5)), condition, sentence))
            continue
        if re.search(r"\b(?:discount|reduction)\b.*\bbefore\b.*\b(?:doubl|multipl|halv|tripl)", sentence, re.I):
            adjustments = [a if a.kind == "multiply" else Adjustment(a.kind, a.amount, a.condition, a.text, True)
                           for a in adjustments]
            continue
        found_rate = False
        for rate in _RATE.finditer(sentence):
            if rate.group(2).lower() != currency or (period and singular(rate.group(3)) == period):
                continue
            over = number(rate.group(4)) if rate.group(4) else 0.0
            unit = singular(rate.group(3))
            if not over and (elsewhere := re.search(_THRESHOLD.format(unit=re.escape(unit)), sentence, re.I)):
                over = number(elsewhere.group(1))  # "every hour above 3 hours costs 5 crowns per hour"
            if not over and re.search(rf"\b{re.escape(unit)}s?\s+after\s+the\s+first\b", sentence, re.I):
                over = covers.get(unit, 1.0)
            charges.append(Charge(number(rate.group(1)), unit, over, sentence))
            found_rate = True
        if not found_rate and (after := _RATE_AFTER.search(sentence)) and after.group(6).lower() == currency:
            unit = singular(after.group(1))
            said = after.group(2) or ""
            if numbered := re.search(rf"\b{_NUM}", said):
                over = number(numbered.group(1))
            elif re.search(r"\bthe\s+first\b", said, re.I):
                over = covers.get(unit, 1.0)
            else:
                over = 0.0
            charges.append(Charge(number(after.group(5)), unit, over, sentence))
    if currency is None or not charges:
        return None
    rule = FeeRule(title, currency, period, tuple(charges), tuple(adjustments), free_every, free_unit, tuple(round_up), cap,
                   tuple(examples), source, episode_id)
    return _verified_fee(rule)


def quantities_in(text: str, units: Sequence[str]) -> dict[str, float]:
    """A case's quantities in the given units: "a 12-metre boat … 7 ordinary nights" with units
    metre and night → {"metre": 12, "night": 7} (up to two words between a number and its unit)."""
    found: dict[str, float] = {}
    for unit in units:
        pattern = rf"\b{_NUM}(?:-|\s+)(?:[a-z]+\s+){{0,2}}?{re.escape(unit)}(?:s|es)?\b"
        if match := re.search(pattern, text, re.I):
            found[unit] = number(match.group(1))
            if unit == "hour" and (minutes := re.match(r"\s*(?:and\s+)?(\d+)\s+min(?:ute)?s?\b", text[match.end():], re.I)):
                found[unit] += int(minutes.group(1)) / 60  # "2 hours and 20 minutes"
        elif unit == "hour" and (span := re.search(r"\bfrom\s+(\d{1,2})[:.](\d{2})\s+(?:to|until|till)\s+(\d{1,2})[:.](\d{2})\b",
                                                   text, re.I)):
            start, end = int(span[1]) * 60 + int(span[2]), int(span[3]) * 60 + int(span[4])
            found[unit] = ((end - start) % (24 * 60)) / 60  # "from 08:00 to 18:00"
    return found


_EACH = re.compile(r"\b(" + "|".join(list(_WORD_NUMBERS)[2:]) + r"|\d+)\s+(?:[\w'’-]+\s+){1,5}?each\b", re.I)


def case_count(text: str, units: Sequence[str]) -> int:
    """"Two card holders each hire a bike …": the fee is paid that many times (1 when no count)."""
    match = _EACH.search(text)
    if match is None or any(re.match(rf"\s+{re.escape(u)}", text[match.end(1):], re.I) for u in units):
        return 1
    return int(number(match.group(1)))


def _verified_fee(rule: FeeRule) -> FeeRule:
    """Does every amount the worked example states come out of the rule for the example's case?"""
    stated: list[float] = []
    inputs: dict[str, float] = {}
    for sentence in rule.examples:
        stated += [number(m.group(1)) for m in re.finditer(rf"{_NUM}\s+{re.escape(rule.currency)}\b", sentence, re.I)]
        for unit, value in quantities_in(sentence, sorted(rule.units)).items():
            inputs.setdefault(unit, value)
    # "with 2 florins off for the card": the rule's own amounts, named again, are no results to check.
    constants = {round(c.amount, 2) for c in rule.charges} | {round(a.amount, 2) for a in rule.adjustments}
    stated = [v for v in stated if round(v, 2) not in constants]
    if not stated or not rule.units <= set(inputs):
        return rule
    phrases = [a.condition.phrase for a in rule.adjustments]
    produced = set()
    for combo in itertools.product((False, True), repeat=len(phrases)):
        result = rule.evaluate(inputs, dict(zip(phrases, combo)))
        if result is not None:
            produced.add(round(result[0], 2))
    ok = all(round(v, 2) in produced for v in stated)
    return FeeRule(**{**rule.__dict__, "verified": ok, "contradicted": not ok})


# --------------------------------------------------------------------------- code rules


@dataclass(frozen=True)
class Range:
    low: float | None
    low_inclusive: bool
    high: float | None
    high_inclusive: bool
    unit: str

    def contains(self, value: float) -> bool:
        if self.low is not None and (value < self.low or (value == self.low and not self.low_inclusive)):
            return False
        return not (self.high is not None and (value > self.high or (value == self.high and not self.high_inclusive)))


@dataclass(frozen=True)
class Option:
    letter: str
    phrase: str
    range: Range | None = None


@dataclass(frozen=True)
class CodePart:
    kind: Literal["letter", "number"]
    text: str
    options: tuple[Option, ...] = ()
    digits: int = 0
    label: str = ""
    """The word a number part is found after in a case ("berth 4" → "berth")."""


@dataclass(frozen=True)
class CodeRule:
    title: str
    name: str
    """What the code is called ("berth code")."""
    parts: tuple[CodePart, ...]
    separator: str = ""
    examples: tuple[str, ...] = ()
    source: str = ""
    episode_id: int = 0
    verified: bool = False
    """True when the notice's example code comes out of the rule as read."""
    contradicted: bool = False
    """True when another code does: the rule was misread and is not applied."""
    expected: str = ""
    """The code the worked example states."""

    def evaluate(self, case: str, pick: dict[int, str] | None = None) -> tuple[str, list[str]] | None:
        """The code for the case and how each part was read; None when a part cannot be read.

        ``pick`` gives a letter part's option (by index) where the case does not say which."""
        out, why = [], []
        quantities = quantities_in(case, sorted({o.range.unit for p in self.parts for o in p.options if o.range}))
        for index, part in enumerate(self.parts):
            if part.kind == "number":
                match = re.search(rf"\b{re.escape(part.label)}s?\s+(?:no\.?\s*|number\s+)?(\d+)\b", case, re.I) \
                    if part.label else None
                match = match or re.search(r"\b(?:number|no\.)\s*(\d+)\b", case, re.I)
                if match is None:
                    return None
                digits = match.group(1).zfill(part.digits) if part.digits else match.group(1)
                out.append(digits)
                why.append(f"{part.label or 'number'} {match.group(1)} → {digits}")
                continue
            ranged = [o for o in part.options if o.range is not None]
            if ranged:
                unit = ranged[0].range.unit  # type: ignore[union-attr]
                if unit not in quantities:
                    return None
                hit = [o for o in ranged if o.range.contains(quantities[unit])]  # type: ignore[union-attr]
                if len(hit) != 1:
                    return None
                out.append(hit[0].letter)
                why.append(f"{fmt(quantities[unit])} {unit if len(unit) <= 2 else unit + 's'}: {hit[0].letter} ({hit[0].phrase})")
                continue
            option = choose_named(part.options, case)
            if option is None and pick and index in pick:
                option = next((o for o in part.options if o.letter == pick[index]), None)
            if option is None:
                return None
            out.append(option.letter)
            why.append(f"{option.phrase}: {option.letter}")
        return self.separator.join(out), why

    def undecided(self, case: str) -> list[tuple[int, CodePart]]:
        """The letter parts whose option the case's words do not settle (the model chooses)."""
        return [(i, p) for i, p in enumerate(self.parts)
                if p.kind == "letter" and not any(o.range for o in p.options) and choose_named(p.options, case) is None]


def choose_named(options: Sequence[Option], case: str) -> Option | None:
    """The option whose own words (those no other option has) the case names, if exactly one."""
    terms = match_terms(case)
    own = [match_terms(o.phrase) for o in options]
    # words only one option has ("tandem", "north") count first; words several share ("bike") second
    distinct = [words - frozenset().union(*(other for j, other in enumerate(own) if j != i)) for i, words in enumerate(own)]
    scored = [((len(d & terms), len(w & terms)), o) for d, w, o in zip(distinct, own, options)]
    best = max((s for s, _ in scored), default=(0, 0))
    winners = [o for s, o in scored if s == best]
    return winners[0] if best[0] and len(winners) == 1 else None


_PART_OPENING = re.compile(r"^\s*(?:[-*]\s*|\d+[.)]\s*)?(" + "|".join(list(_ORDINAL_NUMBERS)[:6]) + r"|then|finally|last(?:ly)?)\b"
                           r"\s*,?\s*(.+)$", re.I)
_OPTION = re.compile(r"\b([A-Z]{1,3})\s+(?:for|means|stands for|=)\s+(.+?)(?=,?\s+(?:and\s+)?[A-Z]{1,3}\s+(?:for|means|stands for|=)\s|"
                     r"[.;]\s*$|$)")
_DIGITS = re.compile(r"\b(?:with|as|in|using)\s+(\w+)\s+digits\b|\b(\w+)-digit\b", re.I)
_BOUND = re.compile(rf"\b(up to and including|up to|no more than|not more than|at most|over|more than|longer than|heavier than|"
                    rf"above|under|less than|shorter than|lighter than|below|at least|from)\s+{_NUM}\s*([a-z]+)?", re.I)
_CODE_NAME = re.compile(r"\b(?:an?|the|every|each)\s+((?:[a-z]+\s+)?code)\s+(?:has|is made (?:up )?of|consists of|is built from)\b",
                        re.I)


def _range(phrase: str) -> Range | None:
    low = high = None
    low_inc = high_inc = False
    unit = ""
    for match in _BOUND.finditer(phrase):
        word, value = match.group(1).lower(), number(match.group(2))
        unit = unit or singular(match.group(3) or "")
        if word in ("up to and including", "up to", "no more than", "not more than", "at most"):
            high, high_inc = value, True
        elif word in ("under", "less than", "shorter than", "lighter than", "below"):
            high, high_inc = value, False
        elif word in ("at least", "from"):
            low, low_inc = value, True
        else:
            low, low_inc = value, False
    for match in re.finditer(rf"{_NUM}\s*([a-z]+)?\s+or\s+(more|less|over|under|fewer)\b", phrase, re.I):
        value = number(match.group(1))
        unit = unit or singular(match.group(2) or "")
        if match.group(3).lower() in ("more", "over"):
            low, low_inc = value, True
        else:
            high, high_inc = value, True
    if low is None and high is None:
        return None
    return Range(low, low_inc, high, high_inc, unit)


def parse_code_rule(text: str, *, source: str = "", episode_id: int = 0) -> CodeRule | None:
    """The code format that ``text`` writes out as parts in order, or None."""
    named = _CODE_NAME.search(text)
    if named is None:
        return None
    rules, examples = _sentences(text)
    title = _heading(text)
    parts: list[CodePart] = []
    separator = ""
    for sentence in rules:
        if re.search(r"\b(?:hyphen|dash)", sentence, re.I):
            separator = "-"
        elif re.search(r"\bslash", sentence, re.I):
            separator = "/"
        elif re.search(r"\bseparated by (?:a )?space", sentence, re.I):
            separator = " "
        opening = _PART_OPENING.match(sentence)
        bullet = re.match(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", sentence)
        if opening is None and bullet is None:
            continue
        # "First, one letter for the pier …", or a bullet of a list "written in this order".
        body = opening.group(2) if opening is not None else bullet.group(1)  # type: ignore[union-attr]
        if digits := _DIGITS.search(body):
            said = (digits.group(1) or digits.group(2)).lower()
            count = _WORD_NUMBERS.get(said) or (int(said) if said.isdigit() else 0)
            head = re.split(r"[,:]", body)[0]
            label = next((singular(w) for w in re.findall(r"[a-z]+", head.lower())
                          if w not in ("the", "a", "an", "its", "number", "numbers", "on", "that", "of")), "")
            parts.append(CodePart("number", body, digits=count, label=label))
            continue
        options = tuple(Option(m.group(1), m.group(2).strip(" ,"), _range(m.group(2))) for m in _OPTION.finditer(body))
        if len(options) >= 2:
            parts.append(CodePart("letter", body, options))
    if len(parts) < 2:
        return None
    rule = CodeRule(title, named.group(1).lower(), tuple(parts), separator, tuple(examples), source, episode_id)
    for sentence in examples:
        stated = re.findall(r"\b(?=[A-Z0-9/ -]*\d)(?=[A-Z0-9/ -]*[A-Z])[A-Z0-9]+(?:[-/ ][A-Z0-9]+)*\b", sentence)
        if not stated:
            continue
        result = rule.evaluate(sentence)
        ok = result is not None and result[0] in stated
        return CodeRule(**{**rule.__dict__, "verified": ok, "contradicted": not ok, "expected": stated[-1]})
    return rule


# --------------------------------------------------------------------------- finding them


@dataclass(frozen=True)
class FoundRule:
    rule: FeeRule | CodeRule
    score: int
    published: str | None = None
    texts: tuple[str, ...] = field(default=())


FEE_ASKED = re.compile(r"\bhow much\b.*\b(?:pay|paid|cost|charged?|owe|fee|dues|fare)\b|"
                       r"\bwhat (?:does|do|did|will|would)\b.*\bcost\b|"
                       r"\bwhat (?:is|are|would be|will be) the (?:\w+ )?(?:fee|dues|charge|price|cost|fare|toll)s?\b", re.I)
CODE_ASKED = re.compile(r"\bwhat (?:is |are |would be |will be )?(?:the |its |their )?(?:\w+ )?code\b|"
                        r"\bwhich (?:\w+ )?code\b", re.I)


def rule_asked(question: str) -> Literal["fee", "code"] | None:
    if CODE_ASKED.search(question):
        return "code"
    if FEE_ASKED.search(question):
        return "fee"
    return None


def find_rules(kb: KnowledgeBase, question: str, *, max_episodes: int = 300) -> list[FoundRule]:
    """The documented rules of the kind the question asks for (a fee, a code), best first: those that
    share at least two content words with the question."""
    kind = rule_asked(question)
    if kind is None:
        return []
    wanted = match_terms(question)
    found: list[FoundRule] = []
    for episode in kb.episodes()[-max_episodes:]:
        parsed: FeeRule | CodeRule | None = (
            parse_fee_rule(episode.text, source=episode.source, episode_id=episode.id) if kind == "fee"
            else parse_code_rule(episode.text, source=episode.source, episode_id=episode.id))
        if parsed is None:
            continue
        score = len(wanted & match_terms(episode.text))
        if kind == "code":
            score += 2 * len(wanted & match_terms(parsed.name))
        if score >= 2:
            published = episode.published.isoformat() if episode.published else None
            found.append(FoundRule(parsed, score, published, tuple(_sentences(episode.text)[0])))
    found.sort(key=lambda f: (-f.rule.verified, f.rule.contradicted, -f.score, -f.rule.episode_id))
    return found


__all__ = ["CODE_ASKED", "FEE_ASKED", "Adjustment", "Charge", "CodePart", "CodeRule", "Condition", "FeeRule",
           "FoundRule", "Option", "Range", "choose_named", "condition_from", "find_rules", "fmt", "parse_code_rule",
           "parse_fee_rule", "quantities_in", "rule_asked", "singular", "unwrapped", "case_count", "parenthesised"]
