"""Code rules: a code format a notice writes out as parts in order, checked against its example code."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from moot.memory.facts import match_terms
from moot.memory.rules.common import (NUM, ORDINAL_NUMBERS, WORD_NUMBERS, fmt, heading, number, quantities_in, singular,
                                      split_sentences)

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


_PART_OPENING = re.compile(r"^\s*(?:[-*]\s*|\d+[.)]\s*)?(" + "|".join(list(ORDINAL_NUMBERS)[:6]) + r"|then|finally|last(?:ly)?)\b"
                           r"\s*,?\s*(.+)$", re.I)
_OPTION = re.compile(r"\b([A-Z]{1,3})\s+(?:for|means|stands for|=)\s+(.+?)(?=,?\s+(?:and\s+)?[A-Z]{1,3}\s+(?:for|means|stands for|=)\s|"
                     r"[.;]\s*$|$)")
_DIGITS = re.compile(r"\b(?:with|as|in|using)\s+(\w+)\s+digits\b|\b(\w+)-digit\b", re.I)
_BOUND = re.compile(rf"\b(up to and including|up to|no more than|not more than|at most|over|more than|longer than|heavier than|"
                    rf"above|under|less than|shorter than|lighter than|below|at least|from)\s+{NUM}\s*([a-z]+)?", re.I)
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
    for match in re.finditer(rf"{NUM}\s*([a-z]+)?\s+or\s+(more|less|over|under|fewer)\b", phrase, re.I):
        value = number(match.group(1))
        unit = unit or singular(match.group(2) or "")
        if match.group(3).lower() in ("more", "over"):
            low, low_inc = value, True
        else:
            high, high_inc = value, True
    if low is None and high is None:
        return None
    return Range(low, low_inc, high, high_inc, unit)


@functools.lru_cache(maxsize=512)
def parse_code_rule(text: str, *, source: str = "", episode_id: int = 0) -> CodeRule | None:
    """The code format that ``text`` writes out as parts in order, or None (memoised, as fee rules are)."""
    named = _CODE_NAME.search(text)
    if named is None:
        return None
    rules, examples = split_sentences(text)
    title = heading(text)
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
            count = WORD_NUMBERS.get(said) or (int(said) if said.isdigit() else 0)
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
