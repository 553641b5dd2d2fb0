"""Asking: recall, the frame, the drafts, the checker and the selection — one recorded run a question.

```
recall (Python) ─┬─▶ plain draft (model) ─────────────────────────────┐
                 └─▶ frame (model, schema) ─▶ specialists whose precondition holds ─┴─▶ check ─▶ select ─▶ Answer
```

The plain draft needs no frame, so it runs beside the frame's reading; the specialists wait for
the frame and run side by side. A specialist that stands by (``stands_by``) is asked only after
the check, when no draft passed it, and then its draft is checked too.

Single mode (the design's baseline) is recall and the plain draft; multi mode adds the frame and
the specialists; ``auto`` reads the frame and goes multi when a specialist applies. A question
nothing in the knowledge base matches is answered "I don't know" from that retrieval evidence,
with no model call. Every step is a task of one :class:`~moot.runtime.Run`: the Python steps
(``recall``, ``check``, ``select``) and the model's, so ``moot runs show`` shows all of them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date

from moot.errors import MootError
from moot.memory import KnowledgeBase
from moot.models.base import Model
from moot.runtime import Budget, BudgetTracker, EventBus, Run, RunStore
from moot.teams.learning.answer import Answer, AnswerTrace, FactUsed, SubAgentStep
from moot.teams.learning.ask.checker import Evidence, check
from moot.teams.learning.ask.drafts import AskContext, Draft, Resolution, Specialist, Verdict
from moot.teams.learning.ask.frame import QuestionFrame, fallback_frame, read_frame
from moot.teams.learning.ask.recall import Recall, recall
from moot.teams.learning.ask.select import select
from moot.teams.learning.specialists import REGISTRY
from moot.teams.learning.specialists.plain import SPECIALIST as PLAIN

MODES = ("auto", "single", "multi")
PhaseCallback = Callable[[str], None]


def _newest(recalled: Recall) -> date | None:
    days = [p.published[:10] for p in recalled.passages if p.published]
    try:
        return date.fromisoformat(max(days)) if days else None
    except ValueError:
        return None


def _confidence(resolution: Resolution, drafts: list[Draft], stopped: bool) -> float:
    """A rule, not a feeling: a grounded answer rests on evidence; a computed one more so; a plain
    draft the checker refused, a budget stop or an unknown answer lower it."""
    if not resolution.knows:
        return 0.05
    score = 0.55
    chosen = next((d for d in drafts if d.specialist == resolution.chosen), None)
    if chosen is not None and chosen.replaces:
        score += 0.2
    if any(not v.passed for v in resolution.verdicts if v.specialist == "single"):
        score -= 0.2
    if stopped:
        score -= 0.2
    return round(min(0.95, max(0.05, score)), 2)


async def answer_question(kb: KnowledgeBase, question: str, *, model: Model, mode: str = "auto",
                          budget: Budget | BudgetTracker, store: RunStore | None, bus: EventBus | None = None,
                          on_phase: PhaseCallback | None = None, models: Mapping[str, Model] | None = None,
                          parent_run_id: str | None = None) -> Answer:
    """Answer one question from ``kb``; ``models`` maps a role (``frame``, ``single``, or a specialist's
    name) to its own model; other roles use ``model``."""
    if mode not in MODES:
        raise MootError(f"unknown mode {mode!r}", fix="use mode='auto', 'single' or 'multi'")
    phase = on_phase or (lambda _name: None)
    role_models = dict(models or {})

    def model_for(role: str) -> Model:
        return role_models.get(role, model)

    started = time.perf_counter()
    run = Run(f"ask: {' '.join(question.split())[:80]}", budget, bus, store, parent_run_id=parent_run_id)
    notes: list[str] = []
    drafts: list[Draft] = []
    resolution: Resolution | None = None
    frame: QuestionFrame | None = None
    used_mode = mode if mode != "auto" else "single"
    mode_rule = f"requested: mode={mode}" if mode != "auto" else ""
    async with run:
        phase("retrieve")
        recalled: Recall = await run.python("recall", "memory", lambda: recall(kb, question))
        anchor = _newest(recalled)
        if not recalled.relevant:
            notes.append(f"retrieval found nothing relevant: {recalled.why}")
            resolution = Resolution(chosen="none", knows=False, rule="nothing relevant was found; no model was asked",
                                    answer=f"I don't know: nothing in the knowledge base matches the question ({recalled.why}).")
        else:
            # The plain draft reads no frame, so it starts at once, beside the frame's reading: two
            # requests share the engine's slots, and the answer no longer waits for the frame first.
            unread = fallback_frame(question, "single mode reads no frame", anchor=anchor)
            ctx = AskContext(question=question, frame=unread, recall=recalled, run=run, model_for=model_for, anchor=anchor)
            plain = asyncio.ensure_future(PLAIN.draft(ctx))
            try:
                if mode in ("auto", "multi"):
                    phase("frame")
                    frame = await read_frame(run, model_for("frame"), question, anchor=anchor)
                else:
                    frame = unread
            except BaseException:
                plain.cancel()
                raise
            ctx = replace(ctx, frame=frame)
            applicable = [(s, why) for s in REGISTRY if (why := s.applies(frame, recalled))]
            if mode == "auto":
                extra = [s.name for s, _ in applicable if s.name != "single"]
                used_mode = "multi" if extra else "single"
                mode_rule = (f"{frame.kind}: {', '.join(extra)} apply → multi" if extra
                             else f"{frame.kind}: no specialist applies → single")
            if used_mode == "single":
                applicable = [(s, why) for s, why in applicable if s.name == "single"]
            notes += [why for _, why in applicable]
            phase("draft")
            if not any(s is PLAIN for s, _ in applicable):
                plain.cancel()
            first = [(s, why) for s, why in applicable if not s.stands_by]
            standing_by = [(s, why) for s, why in applicable if s.stands_by]
            drafts += await _drafts(first, ctx, notes, started={PLAIN: plain})
            notes += ctx.notes
            phase("check")
            verdicts = await run.python("check", "checker", lambda: _check(drafts, recalled, question))
            answered = [v for v in verdicts if v.passed]
            if standing_by and used_mode == "multi" and not answered:
                # Only now, when no draft would answer (every draft failed the checker), are the
                # stand-by specialists asked.
                phase("stand-by")
                ctx.notes.clear()
                drafts += await _drafts(standing_by, ctx, notes)
                notes += ctx.notes
                verdicts = await run.python("check-stand-by", "checker", lambda: _check(drafts, recalled, question))
            elif standing_by:
                notes.append(f"not asked ({', '.join(s.name for s, _ in standing_by)}): a draft already answers")
            authority = {s.name: s.authority for s in REGISTRY}
            resolution = await run.python("select", "selector", lambda: select(drafts, verdicts, authority, mode=used_mode))
    result = run.result
    assert result is not None and resolution is not None
    answered = bool(resolution.answer)
    text = resolution.answer
    if not answered:
        best = [p for p in recalled.passages if p.score > 0][:3]
        text = "I could not complete an answer; the most relevant passages are: " + "; ".join(
            f"“{p.text}” ({p.source})" for p in best)
        notes.append(f"no draft was produced ({result.stop_reason})")
    if result.status != "completed":
        notes.append(result.stop_reason)
    notes.append(f"selector: {resolution.rule}")
    notes += [f"checker: {v.note}" for v in resolution.verdicts]
    steps = [SubAgentStep(task=tid, agent=r.agent, status=r.status, fallback_agent=r.fallback_agent,
                          calls=r.usage.requests, error=r.error) for tid, r in result.results.items()]
    facts = [FactUsed(id=f.id, content=f.content, source=f.source, source_date=f.source_date) for f in recalled.facts]
    confidence = _confidence(resolution, drafts, result.status == "stopped")
    trace = AnswerTrace(
        intent=frame.kind if frame is not None else "unknown",
        intent_decided_by=frame.decided_by if frame is not None else "default",
        entities=list(frame.about) if frame is not None else [],
        mode_rule=mode_rule,
        retrieval_strategy=recalled.strategy,
        retrieval_note=recalled.why,
        facts=facts,
        sub_agents=steps,
        confidence=confidence,
        notes=([f"frame: {frame.describe()}"] if frame is not None else []) + notes,
        frame=frame.model_dump(mode="json") if frame is not None else None,
        drafts=[d.model_dump(mode="json") for d in drafts],
        chosen=resolution.chosen,
    )
    return Answer(
        question=question,
        answer=text,
        mode=used_mode,
        intent=trace.intent,
        sub_agents=[s.task for s in steps if s.status not in ("not_started", "skipped")],
        facts_used=facts if resolution.knows else [],
        confidence=confidence,
        knows=resolution.knows and answered,
        answered=answered,
        trace=trace,
        usage=result.usage,
        seconds=time.perf_counter() - started,
        run_id=result.run_id,
    )


async def _drafts(chosen: list[tuple[Specialist, str]], ctx: AskContext, notes: list[str], *,
                  started: Mapping[Specialist, asyncio.Future[Draft | None]] | None = None) -> list[Draft]:
    """The drafts of ``chosen``, side by side (a draft already ``started`` is awaited, not asked
    again); a specialist that fails is noted and gives none."""
    early = dict(started or {})
    outcomes = await asyncio.gather(*(early.get(s) or s.draft(ctx) for s, _ in chosen), return_exceptions=True)
    drafts: list[Draft] = []
    for (specialist, _), outcome in zip(chosen, outcomes):
        if isinstance(outcome, BaseException):
            if isinstance(outcome, asyncio.CancelledError):
                raise outcome
            notes.append(f"{specialist.name} failed: {type(outcome).__name__}: {outcome}")
        elif outcome is not None:
            drafts.append(outcome)
    return drafts


def _check(drafts: list[Draft], recalled: Recall, question: str) -> list[Verdict]:
    evidence = Evidence.of(recalled, question, [c for d in drafts for c in d.computed])
    return [check(d, evidence) for d in drafts]


def roles() -> tuple[str, ...]:
    """The answering roles a model can be given with ``models={role: model}``."""
    return ("frame", *(s.name for s in REGISTRY))


__all__ = ["MODES", "answer_question", "roles"]
