"""Fee rules: a fee schedule a notice writes out, read as data and checked against its worked example."""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from moot.memory.rules.common import (NUM, ORDINAL_NUMBERS, WORD_NUMBERS, Condition, condition_from, fmt, heading, number,
                                      ordinal, quantities_in, singular, split_sentences)

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
                   rf"(?:of\s+|is\s+)?{NUM}\s+{_CURRENCY}(?:\s+(?:a|an|per|each|for each|every)\s+([a-z]+))?", re.I)
_COVERS = re.compile(rf"\b(?:includes?|including|covers?|covering)\s+the\s+first\s+(?:{NUM}\s+)?([a-z]+)", re.I)
""""a basic charge of 6 florins, which includes the first hour": a rate for each hour starts after it."""
_RATE_AFTER = re.compile(rf"\b(?:for|per)\s+(?:each|every)\s+(?:extra\s+|additional\s+|further\s+)?([a-z]+)"
                         rf"((?:\s+(?:over|above|beyond|after|more than|in excess of)\s+(?:the\s+first(?:\s+{NUM})?|{NUM})"
                         rf"(?:\s+[a-z]+)?)?)\s*,?\s+{NUM}\s+{_CURRENCY}", re.I)
"""A rate written unit first: "for every hour after the first, 2 florins are added"."""
_ROUND_UP = re.compile(r"\bpart of an?\s+([a-z]+)\s+(?:(?:is|will be)\s+(?:charged|counted|billed|paid)|counts|is treated)\s+as\s+(?:a\s+)?"
                       r"(?:whole|full)\b|\brounded up to the next (?:whole\s+|full\s+)?([a-z]+)", re.I)
_RATE = re.compile(rf"{NUM}\s+{_CURRENCY}\s+(?:for each|for every|per|a|an)\s+(?:extra\s+|additional\s+|full\s+)?([a-z]+)"
                   rf"(?:\s+(?:over|above|beyond|more than|after(?: the first)?)\s+{NUM}(?:\s+[a-z]+)?)?", re.I)
_MULTIPLY = re.compile(r"\b(doubled|tripled|halved|twice|multiplied by\s+" + NUM + r"|(?:one and a half|1\.5) times)\b", re.I)
_OFF = re.compile(rf"(?:{NUM}\s+{_CURRENCY}\s+(?:off|less)\b|discount of\s+{NUM}\s+{_CURRENCY}|{NUM}\s*(?:%|per\s*cent|percent)\s+(?:off|"
                  rf"discount|less))", re.I)
_FREE = re.compile(r"\bevery\s+(" + "|".join(ORDINAL_NUMBERS) + r"|\d+(?:st|nd|rd|th))\s+([a-z]+)(?:\s+of\s+(?:a|an|the|each)\s+[a-z]+)?"
                   r"\s+(?:is|are)\s+free\b",
                   re.I)
_CAP = re.compile(rf"\b(?:at most|no more than|never more than|capped at|maximum of|up to a maximum of|(?:no|never)\b.*?\bmore "
                  rf"than)\s+{NUM}\s+{_CURRENCY}", re.I)
_CONDITION_OPENING = re.compile(r"^\s*(?:\d+[.)]\s*)?(?:[-*]\s*)?(?:on|during|for|if|when|in)\s+(.+?)(?:,|\s+(?:the|its|their|all)\s+"
                                r"(?:whole\s+|total\s+|full\s+|usual\s+)?(?:\w+\s+)?(?:fee|charge|fare|price|amount|cost|dues|rate)s?\b)",
                                re.I)
_THRESHOLD = r"(?:each|every|any)\s+(?:extra\s+|additional\s+)?{unit}s?\s+(?:over|above|beyond|after|more than)\s+(?:the first\s+)?" + NUM
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


@functools.lru_cache(maxsize=512)
def parse_fee_rule(text: str, *, source: str = "", episode_id: int = 0) -> FeeRule | None:
    """The fee schedule that ``text`` writes out, or None when it has no fixed fee and rate to read.

    Memoised (the rule is immutable): the memory's recall and the RulesAgent read the same notice
    for one question, and every fee question of a level reads the same notices."""
    rules, examples = split_sentences(text)
    title = heading(text)
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
            free_every, free_unit = ordinal(free.group(1)), singular(free.group(2))
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
            if numbered := re.search(rf"\b{NUM}", said):
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


_EACH = re.compile(r"\b(" + "|".join(list(WORD_NUMBERS)[2:]) + r"|\d+)\s+(?:[\w'’-]+\s+){1,5}?each\b", re.I)


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
        stated += [number(m.group(1)) for m in re.finditer(rf"{NUM}\s+{re.escape(rule.currency)}\b", sentence, re.I)]
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
