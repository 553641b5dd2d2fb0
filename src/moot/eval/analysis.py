"""Error analysis: for each failed answer, which stage failed, with a one-line reason.

The stages, checked in the order a fact travels (the first place it is lost is the stage):

1. **learning** — the missing fact is stated in the level's articles but is nowhere in what
   the agent learned (its knowledge base);
2. **retrieval** — it was learned but is not among the facts retrieved for the question;
3. **budget** — retrieved, but the per-question budget (calls or deadline) stopped the run
   before the answer was complete (the run's status is ``stopped``);
4. **routing** — the facts were there but the coordinator chose a plan that does not fit the
   question's need (multi mode only; e.g. a causal question answered as plain recall; with
   drafts and a selector: a value had to be worked out and the compute specialist did not run);
5. **synthesis** — a sub-agent's output contained it, the final answer dropped it (read from
   the run store by run id);
6. **reasoning** — the facts reached the answering step, the answer is still wrong
   (arithmetic, order, a wrong value chosen, a forbidden value stated);
7. **metacognition** — the sources do not hold the answer and the agent answered anyway.

"The fact" is a rubric required group: found in a text when any of its alternatives matches.
A group that no article states (a fee worked out from a rule, a difference of two dates) is a
*derived* value: no knowledge base could hold it, so it is never blamed on learning or
retrieval; an answer that lacks it failed at reasoning (or synthesis, when a sub-agent had it).
Without a knowledge-base view or a run id the analysis says what it could not check. A
``context`` answer (one call with the articles in the prompt) can only fail at reasoning or
metacognition: nothing was learned or retrieved.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from moot.eval.levels import Question
from moot.eval.rubric import grade_question, matches

STAGES = ("learning", "retrieval", "budget", "routing", "synthesis", "reasoning", "metacognition", "unknown")

LEVEL_NEEDS: dict[str, frozenset[str]] = {
    "L2": frozenset({"value", "comparison", "change", "cause", "date"}),
    "L3": frozenset({"date", "duration", "change", "comparison"}),
    "L4": frozenset({"steps"}),
    "L5": frozenset({"value", "comparison"}),
    "L6": frozenset({"value", "change", "date"}),
    "L9": frozenset({"cause"}),
    "L10": frozenset({"what_if", "comparison", "cause"}),
    "L11": frozenset({"rule", "comparison"}),
    "L12": frozenset({"what_if", "explanation", "cause", "comparison"}),
}
"""The question kinds (the learning team's question frame) whose plans fit each level's need; a level
not listed fits any plan. Harness knowledge only: the agent is never told its level."""

SINK_TASKS = ("select", "synthesize", "single", "teaching")
"""Tasks whose output is the final answer (else: the task that finished last)."""


class StageVerdict(BaseModel):
    """Where an answer went wrong."""

    stage: str
    reason: str


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _show(group: list[str]) -> str:
    """A required group as a reader sees it: its first alternative, without the ``re:`` marker."""
    first = group[0]
    return repr(first[3:] if first.startswith("re:") else first)


def _found(group: list[str], text: str) -> bool:
    return bool(text) and any(matches(alt, text) for alt in group)


def _split_run(run: dict[str, Any] | None) -> tuple[str, str]:
    """(retrieved facts text, sub-agent outputs text) from a run's task results."""
    if not run:
        return "", ""
    # A retrieval step (an output with "facts") is never the answering one.
    finished = [r for r in run.values() if isinstance(r, dict)
                and not (isinstance(r.get("output"), dict) and "facts" in r["output"])]
    sink = next((t for t in SINK_TASKS if t in run), None)
    if sink is None and finished:
        sink = max(finished, key=lambda r: r.get("finished_at") or 0).get("id")
    retrieved, said = [], []
    for task_id, result in run.items():
        if task_id == sink or not isinstance(result, dict):
            continue
        output = result.get("output")
        if isinstance(output, dict) and "facts" in output:
            # A retrieval step (its other keys restate the same facts): retrieved, not "said".
            retrieved.append(_text(output))
        elif output is not None:
            said.append(_text(output))
    return "\n".join(retrieved), "\n".join(said)


def attribute_failure(
    *,
    level: str,
    question: Question,
    answer: str,
    mode: str,
    trace: dict[str, Any] | None = None,
    run: dict[str, Any] | None = None,
    knowledge: str | None = None,
    sources: str | None = None,
) -> StageVerdict:
    """The stage where a failed answer went wrong. ``run`` = task results from the run store,
    ``knowledge`` = everything the agent learned as text, ``sources`` = the level's articles
    (None: not available; every value is then taken to be stated)."""
    grade = grade_question(answer, question)
    rubric = question.rubric
    if rubric.expects_unknown and (trace or {}).get("run_status") == "stopped":
        return StageVerdict(stage="budget", reason="the per-question budget stopped the run before it could say the sources are silent")
    if rubric.expects_unknown:
        if not grade.said_unknown:
            return StageVerdict(stage="metacognition", reason="the sources do not say, but the answer gives a value anyway")
        return StageVerdict(stage="reasoning", reason=f"said it does not know but also stated {grade.forbidden_hit[:1]}")
    trace = trace or {}
    missing_now = [rubric.required[i] for i in grade.missing]
    if mode == "context":
        # One call with the articles in the prompt: nothing to learn or retrieve, no plan to route.
        if grade.forbidden_hit:
            return StageVerdict(stage="reasoning", reason=f"the articles were in the prompt; the answer states a wrong value ({grade.forbidden_hit[0]})")
        lost = missing_now[0] if missing_now else None
        derived = lost is not None and sources is not None and not _found(lost, sources)
        what = "must be worked out from the articles" if derived else "is in the articles"
        return StageVerdict(stage="reasoning", reason=f"{_show(lost) if lost else 'the answer'} {what}; the one call did not give it"
                            if lost else "the articles were in the prompt; the answer is still wrong")
    if knowledge is None and not run and not trace.get("facts"):
        return StageVerdict(stage="unknown", reason="the agent exposes no knowledge, trace or run to look into")
    retrieved, said = _split_run(run)
    retrieved += "\n" + _text(trace.get("facts") or "")
    missing = [rubric.required[i] for i in grade.missing]
    # Only a value some article states can be lost by learning or retrieval.
    stated = [g for g in missing if sources is None or _found(g, sources)]
    if mode == "teaching":
        if knowledge is not None and (lost := next((g for g in stated if not _found(g, knowledge)), None)):
            return StageVerdict(stage="learning", reason=f"the teacher's knowledge base never held {_show(lost)}, so it could not be taught")
        return StageVerdict(stage="synthesis", reason="the teacher knew it but the student's answer lacks it (lost in teaching)")
    for group in stated:
        if knowledge is not None and not _found(group, knowledge):
            return StageVerdict(stage="learning", reason=f"no learned fact contains {_show(group)}: extraction missed it")
    for group in stated:
        if not _found(group, retrieved):
            where = "" if knowledge is not None else " (the knowledge base was not inspected)"
            return StageVerdict(stage="retrieval", reason=f"{_show(group)} is not in the facts retrieved for the question{where}")
    if trace.get("run_status") == "stopped":
        # The facts were there; the per-question budget (calls or deadline) ended the run first.
        return StageVerdict(stage="budget", reason="the per-question budget stopped the run before a full answer")
    intent = trace.get("intent")
    needs = LEVEL_NEEDS.get(level)
    drafted = "select" in (trace.get("sub_agents") or [])
    if mode == "multi" and drafted:
        # Drafts and a selector: routing failed when a derived value was needed and the compute
        # specialist's precondition did not hold, so no draft could compute it.
        derived_missing = [g for g in missing if g not in stated]
        if derived_missing and "compute" not in (trace.get("sub_agents") or []):
            return StageVerdict(stage="routing", reason=f"{_show(derived_missing[0])} must be worked out, and the compute "
                                "specialist did not run (its precondition did not hold)")
    elif mode == "multi" and needs and intent and intent not in needs:
        return StageVerdict(stage="routing", reason=f"planned as {intent!r}; this question needs {' or '.join(sorted(needs))}")
    for group in missing:
        if _found(group, said):
            if drafted:
                return StageVerdict(stage="synthesis", reason=f"a draft had {_show(group)}; the selector chose another (or the checker refused it)")
            return StageVerdict(stage="synthesis", reason=f"a sub-agent's output had {_show(group)}; the final answer dropped it")
    if grade.forbidden_hit:
        return StageVerdict(stage="reasoning", reason=f"the facts were retrieved but the answer states a wrong value ({grade.forbidden_hit[0]})")
    if derived := [g for g in missing if g not in stated]:
        return StageVerdict(stage="reasoning", reason=f"{_show(derived[0])} must be worked out from the facts (no article states it); the answer did not (wrong rule, order or arithmetic)")
    if missing:
        return StageVerdict(stage="reasoning", reason=f"the facts were retrieved but the answer lacks {_show(missing[0])} (wrong value, order or arithmetic)")
    return StageVerdict(stage="unknown", reason="the answer failed but no stage could be singled out")


__all__ = ["LEVEL_NEEDS", "STAGES", "StageVerdict", "attribute_failure"]
