"""The BridgeAgent: a question about "the X that …" is answered in two hops.

"Who owns the farm that supplies the Millgate bakery with flour?" names its subject only by a
clause: no source says who owns "the farm that supplies Millgate"; one says Millgate's flour
comes from Hallow Farm, another that Hallow Farm is owned by Piet Gorran. One retrieval for the
whole question finds the first and misses the second, and a small model then answers with the
bakery's manager. So:

1. Python splits the question into its *clause* ("supplies the Millgate bakery with flour") and
   the rest, and finds the sentences that best match the clause;
2. the names in them that are of the clause's kind ("… Farm", "the Ridgeway bakery") are the
   candidate *bridge*; the model chooses one under a schema when there are several;
3. the question is asked again with the bridge in place of the clause ("Who owns Hallow Farm?"):
   Python finds the sentences that name the bridge and match the rest, takes the values of the
   kind asked from them, and the model chooses one when there are several.

The draft quotes both sentences, so every name in it is the source's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from moot.memory import KnowledgeBase
from moot.memory.passages import score_sentences
from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.teams.learning.choosing import choose_one
from moot.teams.learning.sources import candidates, name_runs, value_kind

_CLAUSE = re.compile(r"\b(?:the|a) ((?:[A-Z][\w'’-]* )?[a-z][a-z-]*) (?:that|which|who) (?!is\b|are\b|was\b|were\b)(.+?)"
                     r"(?=,| and (?:who|what|which|when|how)\b|\?|$)")
MAX_OPTIONS = 5


@dataclass(frozen=True)
class Hop:
    """The question split at its clause."""

    kind: str
    """What the clause describes ("farm", "bakery"): the bridge must be one."""
    qualifier: str
    """A name the question puts before it ("Ovenfield" in "the Ovenfield bakery that …")."""
    clause: str
    rest: str
    """The question with ``{bridge}`` where the clause's noun phrase stood."""


def read_hop(question: str) -> Hop | None:
    """The question's relative clause, or None when it has none (or asks no value)."""
    match = _CLAUSE.search(question)
    if match is None:
        return None
    words = match.group(1).split()
    kind, qualifier = words[-1].lower(), " ".join(words[:-1])
    rest = question[: match.start()] + "{bridge}" + question[match.end():]
    if value_kind(rest.replace("{bridge}", "X")) is None:
        return None
    return Hop(kind, qualifier, match.group(2).strip(), rest)


def bridge_candidates(hop: Hop, sentences: Sequence[str], question: str) -> list[str]:
    """Names in ``sentences`` of the clause's kind: "Hallow Farm" for a farm, "Ridgeway bakery"
    when the sentence says "the Ridgeway bakery"; not the names the clause itself gives."""
    found: list[str] = []
    clause_words = {w.lower() for w in re.findall(r"[A-Za-z]+", hop.clause)}
    for sentence in sentences:
        for run in name_runs(sentence):
            words = run.split()
            if all(w.lower() in clause_words or w.lower() in hop.qualifier.lower().split() for w in words):
                continue
            if words[-1].lower().rstrip("s") == hop.kind.rstrip("s"):
                found.append(run)
                continue
            follows = re.search(re.escape(run) + r"\s+" + re.escape(hop.kind) + r"\b", sentence, re.I)
            if follows:
                found.append(f"{run} {hop.kind}")
    return list(dict.fromkeys(found))[:MAX_OPTIONS]


@dataclass
class BridgeAgent(SubAgent):
    """Two hops through a named bridge (see the module docstring). Output: a draft with
    ``grounds`` (the two sentences) and ``resolution`` ``{"bridge", "answer"}``."""

    kb: KnowledgeBase | None = field(default=None, repr=False)

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        assert self.kb is not None, "BridgeAgent needs a knowledge base"
        usage, turns = Usage(), 0
        grounds: list[str] = []

        def finish(draft: str, detail: str | None, resolution: dict[str, Any] | None = None) -> AgentResult:
            output = {"draft": draft, "computed": [], "grounds": grounds, "resolution": resolution}
            return AgentResult(agent=self.name, output=output, text=draft, usage=usage, transcript=(),
                               stop_reason="completed", turns=turns, detail=detail)

        hop = read_hop(task)
        if hop is None:
            return finish("", "no clause to bridge")
        first = [s for s in score_sentences(self.kb, f"{hop.qualifier} {hop.kind} {hop.clause}", min_shared=1)][:4]
        options = bridge_candidates(hop, [s.text for s in first], task)
        if not options:
            return finish("", f"no {hop.kind} named where the sources say what {hop.clause!r} says")
        bridge = options[0]
        if len(options) > 1:
            picked, used, n = await self._choose(f"Which {hop.kind} {hop.clause}?", [s.text for s in first], options,
                                                 budget, bus, run_id, task_id)
            usage, turns = usage + used, turns + n
            bridge = picked or bridge
        bridge_sentence = next(s.text for s in first if bridge.split()[0] in s.text)
        asked = hop.rest.replace("{bridge}", bridge)
        kind = value_kind(asked)
        key = bridge.split()[0]
        second = [s for s in score_sentences(self.kb, asked, min_shared=1) if key in s.text][:3]
        values: list[str] = []
        for sentence in second:
            year = int(sentence.published[:4]) if sentence.published else None
            for candidate in candidates(kind, asked, sentence.text, year=year, exclude=[bridge, sentence.source]) if kind else []:
                words = {w.lower() for w in candidate.text.split()}
                if candidate.text not in values and not words & {w.lower() for w in bridge.split()}:
                    values.append(candidate.text)  # not the bridge again ("Inside the Ridgeway" for the Ridgeway bakery)
        values = values[:MAX_OPTIONS]
        if not values:
            return finish("", f"the sources name {bridge} but say nothing of it that answers {asked!r}")
        answer = values[0]
        if len(values) > 1:
            picked, used, n = await self._choose(asked, [s.text for s in second], values, budget, bus, run_id, task_id)
            usage, turns = usage + used, turns + n
            answer = picked or answer
        answer_sentence = next((s.text for s in second if answer in s.text), second[0].text)
        grounds += [bridge_sentence, answer_sentence]
        quoted = " ".join(dict.fromkeys([bridge_sentence, answer_sentence]))
        return finish(f"{answer} ({bridge}: {quoted})", None, {"bridge": bridge, "answer": answer, "asked": asked})

    async def _choose(self, question: str, sentences: Sequence[str], options: Sequence[str], budget: Any,
                      bus: EventBus | None, run_id: str | None, task_id: str | None) -> tuple[str | None, Usage, int]:
        text = "\n".join(f"- {s}" for s in sentences)
        return await choose_one(self, f"Sources:\n{text}\n\nQuestion: {question}\nChoose from: {' | '.join(options)}",
                                options, budget=budget, bus=bus, run_id=run_id, task_id=task_id)


def build_bridge(model: Any, kb: KnowledgeBase) -> BridgeAgent:
    from moot.runtime import load_prompt

    return BridgeAgent("bridge", "answers 'the X that …' questions in two hops through the X the sources name",
                       load_prompt("bridge", __package__), (), model, max_turns=2,
                       settings=ModelSettings(max_tokens=60), kb=kb)


__all__ = ["BridgeAgent", "Hop", "bridge_candidates", "build_bridge", "read_hop"]
