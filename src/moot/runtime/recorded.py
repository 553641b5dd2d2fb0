"""A run whose steps are driven by code instead of a task graph, recorded like any other run.

Some teams decide the next agent call from the last one's output — a teaching session
(teach, check, adapt), a research pipeline (plan, then researchers, then synthesis, then
verification). They cannot be one static :class:`~moot.runtime.graph.TaskGraph`, but they must
still share one budget, stream events and appear in ``moot runs show`` like a graph run.
:class:`RecordedRun` is that: each :meth:`RecordedRun.step` is a task of the run, with its
usage, stop reason and transcript, on one :class:`BudgetTracker` and one :class:`EventBus`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from moot.models.base import Usage
from moot.runtime.agent import AgentResult, SubAgent
from moot.runtime.budget import Budget, BudgetTracker
from moot.runtime.events import EventBus, EventType
from moot.runtime.graph import RunResult, RunStatus, TaskResult
from moot.runtime.store import RunStore


class RecordedRun:
    """One recorded run made of agent calls that code sequences; see the module docstring.

    Use: ``run.start()``, then ``await run.step("plan", agent, task)`` for each call (it returns
    ``None`` without calling the agent once the budget stopped the run), then
    ``await run.finish(status, reason)``, which records the :class:`RunResult`.
    """

    def __init__(self, name: str, budget: Budget, bus: EventBus | None, store: RunStore | None,
                 run_id: str | None = None) -> None:
        self.name = name
        self.run_id = run_id or uuid.uuid4().hex
        self.bus = bus if bus is not None else EventBus()
        self.store = store
        self.budget = budget
        self.tracker = self.new_tracker(budget)
        self.results: dict[str, TaskResult] = {}
        self.failures: list[str] = []
        """``"task_id: error"`` for every step that failed (not counting budget stops)."""
        self.step_seconds: dict[str, float] = {}
        self.started_at = time.time()
        self._unsubscribe: Callable[[], None] | None = None

    def new_tracker(self, budget: Budget) -> BudgetTracker:
        """A tracker whose warnings are events of this run."""
        return BudgetTracker(budget, on_warning=lambda scope, which, detail: self.bus.emit(
            EventType.BUDGET_WARNING, run_id=self.run_id, scope=scope, which=which, detail=detail))

    def start(self, graph: list[dict[str, Any]] | None = None) -> None:
        """Record the run's start (``graph``: the planned tasks, when known, for the run's page)."""
        tasks = list(graph or [])
        if self.store is not None:
            self.store.start_run(self.run_id, self.name, graph=tasks, budget=self.budget.describe())
            self._unsubscribe = self.bus.subscribe(self.store.record_event)
        self.bus.emit(EventType.RUN_STARTED, run_id=self.run_id, name=self.name, tasks=tasks,
                      budget=self.budget.describe())

    @property
    def stopped(self) -> bool:
        """Whether the budget stopped the run (no further step calls its agent)."""
        return self.tracker.run_stop is not None

    def usage_by_agent(self) -> dict[str, Usage]:
        return dict(self.tracker.usage_by_agent)

    @property
    def usage(self) -> Usage:
        return sum(self.usage_by_agent().values(), Usage())

    async def step(self, task_id: str, agent: SubAgent, task: str, *,
                   depends_on: list[str] | None = None) -> AgentResult | None:
        """Run one agent call as task ``task_id``; ``None`` (task ``not_started``) once the budget stopped the run."""
        if self.stopped:
            self.results[task_id] = TaskResult(id=task_id, agent=agent.name, status="not_started")
            return None
        started = time.perf_counter()
        result = self.results[task_id] = TaskResult(id=task_id, agent=agent.name, status="running", started_at=time.time())
        self.bus.emit(EventType.TASK_STARTED, run_id=self.run_id, task_id=task_id, agent=agent.name,
                      depends_on=depends_on or [])
        outcome = await agent.run(task, budget=self.tracker, bus=self.bus, run_id=self.run_id, task_id=task_id)
        self.settle(result, outcome)
        self.step_seconds[task_id] = time.perf_counter() - started
        return outcome

    def settle(self, result: TaskResult, outcome: AgentResult) -> None:
        """Copy an agent's outcome into its task and emit the task's end event."""
        result.usage, result.turns, result.text = outcome.usage, outcome.turns, outcome.text
        result.stop_reason, result.transcript, result.finished_at = outcome.stop_reason, outcome.transcript, time.time()
        output = outcome.output
        result.output = output.model_dump(mode="json") if hasattr(output, "model_dump") else output
        if outcome.ok or outcome.stop_reason.startswith("budget:"):
            result.status = "completed" if outcome.ok else "stopped"
            result.error = None if outcome.ok else outcome.detail
            self.bus.emit(EventType.TASK_FINISHED, run_id=self.run_id, task_id=result.id, agent=result.agent,
                          status=result.status, stop_reason=outcome.stop_reason, **result.usage.model_dump())
        else:
            result.status, result.error = "failed", outcome.detail or outcome.stop_reason
            self.failures.append(f"{result.id}: {result.error}")
            self.bus.emit(EventType.TASK_FAILED, run_id=self.run_id, task_id=result.id, agent=result.agent,
                          error=result.error, policy="skip")

    async def finish(self, status: RunStatus, reason: str) -> RunResult:
        """Emit the run's end, flush the bus, record the result in the store, and return it."""
        result = RunResult(run_id=self.run_id, name=self.name, status=status, stop_reason=reason,
                           results=self.results, usage=self.usage, usage_by_agent=self.usage_by_agent(),
                           started_at=self.started_at, finished_at=time.time())
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
