"""The RulesAgent: a fee or a code that a documented rule gives, worked out in Python.

"How much does a 12-metre boat pay for one festival night?" is answered by no sentence of the
sources; the harbour office's notice gives the *rule*. :mod:`moot.memory.rules` reads that rule
as data (charges, adjustments under conditions, a free night, a cap; or a code's parts in order)
and checks it against the notice's own worked example. This agent then applies it to the
question's case:

- the case's quantities (the boat's length, the number of nights) are read from the question, in
  the units the rule charges for;
- whether each condition holds ("festival night", "Hessel Boat Club") is read from the question
  where it names the condition or plainly does not (a negation before it: "not in the Hessel
  Boat Club"); where it names only part of it, the model chooses yes or no under a schema;
- a code's letter for a named thing ("the north pier") is the option whose own words the
  question names; when none or several do, the model chooses among the options (an enum);
- Python computes the fee (or writes the code) and the draft shows the expression.

A rule that its own example contradicts, or a case that lacks a quantity the rule needs, gives
no draft, and the other drafts stand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moot.memory.rules import (CodeRule, FeeRule, FoundRule, parenthesised, case_count, find_rules, fmt, quantities_in, rule_asked,
                               unwrapped)
from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.teams.learning.choosing import choose_one

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase


@dataclass
class RulesAgent(SubAgent):
    """Applies a documented fee schedule or code format to the question's case (module docstring).

    Output: ``{"draft", "computed", "grounds": [the rule's sentences], "resolution": {"kind",
    "value", "verified", "rule", "steps"}, "computation": {"expression", "value"}}``, or an empty
    draft with the reason in ``detail``."""

    kb: KnowledgeBase | None = field(default=None, repr=False)

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        assert self.kb is not None, "RulesAgent needs a knowledge base"
        usage, turns = Usage(), 0
        # A rule its own example contradicts was misread: it is never applied. One with no example
        # to check drafts, but does not lead (the selector's rule needs a verified one).
        found = [f for f in find_rules(self.kb, task) if not f.rule.contradicted]

        def finish(draft: str, detail: str | None, used: FoundRule | None = None,
                   resolution: dict[str, Any] | None = None, expression: str = "", value: str = "") -> AgentResult:
            computed = [f"{expression} = {value}"] if expression else []
            output = {"draft": draft, "computed": computed, "grounds": list(used.texts) if used else [],
                      "resolution": resolution,
                      "computation": {"expression": expression, "value": value, "operation": "rule"} if expression else None}
            return AgentResult(agent=self.name, output=output, text=draft, usage=usage, transcript=(),
                               stop_reason="completed", turns=turns, detail=detail)

        if rule_asked(task) is None or not found:
            return finish("", "no fee or code asked, or no documented rule for it that its own example does not contradict")
        used = found[0]
        rule = used.rule
        base = {"kind": "fee" if isinstance(rule, FeeRule) else "code", "rule": rule.title or rule.source,
                "verified": rule.verified}
        if isinstance(rule, FeeRule):
            inputs = quantities_in(task, sorted(rule.units | ({rule.period} if rule.period else set())))
            periods = int(inputs.pop(rule.period, 1)) if rule.period else 1
            missing = sorted(rule.units - set(inputs))
            if missing:
                return finish("", f"the question gives no {', '.join(missing)} for the rule “{rule.title}”", used)
            conditions: dict[str, bool] = {}
            for adjustment in rule.adjustments:
                phrase = adjustment.condition.phrase
                if phrase in conditions:
                    continue
                holds = adjustment.condition.holds(task)
                if holds is None:
                    picked, used_now, n = await choose_one(
                        self, f"Question: {task}\n\nDoes this apply to the case in the question: {phrase}?",
                        ["yes", "no"], budget=budget, bus=bus, run_id=run_id, task_id=task_id)
                    usage, turns = usage + used_now, turns + n
                    holds = picked == "yes"
                conditions[phrase] = holds
            result = rule.evaluate(inputs, conditions, periods=periods)
            if result is None:
                return finish("", "the rule could not be applied to the question's case", used)
            value, expression = result
            times = case_count(task, sorted(rule.units | ({rule.period} if rule.period else set())))
            if times > 1:
                value, expression = value * times, f"{parenthesised(expression)} × {times}"
            applied = [a.text for a in rule.adjustments if conditions.get(a.condition.phrase)]
            per = f" a {rule.period}" if rule.period and periods == 1 else (f" for {periods} {rule.period}s" if rule.period else "")
            shown = unwrapped(expression)
            draft = f"{fmt(value)} {rule.currency}{per}" + (f": {shown} = {fmt(value)}." if shown != fmt(value) else ".")
            if applied:
                draft += " Applied: " + " ".join(applied)
            resolution = base | {"value": fmt(value), "inputs": {k: fmt(v) for k, v in inputs.items()},
                                 "periods": periods, "conditions": conditions}
            return finish(draft, None, used, resolution, expression, fmt(value))
        assert isinstance(rule, CodeRule)
        picks: dict[int, str] = {}
        for index, part in rule.undecided(task):
            labels = [f"{o.letter}: {o.phrase}"[:120] for o in part.options]
            picked, used_now, n = await choose_one(
                self, f"Question: {task}\n\nWhich of these fits the case in the question?\n" + "\n".join(labels),
                labels, budget=budget, bus=bus, run_id=run_id, task_id=task_id)
            usage, turns = usage + used_now, turns + n
            if picked:
                picks[index] = picked.split(":", 1)[0]
        result = rule.evaluate(task, picks)
        if result is None:
            return finish("", f"the question does not give every part of the {rule.name}", used)
        code, steps = result
        draft = f"{code} ({'; '.join(steps)})."
        return finish(draft, None, used, base | {"value": code, "steps": steps}, " + ".join(steps), code)


def rules_for(kb: KnowledgeBase, question: str) -> list[dict[str, Any]]:
    """The rules a question could be answered by, as the memory's recall lists them (for the
    precondition): title, kind, and whether the notice's example checks out."""
    return [{"title": f.rule.title, "kind": "fee" if isinstance(f.rule, FeeRule) else "code",
             "verified": f.rule.verified, "episode_id": f.rule.episode_id} for f in find_rules(kb, question)]


def build_rules(model: Any, kb: KnowledgeBase) -> RulesAgent:
    from moot.runtime import load_prompt

    return RulesAgent("rules", "applies a documented fee schedule or code format to the question's case, in Python",
                      load_prompt("rules", __package__), (), model, max_turns=2, settings=ModelSettings(max_tokens=30),
                      kb=kb)


__all__ = ["RulesAgent", "build_rules", "rules_for"]
