"""Multi mode's drafts and the selector that chooses among them: the checker first, the model second.

In multi mode the specialists whose preconditions hold run in parallel beside the single
agent, each writing a *draft* (:class:`DraftAgent` wraps any answering agent so that its draft
carries the values its calculator computed). The :class:`SelectorAgent` then decides in
Python, in this order:

1. Every draft goes through the checker (:mod:`moot.teams.learning.checker`); a draft that
   states a number, date or name that no retrieved fact, passage, quoted sentence or computed
   value holds — or a number that answers another question — is out.
2. Drafts that Python resolved from the sources lead, each on its own kind of question: a step's
   position that the ProcedureAgent read from the procedure's own steps; a fee or a code that the
   RulesAgent worked out from a documented rule its notice's own example confirms; a "the X that …"
   answer the BridgeAgent found in two hops (unless the single draft names the same answer);
   a disagreement between publishers that the SourcesAgent found (every value with its source);
   the CauseAgent's sentence when it states the very kind of cause asked ("the root cause was
   …"), gives the reason in so many words ("… lasted six hours because …"), or answers a cause
   the question puts forward to check ("Was the cold the root cause?").
3. Computed values lead where the question calls for one: when its wording says the answer is
   worked out (``how many more``, ``in total``, ``how many days`` …; not a plain "how much does
   it cost") and the ComputeAgent computed one from two or more quantities; when a what-if is
   decided by capacity against demand; when the question brings its own numbers and compute
   chose among them alone (the minimum, maximum or order: the bottleneck of three stations, the
   shortest job) — in the first and last case unless a
   passing single draft already states that very value (its wording is kept).
4. When facts of one attribute disagree between sources, the passing draft that names the most
   of their values leads; when one publisher's later report changed the value and the single
   draft does not state the latest, the SourcesAgent's update leads; when the single draft states
   no value of the kind asked at all (no time for "what time"), the value the sources give leads.
5. Otherwise the single agent's draft, if it passes: multi never loses an answer the single
   agent's draft had, because of routing.
6. If the single draft fails and several others pass, the model picks one under a schema (an
   enum of the passing drafts); if none passes, the single agent's draft goes back once with
   the offending spans named; if it still fails, the answer is a plain statement of what the
   sources do and do not say.

Every step is in the answer's trace (``selection`` in the task output).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import create_model

from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.teams.learning.checker import Evidence, Verdict, check_draft, numbers_in, plain_statement
from moot.teams.learning.compute import derivation_required


def _tool_results(transcript: Any) -> list[str]:
    return [str(getattr(m, "content", "")) for m in (transcript or ()) if getattr(m, "role", "") == "tool"]


_REVISION_ECHO = re.compile(r"\banswer again using only the facts\b|\bwhich no fact or passage contains\b", re.I)
"""The revision note's own words: a revised draft that repeats them has answered nothing."""


@dataclass
class DraftAgent(SubAgent):
    """Runs ``inner`` and hands on ``{"draft": text, "computed": [calculator results]}``.

    A failed draft is not a failed run: the output says why and the selector works with the
    other drafts (``detail`` keeps the reason)."""

    inner: SubAgent | None = field(default=None, repr=False)

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        assert self.inner is not None
        try:
            result = await self.inner.run(task, context, budget=budget, bus=bus, progress=progress, run_id=run_id,
                                          task_id=task_id)
        except Exception as exc:  # noqa: BLE001 - one failed draft must not sink the answer: the others stand
            return AgentResult(agent=self.name, output={"draft": "", "computed": [], "error": f"{type(exc).__name__}: {exc}"},
                               text="", usage=Usage(), transcript=(), stop_reason="completed", turns=0,
                               detail=f"the draft failed: {exc}")
        text = str(result.output).strip() if result.output is not None else ""
        output = {"draft": text, "computed": _tool_results(result.transcript),
                  "error": None if result.ok else (result.detail or result.stop_reason)}
        stop = result.stop_reason if result.stop_reason.startswith("budget") else "completed"
        return dataclasses.replace(result, agent=self.name, output=output, stop_reason=stop)


def _states(draft: str, value: str) -> bool:
    """True when ``draft`` states ``value``: its numbers, or else its words."""
    wanted = numbers_in(value)
    if wanted:
        return wanted <= numbers_in(draft)
    return bool(value) and value.lower() in draft.lower()


