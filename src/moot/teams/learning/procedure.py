"""The ProcedureAgent: a question about a procedure's steps is answered by position.

"What is done immediately after the rotor brake is released?" needs the order of the steps, which
the facts a small model extracted have lost and the source text states plainly. So Python reads
the procedures out of the episodes (:mod:`moot.memory.procedures`) and reads the question's
*relation* — the first step, the last, the one after or before a named step, which of two steps
comes first, how many steps, all of them — and then:

- the procedure is the one whose title and steps share the most words with the question; when
  two are about as close, the model chooses between their titles under a schema (an enum);
- a named step (the anchor of "after …", "before …") is the step that shares the most words
  with the anchor; a tie goes to the model, again as an enum of the tied steps;
- the answer quotes the step as the source writes it, with its number: nothing is paraphrased,
  so the checker finds every word of it in the source.

Without a relation it can read, or a step the anchor matches, it writes no draft and the other
drafts stand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from moot.memory.facts import match_terms
from moot.memory.procedures import Procedure, Step
from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.teams.learning.choosing import choose_one

RelationKind = Literal["count", "first", "last", "after", "before", "order", "all"]

_ORDER = (
    re.compile(r"\bwhich (?:comes|is done|happens|goes|should be done|must be done) (?:first|earlier)\b\W*(.+?)\s+or\s+(.+?)\W*$", re.I),
    re.compile(r"\b(?:does|do|is|should|must) (.+?) (?:come|happen|go|be done) before (.+?)\W*$", re.I),
)
_COUNT = re.compile(r"\bhow many (?:steps|stages)\b", re.I)
_FIRST = re.compile(r"\bfirst (?:thing|step|action|task)\b|\bwhat (?:is done|happens|comes) first\b|\b(?:begins?|starts?) with\b", re.I)
_LAST = re.compile(r"\b(?:last|final) (?:thing|step|action|task)\b|\bhow does .+ (?:end|finish)\b|\b(?:ends?|finish(?:es)?) with\b",
                   re.I)
_AFTER = re.compile(r"\b((?:immediately|right|just|directly) )?after ((?:(?!\bafter\b).)+?)\W*$", re.I)
_BEFORE = re.compile(r"\b((?:immediately|right|just|directly) )?before ((?:(?!\bbefore\b).)+?)\W*$", re.I)
_ALL = re.compile(r"\b(?:what are the steps|which steps|list the steps|how do (?:i|you|we|they)|how to|what is the "
                  r"procedure|in what order)\b", re.I)
FILLER = frozenset(match_terms("what is done does do must should be thing step steps action task happen come comes "
                              "immediately right just directly after before first last final next volunteer someone "
                              "one you they when during"))
"""Words of a question that say where a step is, not which step it is."""
MIN_SHARED = 2
"""Content words a question must share with a procedure before its steps answer it: "the first
thing after the flood" must not be answered from a turbine's restart procedure."""


@dataclass(frozen=True)
class Relation:
    """Where in a procedure the answer lies, read from the question in Python."""

    kind: RelationKind
    anchors: tuple[str, ...] = ()
    """The named steps ("the rotor brake is released"), in the question's order."""
    adjacent: bool = False
    """"immediately/right after": the very next (or previous) step, whatever else the question says."""


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last clause the pattern finds: "after a flood stop, what is done after X?" names X."""
    found = None
    for match in pattern.finditer(text):
        found = match
    return found


def read_relation(question: str) -> Relation | None:
    """The question's relation to a procedure, or None when it asks about no position."""
    text = " ".join(question.split())
    for pattern in _ORDER:
        if match := pattern.search(text):
            return Relation("order", (match[1].strip(), match[2].strip()))
    if _COUNT.search(text):
        return Relation("count")
    if _FIRST.search(text):
        return Relation("first")
    if _LAST.search(text):
        return Relation("last")
    # "before" only when no "after" clause comes first: "… after a storm stop, what is done before X?"
    after, before = _last(_AFTER, text), _last(_BEFORE, text)
    if after and (before is None or after.start() > before.start()):
        return Relation("after", (after[2].strip(),), adjacent=bool(after[1]))
    if before:
        return Relation("before", (before[2].strip(),), adjacent=bool(before[1]))
    if _ALL.search(text):
        return Relation("all")
    return None


def _score(question_terms: frozenset[str], procedure: Procedure) -> int:
    head = match_terms(f"{procedure.title} {procedure.intro}")
    body = match_terms(" ".join(s.text for s in procedure.steps))
    return 2 * len(question_terms & head) + len(question_terms & body)


def _terms(procedure: Procedure) -> frozenset[str]:
    return match_terms(" ".join((procedure.title, procedure.intro, *(s.text for s in procedure.steps))))


def _label(step: Step) -> str:
    return f"step {step.number}"


