"""The CauseAgent: a question about a cause is answered with the sentence of the source that states it.

"What was the immediate cause of the blackout?" and "Why did it last six hours?" are answered in
the articles by one sentence each ("The immediate cause was that transformer T2 overheated …",
"… lasted six hours because the replacement parts had to be brought from …"), and a small model
writing its own account picks the wrong one (the cold night, a guess in Fahrenheit). Here Python
lists the sentences that best match the question, causal wording first, the model chooses one
under a schema (an enum of sentence labels) — unless exactly one states the asked kind of cause
or gives the reason in so many words, which needs no choice — and the draft quotes it.

"Was the cold weather the root cause?" is a check, not a choice: the model still chooses the
sentence that states the cause, and Python answers yes when the asked cause's own words are in
it, no (quoting the stated cause) when they are not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from moot.memory import KnowledgeBase
from moot.memory.facts import match_terms
from moot.memory.passages import score_sentences
from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.teams.learning.choosing import choose_one

_WHY = re.compile(r"^\W*why\b|\bwhat (?:was|is|were|are) the (?:\w+ )?(?:cause|causes|reason|reasons)\b|"
                  r"\bhow did (.+?) lead to\b|\bwhat (?:caused|led to)\b", re.I)
_CHECK = re.compile(r"^\W*(?:was|were|is|did) (.+?) (?:the|a) ((?:\w+ )?cause|reason)\b", re.I)
CAUSAL = re.compile(r"\b(?:because|cause[ds]?|due to|led to|leads? to|as a result|so that|so\b|reason|"
                    r"since|after|which meant|therefore|could not)\b", re.I)
MAX_SENTENCES = 4


@dataclass(frozen=True)
class CauseQuestion:
    """What the question asks about a cause."""

    phrase: str
    """The kind of cause named ("root cause", "immediate cause", "cause", "reason"), if any."""
    claimed: str = ""
    """For a check ("Was the cold weather the root cause?"): the cause the question puts forward."""


def read_cause(question: str) -> CauseQuestion | None:
    """The question's cause, or None when it asks for none."""
    text = " ".join(question.split())
    if check := _CHECK.search(text):
        return CauseQuestion(check.group(2).lower(), claimed=check.group(1).strip())
    if _WHY.search(text):
        named = re.search(r"\b((?:root|immediate|main|underlying|direct) cause)\b", text, re.I)
        return CauseQuestion(named.group(1).lower() if named else "")
    return None


def candidate_sentences(kb: KnowledgeBase, question: str, asked: CauseQuestion) -> list[str]:
    """The sentences that best match the question, those in causal wording (or naming the asked
    kind of cause) first, at most :data:`MAX_SENTENCES`."""
    scored = score_sentences(kb, question, min_shared=2)[: MAX_SENTENCES * 3]

    def rank(item: Any) -> tuple[int, int, float]:
        return (0 if states_kind(item.text, asked.phrase) else 1, 0 if CAUSAL.search(item.text) else 1, -item.score)

    return list(dict.fromkeys(s.text for s in sorted(scored, key=rank)))[:MAX_SENTENCES]


def states_kind(sentence: str, phrase: str) -> bool:
    """True when the sentence *states* the asked kind of cause ("The immediate cause was that …"),
    not only names it ("… separates the immediate cause from the root cause")."""
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}\s+(?:was|is|were|are)\b", sentence, re.I) is not None


def explains(sentence: str, question: str) -> bool:
    """True when the sentence gives a reason in so many words ("because", "due to") for what the
    question asks about (two or more of its words)."""
    return _CONNECTIVE.search(sentence) is not None and len(match_terms(sentence) & match_terms(question)) >= 2


_CONNECTIVE = re.compile(r"\b(?:because|due to|as a result of|caused by|owing to)\b", re.I)


@dataclass
class CauseAgent(SubAgent):
    """Chooses the source sentence that states the cause (see the module docstring). Output: a draft
    with ``grounds`` and ``resolution`` ``{"sentence", "phrase", "check"}``."""

    kb: KnowledgeBase | None = field(default=None, repr=False)

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        assert self.kb is not None, "CauseAgent needs a knowledge base"
        asked = read_cause(task)
        sentences = candidate_sentences(self.kb, task, asked) if asked else []
        usage, turns = Usage(), 0

        def finish(draft: str, detail: str | None, resolution: dict[str, Any] | None = None) -> AgentResult:
            output = {"draft": draft, "computed": [], "grounds": list(sentences), "resolution": resolution}
            return AgentResult(agent=self.name, output=output, text=draft, usage=usage, transcript=(),
                               stop_reason="completed", turns=turns, detail=detail)

        if asked is None or not sentences:
            return finish("", "no cause asked, or no sentence of the sources matches the question")
        # One sentence that states the asked kind of cause ("The root cause was …"), or the only one
        # that gives a reason for what is asked ("… lasted six hours because …"), needs no choice:
        # on L9 the model picked "… separates the immediate cause from the root cause" for both.
        plain = [s for s in sentences if states_kind(s, asked.phrase)] or [s for s in sentences if explains(s, task)]
        if len(plain) == 1:
            chosen: str | None = plain[0]
        else:
            chosen, usage, turns = await self._choose(task, sentences, budget, bus, run_id, task_id)
        if chosen is None:
            return finish("", "the model chose no sentence")
        resolution = {"sentence": chosen, "phrase": asked.phrase, "check": bool(asked.claimed),
                      "names_kind": states_kind(chosen, asked.phrase), "explains": explains(chosen, task)}
        if asked.claimed:
            claimed = match_terms(asked.claimed) - match_terms(asked.phrase)
            holds = bool(claimed) and claimed <= match_terms(chosen)
            return finish(f"{'Yes' if holds else 'No'}. {chosen}", None, resolution | {"holds": holds})
        return finish(chosen, None, resolution)

    async def _choose(self, question: str, sentences: Sequence[str], budget: Any, bus: EventBus | None,
                      run_id: str | None, task_id: str | None) -> tuple[str | None, Usage, int]:
        labels = [f"s{i}" for i in range(1, len(sentences) + 1)]
        listing = "\n".join(f"{label}: {text}" for label, text in zip(labels, sentences))
        picked, usage, turns = await choose_one(self, f"Sentences:\n{listing}\n\nQuestion: {question}", labels,
                                                budget=budget, bus=bus, run_id=run_id, task_id=task_id)
        return (sentences[labels.index(picked)] if picked else None), usage, turns


def build_cause(model: Any, kb: KnowledgeBase) -> CauseAgent:
    from moot.runtime import load_prompt

    return CauseAgent("cause", "chooses the source sentence that states the cause; Python quotes or checks it",
                      load_prompt("cause", __package__), (), model, max_turns=2, settings=ModelSettings(max_tokens=30),
                      kb=kb)


__all__ = ["CauseAgent", "CauseQuestion", "build_cause", "candidate_sentences", "explains", "read_cause", "states_kind"]