@dataclass
class _Drafts:
    """The checked drafts of one question, as the selector's rules read them."""

    by_task: dict[str, Candidate]
    raw: Mapping[str, Mapping[str, Any]]
    question: str

    @property
    def single(self) -> Candidate | None:
        return self.by_task.get("single")

    def passing(self, task: str) -> Candidate | None:
        found = self.by_task.get(task)
        return found if found is not None and found.verdict.ok else None

    def resolution(self, task: str) -> dict[str, Any]:
        return dict((self.raw.get(task) or {}).get("resolution") or {})

    def single_states(self, value: str) -> bool:
        single = self.passing("single")
        return single is not None and _states(single.draft, value)


def _updated(ctx: _Drafts) -> tuple[Candidate | None, str]:
    from moot.teams.learning.sources import states_kind, value_kind

    sources, compared = ctx.passing("sources"), ctx.resolution("sources")
    if sources is None:
        return None, ""
    if compared.get("kind") == "update" and not ctx.single_states(str(compared.get("latest") or "")):
        return sources, "a later report changed the value, and the single draft does not state the latest"
    kind = value_kind(ctx.question) or ""
    single = ctx.passing("single")
    if compared.get("kind") in ("only", "agree") and kind != "name" and single is not None \
            and not states_kind(single.draft, kind):
        return sources, f"the single draft states no {kind} at all; the one the sources give"
    return None, ""


def _single(ctx: _Drafts) -> tuple[Candidate | None, str]:
    single = ctx.passing("single")
    return (single, "the single draft passed the checker") if single is not None else (None, "")


