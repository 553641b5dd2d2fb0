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

The package: :mod:`.fees` reads fee schedules, :mod:`.codes` code formats, :mod:`.common` holds
what both read (numbers in words, rule and example sentences, a case's quantities, conditions);
this module finds the rules of the kind a question asks for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from moot.memory.facts import match_terms
from moot.memory.rules.codes import CodePart, CodeRule, Option, Range, choose_named, parse_code_rule
from moot.memory.rules.common import Condition, condition_from, fmt, quantities_in, singular, split_sentences
from moot.memory.rules.fees import Adjustment, Charge, FeeRule, case_count, parenthesised, parse_fee_rule, unwrapped

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase


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
            found.append(FoundRule(parsed, score, published, tuple(split_sentences(episode.text)[0])))
    found.sort(key=lambda f: (-f.rule.verified, f.rule.contradicted, -f.score, -f.rule.episode_id))
    return found


__all__ = ["CODE_ASKED", "FEE_ASKED", "Adjustment", "Charge", "CodePart", "CodeRule", "Condition", "FeeRule",
           "FoundRule", "Option", "Range", "choose_named", "condition_from", "find_rules", "fmt", "parse_code_rule",
           "parse_fee_rule", "quantities_in", "rule_asked", "singular", "unwrapped", "case_count", "parenthesised"]
