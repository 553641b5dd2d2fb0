"""The run history as the API shows it: runs recorded by any process, turned into spans on agent lanes.

Everything here reads the run store (the SQLite file every moot process writes), so runs started
from the CLI, by another server, or before this server started are all visible. A run's spans
are rebuilt from its events: a task's start and end, the model requests and tool calls between
them, keyed by task id; the lane is the agent that ran the task.
"""

from __future__ import annotations

import re
import time
from typing import Any

from moot.runtime import RunStore
from moot.runtime.events import Event
from moot.runtime.store import RunRecord
from moot.runtime.waits import wait_summary
from moot.server.nested import child_spans, kept_results, live_children, live_rows, parent_usage
from moot.server.schemas import (
    BudgetLine,
    ModelCall,
    RunDetail,
    RunSummary,
    Span,
    TeamEvent,
    TeamName,
    ToolCallOut,
    UsageOut,
)

TEAM_PREFIXES: dict[str, tuple[str, ...]] = {
    "research": ("research (", "research:"),
    "learning": ("ask: ", "learn ", "teach: "),
    "graph": ("graph: ",),
    "deliberation": ("deliberate (", "deliberate:"),
    "board": ("board",),
}
"""How each team names its runs: the runs list filters by team on these name prefixes."""

_RUNTIME_EVENTS = {"run_started", "run_finished", "run_failed", "task_started", "task_finished", "task_failed",
                   "task_skipped", "agent_started", "agent_finished", "agent_failed", "model_request",
                   "model_response", "tool_call", "budget_warning", "budget_stop"}


def team_of(name: str) -> TeamName:
    for team, prefixes in TEAM_PREFIXES.items():
        if name.startswith(prefixes):
            return team  # type: ignore[return-value]
    return "other"


def _usage(data: dict[str, Any] | Any) -> UsageOut:
    if hasattr(data, "model_dump"):
        data = data.model_dump()
    data = data or {}
    return UsageOut(input_tokens=int(data.get("input_tokens") or 0), output_tokens=int(data.get("output_tokens") or 0),
                    requests=int(data.get("requests") or 0), cost_usd=float(data.get("cost_usd") or 0.0))


def summary(record: RunRecord) -> RunSummary:
    return RunSummary(run_id=record.id, name=record.name, team=team_of(record.name), status=record.status,
                      stop_reason=record.stop_reason, started=record.started, finished=record.finished,
                      duration_s=record.duration_s, usage=_usage(record.usage),
                      parent_run_id=getattr(record, "parent_run_id", None))


_BUDGET_WORDS = {
    "calls": "it used all the model calls its budget allowed",
    "tokens": "it used all the tokens its budget allowed",
    "cost_usd": "it spent all the money its budget allowed",
    "cost": "it spent all the money its budget allowed",
    "deadline": "its time limit ran out",
    "time": "its time limit ran out",
    "turns": "an agent reached its turn limit",
}


def plain_stop_reason(status: str, reason: str | None) -> str:
    """The stop reason in words a person reads at a glance."""
    reason = (reason or "").strip()
    if status == "running":
        return "still running"
    if status == "queued":
        return "waiting for a free slot on the server"
    match = re.fullmatch(r"budget:(\w+)", reason)
    if match:
        return f"stopped early: {_BUDGET_WORDS.get(match.group(1), 'a budget limit was reached')}; partial results kept"
    if reason.startswith("error:"):
        return f"failed: {reason[6:].strip()}"
    if not reason or reason == status:
        return {"completed": "finished: every step completed", "failed": "failed", "cancelled": "cancelled by the user",
                "stopped": "stopped early by its budget"}.get(status, status)
    if status == "completed" and reason.lower().startswith(("completed", "finished")):
        return reason
    return reason if status in ("completed", "stopped", "failed", "cancelled") and len(reason) > 12 else f"{status}: {reason}"