@dataclass
class ProcedureAgent(SubAgent):
    """Answers where-in-the-procedure questions from the parsed steps (see the module docstring).

    Its output is a draft: ``{"draft", "computed": [], "grounds": [the procedure's text],
    "resolution": {...}}``, or an empty draft with the reason in ``detail``."""

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        from moot.teams.learning.specialists import evidence

        merged = dict(context) if context and "facts" in context else evidence(context or {})
        procedures = [Procedure.from_dict(p) for p in merged.get("procedures") or []]
        relation = read_relation(task)
        usage, turns = Usage(), 0

        def finish(draft: str, detail: str | None, resolution: dict[str, Any] | None = None,
                   procedure: Procedure | None = None) -> AgentResult:
            grounds = [procedure.title, procedure.intro, f"{len(procedure.steps)} steps",
                       *(s.text for s in procedure.steps)] if procedure else []
            output = {"draft": draft, "computed": [], "grounds": grounds, "resolution": resolution}
            return AgentResult(agent=self.name, output=output, text=draft, usage=usage, transcript=(),
                               stop_reason="completed", turns=turns, detail=detail)

        if relation is None or not procedures:
            return finish("", "no procedure or no question about its steps")
        anchor_terms = match_terms(" ".join(relation.anchors))
        asked = match_terms(task) - FILLER
        scored = sorted(((_score(asked, p), i) for i, p in enumerate(procedures)), reverse=True)
        choice = [procedures[i] for s, i in scored if s >= max(1, scored[0][0] - 1)]
        procedure = choice[0]
        if len(asked & _terms(procedure)) < MIN_SHARED:
            return finish("", f"the question shares fewer than {MIN_SHARED} words with any procedure")
        if len(choice) > 1:
            picked, used, n = await self._choose(task, "procedure", [p.title for p in choice], budget, bus, run_id, task_id)
            usage, turns = usage + used, turns + n
            procedure = next((p for p in choice if p.title == picked), procedure)
        steps = list(procedure.steps)
        where = f"“{procedure.title}”"
        resolution: dict[str, Any] = {"relation": relation.kind, "procedure": procedure.title}
        if relation.kind == "count":
            return finish(f"{len(steps)} steps ({where}).", None, resolution | {"steps": len(steps)}, procedure)
        if relation.kind == "all":
            listed = "\n".join(f"{s.number}. {s.text}" for s in steps)
            return finish(f"The {len(steps)} steps of {where}, in order:\n{listed}", None, resolution, procedure)
        if relation.kind == "first":
            return finish(f"Step 1 of {len(steps)} ({where}): {steps[0].text}", None, resolution | {"step": 1}, procedure)
        if relation.kind == "last":
            return finish(f"Step {len(steps)} of {len(steps)}, the last ({where}): {steps[-1].text}", None,
                          resolution | {"step": len(steps)}, procedure)
        found: list[Step] = []
        for anchor in relation.anchors:
            step, used, n = await self._anchor(task, anchor, steps, budget, bus, run_id, task_id)
            usage, turns = usage + used, turns + n
            if step is None:
                return finish("", f"no step of {where} matches {anchor!r}", resolution, procedure)
            found.append(step)
        if relation.kind == "order":
            (a, first_anchor), (b, second_anchor) = zip(found, relation.anchors)
            if a.number == b.number:
                return finish("", f"both {relation.anchors} match step {a.number}", resolution, procedure)
            (early, early_words), (late, late_words) = sorted(((a, first_anchor), (b, second_anchor)),
                                                              key=lambda item: item[0].number)
            text = (f"{early_words[:1].upper()}{early_words[1:]} comes first: step {early.number} ({early.text.rstrip('.')}), "
                    f"then step {late.number} ({late.text.rstrip('.')}) ({where}).")
            return finish(text, None, resolution | {"steps": [a.number, b.number]}, procedure)
        anchor = found[0]
        side = steps[anchor.number:] if relation.kind == "after" else list(reversed(steps[: anchor.number - 1]))
        if not side:
            edge = "last" if relation.kind == "after" else "first"
            return finish(f"Nothing: step {anchor.number} ({anchor.text.rstrip('.')}) is the {edge} step ({where}).",
                          None, resolution | {"step": anchor.number}, procedure)
        target = side[0]
        rest = asked - anchor_terms
        if not relation.adjacent and rest:
            # "what must be switched to 'manual' before the brake is released": the step on that side
            # that names what the question asks about, else the neighbour.
            best = max(side, key=lambda s: (len(rest & match_terms(s.text)), -abs(s.number - anchor.number)))
            if rest & match_terms(best.text):
                target = best
        text = (f"Step {target.number} of {len(steps)} ({where}): {target.text} "
                f"— {'after' if relation.kind == 'after' else 'before'} step {anchor.number} ({anchor.text.rstrip('.')}).")
        return finish(text, None, resolution | {"anchor": anchor.number, "step": target.number}, procedure)

    async def _anchor(self, question: str, anchor: str, steps: Sequence[Step], budget: Any, bus: EventBus | None,
                      run_id: str | None, task_id: str | None) -> tuple[Step | None, Usage, int]:
        wanted = match_terms(anchor) - FILLER
        scores = [(len(wanted & match_terms(s.text)), s) for s in steps]
        top = max((s for s, _ in scores), default=0)
        if top == 0:
            return None, Usage(), 0
        if top * 2 < len(wanted):
            return None, Usage(), 0  # fewer than half the anchor's words: not a step of this procedure
        tied = [s for score, s in scores if score == top]
        if len(tied) == 1:
            return tied[0], Usage(), 0
        labels = [f"{_label(s)}: {s.text}"[:150] for s in tied]
        picked, usage, turns = await self._choose(f"{question}\nWhich step is “{anchor}”?", "step", labels, budget, bus,
                                                  run_id, task_id)
        return next((s for s, label in zip(tied, labels) if label == picked), tied[0]), usage, turns

    async def _choose(self, question: str, what: str, options: Sequence[str], budget: Any, bus: EventBus | None,
                      run_id: str | None, task_id: str | None) -> tuple[str | None, Usage, int]:
        listing = "\n".join(f"- {o}" for o in options)
        return await choose_one(self, f"Question: {question}\n\nChoose the {what} the question is about:\n{listing}",
                                options, budget=budget, bus=bus, run_id=run_id, task_id=task_id)


def build_procedure(model: Any) -> ProcedureAgent:
    from moot.runtime import load_prompt

    return ProcedureAgent("procedure", "answers where a step lies in a procedure, from the source's own steps",
                          load_prompt("procedure", __package__), (), model, max_turns=2,
                          settings=ModelSettings(max_tokens=80))


__all__ = ["ProcedureAgent", "Relation", "build_procedure", "read_relation"]
