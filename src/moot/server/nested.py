"""A run that holds other runs (a learn of several files, an eval, a board goal), as its page
shows it: the children on its timeline, its usage summed over them while they still run, and,
for a run that did not complete, what it kept.
"""

from __future__ import annotations

from typing import Any

from moot.runtime import RunStore
from moot.runtime.store import RunRecord
from moot.server.schemas import KeptResult, RunSummary, Span, UsageOut

CHILD_LANE = "runs held"
UNFINISHED = ("running", "queued")


def _add(a: UsageOut, b: UsageOut) -> UsageOut:
    return UsageOut(input_tokens=a.input_tokens + b.input_tokens, output_tokens=a.output_tokens + b.output_tokens,
                    requests=a.requests + b.requests, cost_usd=a.cost_usd + b.cost_usd)


def _out(usage: Any) -> UsageOut:
    return UsageOut(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, requests=usage.requests,
                    cost_usd=usage.cost_usd)


def live_children(store: RunStore, children: list[RunSummary]) -> list[RunSummary]:
    """The children, a running one with the usage its events recorded so far (its row holds
    usage only once it ends)."""
    running = [c.run_id for c in children if c.status in UNFINISHED]
    so_far = store.running_usage(running)
    return [c.model_copy(update={"usage": _out(so_far[c.run_id])}) if c.run_id in so_far else c for c in children]


def live_rows(store: RunStore, rows: list[RunSummary]) -> list[RunSummary]:
    """Rows of the runs list, a running one with what it and the runs it holds used so far."""
    running = [r.run_id for r in rows if r.status in UNFINISHED]
    if not running:
        return rows
    so_far = store.running_usage(running)
    return [r.model_copy(update={"usage": _out(so_far[r.run_id])}) if r.run_id in so_far else r for r in rows]


def parent_usage(store: RunStore, record: RunRecord, own: UsageOut, children: list[RunSummary]) -> UsageOut:
    """A parent's usage: while it runs, its own requests so far plus its children's; once it
    ended, what it recorded (its children's sum), or that sum when it recorded none."""
    summed = UsageOut()
    for child in children:
        summed = _add(summed, child.usage)
    if record.status in UNFINISHED:
        mine = store.usage_so_far([record.id]).get(record.id)
        return _add(_out(mine) if mine is not None else UsageOut(), summed)
    if own.requests == 0 and summed.requests:
        return summed
    return own


def child_spans(children: list[RunSummary], now: float) -> tuple[list[Span], list[str]]:
    """One span per child on as few lanes as keep them apart (children that ran at the same time
    get lanes of their own), and the lane names."""
    lanes_end: list[float] = []
    spans: list[Span] = []
    names: list[str] = []
    for child in sorted(children, key=lambda c: c.started):
        end = child.finished or (now if child.status in UNFINISHED else child.started)
        lane = next((i for i, free_at in enumerate(lanes_end) if free_at <= child.started), None)
        if lane is None:
            lane = len(lanes_end)
            lanes_end.append(end)
            names.append(CHILD_LANE if lane == 0 else f"{CHILD_LANE} ({lane + 1})")
        lanes_end[lane] = end
        spans.append(Span(task_id=child.run_id, agent=names[lane], status=child.status, started=child.started,
                          finished=child.finished, usage=child.usage, stop_reason=child.stop_reason,
                          child_run_id=child.run_id, name=child.name))
    return spans, names


def kept_results(record: RunRecord, spans: list[Span], children: list[RunSummary]) -> list[KeptResult]:
    """What a run that did not complete kept: its finished tasks' outputs and its finished children."""
    if record.status in UNFINISHED or record.status == "completed":
        return []
    kept = [KeptResult(task_id=s.task_id, agent=s.agent, status=s.status, output=s.output)
            for s in spans if s.child_run_id is None and s.status in ("completed", "fell_back") and s.output is not None]
    kept += [KeptResult(task_id=c.run_id, agent=CHILD_LANE, status=c.status, child_run_id=c.run_id, name=c.name)
             for c in children if c.status == "completed"]
    return kept


__all__ = ["CHILD_LANE", "child_spans", "kept_results", "live_children", "live_rows", "parent_usage"]