def drafts(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The selector's reducer: memory's facts and passages, and each draft under its task id."""
    facts: dict[int, dict[str, Any]] = {}
    passages: list[dict[str, Any]] = []
    found: dict[str, dict[str, Any]] = {}
    for task_id, output in outputs.items():
        if isinstance(output, Mapping) and "facts" in output:
            for fact in output.get("facts") or []:
                facts.setdefault(int(fact["id"]), dict(fact))
            passages += [dict(p) for p in output.get("passages") or []]
        elif isinstance(output, Mapping) and "draft" in output:
            found[task_id] = dict(output)
        elif output is not None and str(output).strip():
            found[task_id] = {"draft": str(output).strip(), "computed": []}
    return {"facts": list(facts.values()), "passages": passages, "drafts": found}


@dataclass
class Candidate:
    task: str
    draft: str
    verdict: Verdict
    computed: list[str] = field(default_factory=list)


@dataclass
class SelectorAgent(SubAgent):
    """Chooses the answer among the drafts (see the module docstring); may revise once."""

    reviser: SubAgent | None = field(default=None, repr=False)
    """The agent a failing single draft goes back to (the single agent itself)."""
    conflicts: list[str] = field(default_factory=list)
    """The values on which sources disagree (from :func:`conflicting_values`), found in Python."""

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        ctx = dict(context or {})
        facts, passages = list(ctx.get("facts") or []), list(ctx.get("passages") or [])
        raw: dict[str, dict[str, Any]] = dict(ctx.get("drafts") or {})
        computed_values: list[str] = []
        quoted: list[str] = []
        for out in raw.values():
            computed_values += [str(c) for c in out.get("computed") or []]
            # A draft that quotes the source (a procedure's steps) brings the text it quotes: source
            # text, not a computation (a number in it is stated, not worked out).
            quoted += [str(g) for g in out.get("grounds") or []]
            computation = out.get("computation")
            if computation:
                computed_values.append(f"{computation.get('expression', '')} {computation.get('value', '')}")
        # The temporal worksheet is computed in Python too: its differences ground a draft's numbers.
        from moot.teams.learning.tools import render_worksheet, temporal_worksheet

        computed_values.append(render_worksheet(temporal_worksheet(facts)))
        evidence = Evidence.build(question=task, facts=facts, passages=[*passages, *({"text": q} for q in quoted)],
                                  computed=computed_values)
        candidates = [Candidate(tid, str(out.get("draft") or ""), check_draft(str(out.get("draft") or ""), evidence),
                                [str(c) for c in out.get("computed") or []])
                      for tid, out in raw.items()]
        steps = [f"{c.task}: {'passes' if c.verdict.ok else 'fails'} ({c.verdict.reason()})" for c in candidates]
        usage, turns, transcript = Usage(), 0, ()
        chosen, rule = self._choose(task, candidates, raw)
        if chosen is None:
            passing = [c for c in candidates if c.verdict.ok and c.task != "single"]
            if len(passing) >= 2:
                pick, picked_usage, picked_turns = await self._model_pick(task, passing, facts, budget, bus, run_id, task_id)
                usage, turns = usage + picked_usage, turns + picked_turns
                if pick is not None:
                    chosen, rule = pick, "the model chose among the drafts that passed the checker"
        if chosen is None:
            passing = [c for c in candidates if c.verdict.ok]
            if passing:
                chosen, rule = passing[0], "the only draft that passed the checker"
        text = chosen.draft if chosen is not None else ""
        if chosen is None:
            single = next((c for c in candidates if c.task == "single"), None)
            offending = single.verdict.unsupported if single is not None else []
            if single is not None and single.draft and self.reviser is not None:
                revised = await self._revise(task, single, facts, passages, budget, bus, progress, run_id, task_id)
                usage, turns = usage + revised.usage, turns + revised.turns
                draft = str(revised.output or "").strip() if revised.ok else ""
                if _REVISION_ECHO.search(draft):
                    draft = ""  # the small model wrote the checker's instruction back: no answer (L8.4, run 1)
                verdict = check_draft(draft, dataclasses.replace(
                    evidence, computed=evidence.computed + _tool_results(revised.transcript)))
                steps.append(f"revision: {'passes' if verdict.ok else 'fails'} ({verdict.reason()})")
                if verdict.ok:
                    text, rule = draft, "the single draft, revised once after the checker named " + ", ".join(offending)
                else:
                    offending = verdict.unsupported or offending
            if not text:
                text = plain_statement(task, facts, unsupported=offending)
                rule = "no draft passed the checker: a plain statement of what the sources say"
        output = {"answer": text, "chosen": chosen.task if chosen is not None else None, "rule": rule, "checks": steps}
        return AgentResult(agent=self.name, output=output, text=text, usage=usage, transcript=transcript,
                           stop_reason="completed", turns=turns)

    def _choose(self, question: str, candidates: list[Candidate],
                raw: Mapping[str, Mapping[str, Any]]) -> tuple[Candidate | None, str]:
        """The rules of the module docstring, 2 to 5, in order: the first that picks a draft wins."""
        ctx = _Drafts({c.task: c for c in candidates}, raw, question)
        for rule in (self._resolved, self._computed, self._disagreeing, _updated, _single):
            chosen, reason = rule(ctx)
            if chosen is not None:
                return chosen, reason
        return None, ""

    @staticmethod
    def _resolved(ctx: _Drafts) -> tuple[Candidate | None, str]:
        procedure = ctx.passing("procedure")
        if procedure is not None and ctx.resolution("procedure"):
            return procedure, "the question asks where a step lies: the procedure's own steps, by position"
        rules, applied = ctx.passing("rules"), ctx.resolution("rules")
        if rules is not None and applied.get("verified"):
            return rules, (f"a documented {applied.get('kind')} rule applied in Python (“{applied.get('rule')}”, checked "
                           "against the notice's own example)")
        bridge, bridged = ctx.passing("bridge"), ctx.resolution("bridge")
        if bridge is not None and bridged.get("answer"):
            if ctx.single_states(str(bridged["answer"])):
                return ctx.single, "the single draft names what the two hops found"
            return bridge, f"the question names its subject by a clause: two hops, through {bridged.get('bridge')}"
        sources = ctx.passing("sources")
        if sources is not None and ctx.resolution("sources").get("kind") == "disagree":
            return sources, "the sources disagree: every value with its source"
        cause, stated = ctx.passing("cause"), ctx.resolution("cause")
        if cause is not None and stated.get("check"):
            return cause, "the question puts a cause forward: checked against the sentence that states the cause"
        if cause is not None and stated.get("names_kind"):
            return cause, f"the sources' own sentence stating the {stated.get('phrase')}"
        if cause is not None and stated.get("explains"):
            return cause, "the sources' own sentence giving the reason ('because …')"
        return None, ""

    @staticmethod
    def _computed(ctx: _Drafts) -> tuple[Candidate | None, str]:
        compute = ctx.passing("compute")
        computation = (ctx.raw.get("compute") or {}).get("computation") or {}
        if compute is None or not computation:
            return None, ""
        value = str(computation.get("value") if computation.get("value") is not None else "")
        derived = len(set(computation.get("operands") or [])) >= 2 and \
            computation.get("operation") not in ("minimum", "maximum", "order")
        if derived and derivation_required(ctx.question):
            if ctx.single_states(value):
                return ctx.single, "the single draft states the computed value"
            return compute, "the question asks for a worked-out value: the computed one"
        if computation.get("operation") == "compare":
            return compute, "a what-if that capacity against demand decides: compared in Python"
        origins = computation.get("origins") or []
        chosen_among = computation.get("operation") in ("minimum", "maximum", "order")
        if len(origins) >= 2 and set(origins) == {"question"} and chosen_among:
            # A question that brings its own options ("slicing 90, filling 40, wrapping 70 an hour")
            # asks which of them decides; a draft restating one of its numbers is no answer. Only a
            # choice among them: on L12 the 0.5B model's ratios of them ("70 / 90 = 0.78") were noise.
            if ctx.single_states(value):
                return ctx.single, "the single draft states the value computed from the question's own numbers"
            return compute, "the question gives its own numbers: the value computed from them"
        return None, ""

    def _disagreeing(self, ctx: _Drafts) -> tuple[Candidate | None, str]:
        if not self.conflicts:
            return None, ""
        # "Italy gold medals: 5 (Day 10 report, #4) vs 7 (Rival report, #7)" → {"5", "7"}
        wanted = {part.split(": ", 1)[-1].rsplit(" (", 1)[0].strip().lower()
                  for line in self.conflicts for part in line.split(" vs ")}

        def named(c: Candidate) -> int:
            text = c.draft.lower()
            return sum(1 for v in wanted if v and re.search(r"(?<![\w.])" + re.escape(v) + r"(?![\w])", text))

        passing = [c for c in ctx.by_task.values() if c.verdict.ok and c.draft]
        if passing:
            best = max(passing, key=lambda c: (named(c), c.task == "single"))
            single = ctx.passing("single")
            if named(best) > (named(single) if single is not None else -1):
                return best, "the sources disagree: the draft that names the most of their values"
        return None, ""

    async def _model_pick(self, question: str, passing: list[Candidate], facts: list[dict[str, Any]], budget: Any,
                          bus: EventBus | None, run_id: str | None, task_id: str | None
                          ) -> tuple[Candidate | None, Usage, int]:
        labels = [f"draft {i}" for i in range(1, len(passing) + 1)]
        schema = create_model("DraftChoice", best=(Literal[tuple(labels)], ...))  # type: ignore[valid-type]
        picker = SubAgent("selector", self.role, self.system_prompt, (), self._model or self.model,
                          output_type=schema, max_turns=2, settings=ModelSettings(max_tokens=30))
        from moot.teams.learning.specialists import render_facts

        listing = "\n".join(f"{label}: {c.draft}" for label, c in zip(labels, passing))
        result = await picker.run(f"Facts:\n{render_facts(facts)}\n\nQuestion: {question}\n\n{listing}",
                                  budget=budget, bus=bus, run_id=run_id, task_id=task_id)
        if not result.ok:
            return None, result.usage, result.turns
        return passing[labels.index(result.output.best)], result.usage, result.turns

    async def _revise(self, question: str, single: Candidate, facts: list[dict[str, Any]],
                      passages: list[dict[str, Any]], budget: Any, bus: EventBus | None,
                      progress: AgentProgress | None, run_id: str | None, task_id: str | None) -> AgentResult:
        assert self.reviser is not None
        note = (f"Your draft answer was: {single.draft}\nIt states {', '.join(single.verdict.unsupported)}, which no "
                "fact or passage contains. Answer again using only the facts and passages; if they do not give "
                "the answer, say plainly that the sources do not say.")
        return await self.reviser.run(question, {"facts": facts, "passages": passages, "notes": {"checker": note}},
                                      budget=budget, bus=bus, progress=progress, run_id=run_id, task_id=task_id)


__all__ = ["DraftAgent", "SelectorAgent", "drafts"]