def _budget_lines(budget: dict[str, Any], record: RunRecord, events: list[Event]) -> list[BudgetLine]:
    usage = record.usage
    end = record.finished or (events[-1].ts if events else record.started)
    lines = []
    for key, which, used in (("max_calls", "calls", usage.requests),
                             ("max_tokens", "tokens", usage.input_tokens + usage.output_tokens),
                             ("max_cost_usd", "cost_usd", usage.cost_usd),
                             ("deadline_s", "seconds", max(0.0, end - record.started))):
        limit = budget.get(key)
        if limit:
            lines.append(BudgetLine(which=which, limit=float(limit), used=float(used)))
    return lines


def build_spans(events: list[Event], results: dict[str, Any]) -> tuple[list[Span], list[str], list[TeamEvent], list[TeamEvent], bool]:
    """Spans (one per task), lanes (agents by first start), team events, budget events, content recorded."""
    spans: dict[str, Span] = {}
    open_calls: dict[str, ModelCall] = {}
    team_events: list[TeamEvent] = []
    budget_events: list[TeamEvent] = []
    content = False

    def span_for(e: Event) -> Span | None:
        key = e.task_id or (f"agent:{e.agent}" if e.agent else None)
        if key is None:
            return None
        span = spans.get(key)
        if span is None:
            span = spans[key] = Span(task_id=e.task_id or e.agent or key, agent=e.agent or e.task_id or "?",
                                     status="running", started=e.ts)
        if span.agent in ("?", span.task_id) and e.agent:
            span.agent = e.agent
        return span

    for e in events:
        kind, p = e.type.value, e.payload
        if kind not in _RUNTIME_EVENTS:
            team_events.append(TeamEvent(seq=e.seq, ts=e.ts, type=kind, agent=e.agent, task_id=e.task_id, payload=p))
            continue
        if kind in ("budget_warning", "budget_stop"):
            budget_events.append(TeamEvent(seq=e.seq, ts=e.ts, type=kind, agent=e.agent, task_id=e.task_id, payload=p))
            continue
        if kind.startswith("run_"):
            continue
        span = span_for(e)
        if span is None:
            continue
        if kind == "task_started":
            span.started, span.status = e.ts, "running"
            span.depends_on = list(p.get("depends_on") or [])
        elif kind in ("task_finished", "task_failed", "task_skipped"):
            span.finished = e.ts
            span.status = p.get("status") or {"task_failed": "failed", "task_skipped": "skipped"}.get(kind, "completed")
            span.stop_reason = p.get("stop_reason") or span.stop_reason
            span.error = p.get("error") or span.error
            if "input_tokens" in p:
                span.usage = _usage(p)
        elif kind in ("agent_finished", "agent_failed"):
            if span.finished is None or e.ts > span.finished:
                span.finished = e.ts
            if span.status == "running":
                span.status = "completed" if kind == "agent_finished" else "failed"
            span.stop_reason = span.stop_reason or p.get("stop_reason")
        elif kind == "model_request":
            call = ModelCall(turn=int(p.get("turn") or 0), model=p.get("model"), started=e.ts,
                             input_tokens=int(p.get("estimated_input_tokens") or 0), messages=p.get("messages"))
            content = content or p.get("messages") is not None
            open_calls[span.task_id] = call
            span.model_calls.append(call)
        elif kind == "model_response":
            call = open_calls.pop(span.task_id, None)
            if call is None:
                call = ModelCall(turn=int(p.get("turn") or 0), started=e.ts - float(p.get("latency_s") or 0.0))
                span.model_calls.append(call)
            call.finished, call.latency_s = e.ts, p.get("latency_s")
            call.queue_s, call.prompt_s, call.generation_s = p.get("queue_s"), p.get("prompt_s"), p.get("generation_s")
            span.waited_s += float(p.get("queue_s") or 0.0)
            call.input_tokens = int(p.get("input_tokens") or call.input_tokens)
            call.output_tokens = int(p.get("output_tokens") or 0)
            call.cost_usd = float(p.get("cost_usd") or 0.0)
            call.finish_reason, call.tool_calls = p.get("finish_reason"), list(p.get("tool_calls") or [])
            if "text" in p:
                call.text, content = p.get("text"), True
        elif kind == "tool_call":
            span.tool_calls.append(ToolCallOut(ts=e.ts, tool=str(p.get("tool") or "?"), arguments=p.get("arguments"),
                                               result=p.get("result"), error=p.get("error")))
            if p.get("error") or p.get("ok") is False:
                span.failed_tools += 1
    for task_id, data in (results or {}).items():
        span = spans.get(task_id)
        if span is None or not isinstance(data, dict):
            continue
        span.output = data.get("output") if data.get("output") is not None else data.get("text")
        if data.get("status"):
            span.status = data["status"]
        if not span.usage.requests and data.get("usage"):
            span.usage = _usage(data["usage"])
        span.error = span.error or data.get("error")
    for span in spans.values():  # a span's usage, when its end event carried none: its calls' sum
        if not span.usage.requests and span.model_calls:
            span.usage = UsageOut(input_tokens=sum(c.input_tokens for c in span.model_calls),
                                  output_tokens=sum(c.output_tokens for c in span.model_calls),
                                  requests=len(span.model_calls), cost_usd=sum(c.cost_usd for c in span.model_calls))
    ordered = sorted(spans.values(), key=lambda s: s.started)
    lanes: list[str] = []
    for span in ordered:
        if span.agent not in lanes:
            lanes.append(span.agent)
    return ordered, lanes, team_events, budget_events, content


