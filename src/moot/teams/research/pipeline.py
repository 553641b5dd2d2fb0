"""One research run: the phases recorded as one run in the run store, on one event bus.

The planner, synthesizer and verifier are single agent calls on the run's budget. The
researchers run as a :class:`~moot.runtime.TaskGraph` (in parallel, or chained when
``parallel=False`` for the benchmark) under the same run id, so ``moot runs show ID`` draws
their bars on one time axis next to the other phases.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from moot.models.base import Usage
from moot.runtime import (
    AgentResult,
    Budget,
    BudgetTracker,
    EventBus,
    EventType,
    RunResult,
    RunStore,
    SubAgent,
    SubAgentTask,
    TaskGraph,
    TaskResult,
)

_RUN_EVENTS = (EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_FAILED)


class PipelineRun:
    """Records a research run: each phase is a task with its usage, on a shared budget and bus."""

    def __init__(self, name: str, budget: Budget, bus: EventBus | None, store: RunStore | None,
                 run_id: str | None = None) -> None:
        self.name = name
        self.run_id = run_id or uuid.uuid4().hex
        self.bus = bus if bus is not None else EventBus()
        self.store = store
        self.budget = budget
        self.tracker = self._tracker(budget)
        self.stop_message: str | None = None
        """Why the run's budget stopped it, when a phase before the current tracker was stopped."""
        self.results: dict[str, TaskResult] = {}
        self.extra_usage: dict[str, Usage] = {}
        """Usage spent inside the researchers' graph (its own tracker), by agent."""
        self.phase_seconds: dict[str, float] = {}
        self.started_at = time.time()
        self._unsubscribe: Callable[[], None] | None = None

    def start(self, graph: list[dict[str, Any]]) -> None:
        if self.store is not None:
            self.store.start_run(self.run_id, self.name, graph=graph, budget=self.budget.describe())
            self._unsubscribe = self.bus.subscribe(self.store.record_event)
        self.bus.emit(EventType.RUN_STARTED, run_id=self.run_id, name=self.name, tasks=graph,
                      budget=self.budget.describe())

    def _tracker(self, budget: Budget) -> BudgetTracker:
        return BudgetTracker(budget, on_warning=lambda scope, which, detail: self.bus.emit(
            EventType.BUDGET_WARNING, run_id=self.run_id, scope=scope, which=which, detail=detail))

    @property
    def stopped(self) -> bool:
        return self.stop_message is not None or self.tracker.run_stop is not None

    @property
    def stop_reason(self) -> str | None:
        stop = self.tracker.run_stop
        if stop is None:
            return self.stop_message
        if self.tracker.budget is self.budget:
            return str(stop)
        # a tracker started on what was left: say it in terms of the budget the user set
        used = self.usage
        if stop.which == "calls":
            return f"the run's budget of {self.budget.max_calls} model calls would be exceeded ({used.requests} calls already made)"
        return f"the run's {stop.which} budget is spent ({used.requests} calls, {used.input_tokens + used.output_tokens} tokens made)"

    def _rebase(self) -> None:
        """Book the researchers' usage against the run: later phases get only what is left.

        The researchers' graph has its own tracker, so the run's limits are carried over by
        starting a fresh tracker on the remaining budget (calls, tokens, dollars, time).
        """
        for agent, usage in self.tracker.usage_by_agent.items():
            self.extra_usage[agent] = self.extra_usage.get(agent, Usage()) + usage
        if self.tracker.run_stop is not None and self.stop_message is None:
            self.stop_message = str(self.tracker.run_stop)
        spent = sum(self.extra_usage.values(), Usage())
        b = self.budget
        self.tracker = self._tracker(Budget(
            max_calls=None if b.max_calls is None else max(0, b.max_calls - spent.requests),
            max_tokens=None if b.max_tokens is None else max(0, b.max_tokens - spent.input_tokens - spent.output_tokens),
            max_cost_usd=None if b.max_cost_usd is None else max(0.0, b.max_cost_usd - spent.cost_usd),
            deadline_s=self.tracker.time_left(), warn_at=b.warn_at))
        if self.stop_message is None and b.max_calls is not None and spent.requests >= b.max_calls:
            self.stop_message = (f"the run's budget of {b.max_calls} model calls would be exceeded "
                                 f"({spent.requests} calls already made)")

    def usage_by_agent(self) -> dict[str, Usage]:
        merged = dict(self.tracker.usage_by_agent)
        for agent, usage in self.extra_usage.items():
            merged[agent] = merged.get(agent, Usage()) + usage
        return merged

    @property
    def usage(self) -> Usage:
        return sum(self.usage_by_agent().values(), Usage())

    async def step(self, task_id: str, agent: SubAgent, task: str, *, depends_on: list[str] | None = None) -> AgentResult | None:
        """Run one agent call as task ``task_id``; ``None`` when the run's budget already stopped it."""
        if self.stopped:
            self.results[task_id] = TaskResult(id=task_id, agent=agent.name, status="not_started")
            return None
        t0 = time.perf_counter()
        result = self.results[task_id] = TaskResult(id=task_id, agent=agent.name, status="running", started_at=time.time())
        self.bus.emit(EventType.TASK_STARTED, run_id=self.run_id, task_id=task_id, agent=agent.name,
                      depends_on=depends_on or [])
        outcome = await agent.run(task, budget=self.tracker, bus=self.bus, run_id=self.run_id, task_id=task_id)
        self._settle(result, outcome)
        self.phase_seconds[task_id] = time.perf_counter() - t0
        return outcome

    def _settle(self, result: TaskResult, outcome: AgentResult) -> None:
        result.usage, result.turns, result.text = outcome.usage, outcome.turns, outcome.text
        result.stop_reason, result.transcript, result.finished_at = outcome.stop_reason, outcome.transcript, time.time()
        result.output = outcome.output if not hasattr(outcome.output, "model_dump") else outcome.output.model_dump(mode="json")
        if outcome.ok or outcome.stop_reason.startswith("budget:"):
            result.status = "completed" if outcome.ok else "stopped"
            result.error = None if outcome.ok else outcome.detail
            self.bus.emit(EventType.TASK_FINISHED, run_id=self.run_id, task_id=result.id, agent=result.agent,
                          status=result.status, stop_reason=outcome.stop_reason, **result.usage.model_dump())
        else:
            result.status, result.error = "failed", outcome.detail or outcome.stop_reason
            self.bus.emit(EventType.TASK_FAILED, run_id=self.run_id, task_id=result.id, agent=result.agent,
                          error=result.error, policy="skip")

    async def graph(self, agents: list[SubAgent], *, parallel: bool, per_agent_calls: int) -> RunResult:
        """Run the researchers as a task graph under this run's id (parallel, or one after another)."""
        tasks = [SubAgentTask(a.name, a.name, depends_on=[] if parallel or i == 0 else [agents[i - 1].name],
                              on_failure="skip") for i, a in enumerate(agents)]
        self._rebase()
        budget = self.tracker.budget.override(per_agent={a.name: Budget(max_calls=per_agent_calls) for a in agents})
        inner = EventBus(record_content=self.bus.record_content)

        def bridge(event: Any) -> None:  # same run id, fresh sequence numbers; the graph's own run events dropped
            if event.type not in _RUN_EVENTS:
                self.bus.emit(event.type, run_id=self.run_id, task_id=event.task_id, agent=event.agent, **event.payload)

        inner.subscribe(bridge)
        t0 = time.perf_counter()
        result = await TaskGraph(agents, tasks).run(budget=budget, bus=inner, run_id=self.run_id,
                                                    name=f"{self.name} researchers")
        self.phase_seconds["researchers"] = time.perf_counter() - t0
        self.results.update(result.results)
        for agent, usage in result.usage_by_agent.items():
            self.extra_usage[agent] = self.extra_usage.get(agent, Usage()) + usage
        if result.status == "stopped" and self.stop_message is None:
            self.stop_message = result.stop_reason
        self._rebase()
        return result

    async def finish(self, status: str, reason: str) -> RunResult:
        result = RunResult(run_id=self.run_id, name=self.name, status=status,  # type: ignore[arg-type]
                           stop_reason=reason, results=self.results, usage=self.usage,
                           usage_by_agent=self.usage_by_agent(), started_at=self.started_at, finished_at=time.time())
        kind = EventType.RUN_FAILED if status == "failed" else EventType.RUN_FINISHED
        self.bus.emit(kind, run_id=self.run_id, status=status, stop_reason=reason, **result.usage.model_dump())
        try:
            await self.bus.flush()
        finally:
            if self._unsubscribe is not None:
                self._unsubscribe()
            if self.store is not None:
                self.store.finish_run(result)
        return result