def run_detail(store: RunStore, run_id: str) -> RunDetail:
    """A run as the run page shows it (``KeyError`` when the store has no such run)."""
    from moot.errors import MootError

    try:
        record = store.get_run(run_id)
    except MootError:
        raise KeyError(run_id) from None
    events = store.events(record.id)
    spans, lanes, team_events, budget_events, content = build_spans(events, record.results)
    found = store.output(record.id)
    base = summary(record)
    children = live_children(store, [summary(c) for c in store.children(record.id)])
    if children:  # the children on this run's timeline, and its usage summed over them
        base.usage = parent_usage(store, record, base.usage, children)
        held, held_lanes = child_spans(children, time.time())
        spans, lanes = sorted(spans + held, key=lambda x: x.started), lanes + held_lanes
    return RunDetail(
        **base.model_dump(), lanes=lanes, children=children, spans=spans, team_events=team_events, budget_events=budget_events,
        kept=kept_results(record, spans, children),
        budget=_budget_lines(record.budget, record, events), stop_reason_text=plain_stop_reason(record.status, record.stop_reason),
        usage_by_agent={a: _usage(u) for a, u in record.usage_by_agent.items()},
        output_kind=found[0] if found else None, output=found[1] if found else None,
        content_recorded=content, events=len(events), timing=_timing(events, record),
    )


def _timing(events: list[Event], record: RunRecord) -> dict[str, Any] | None:
    waits = wait_summary(events, started=record.started, finished=record.finished)
    if not waits.calls:
        return None
    return {**waits.as_dict(), "sentence": waits.sentence()}


def list_runs(store: RunStore, *, team: str | None, status: str | None, since: float | None, until: float | None,
              search: str | None, limit: int, offset: int, top_level: bool = True) -> tuple[list[RunSummary], int]:
    prefixes: list[str] | None = None
    if team:
        prefixes = list(TEAM_PREFIXES.get(team, ()))
    if team == "other":
        # "other": everything no team prefix matches; rare, so it is filtered here
        records, _ = store.query_runs(status=status, since=since, until=until, search=search, limit=100_000,
                                      top_level=top_level)
        rows = [summary(r) for r in records if team_of(r.name) == "other"]
        return rows[offset: offset + limit], len(rows)
    records, total = store.query_runs(name_prefixes=prefixes, status=status, since=since, until=until, search=search,
                                      limit=limit, offset=offset, top_level=top_level)
    return live_rows(store, [summary(r) for r in records]), total
