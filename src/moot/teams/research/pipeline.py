"""One research run: the phases recorded as one run in the run store, on one event bus.

The planner, synthesizer and verifier are single agent calls on the run's budget. The
researchers run as a :class:`~moot.runtime.TaskGraph` (in parallel, or chained when
``parallel=False`` for the benchmark) under the same run id, so ``moot runs show ID`` draws
their bars on one time axis next to the other phases.
"""

from __future__ import annotations

import time
from typing import Any

from moot.models.base import Usage
from moot.runtime import (
    Budget,
    EventBus,
    EventType,
    RecordedRun,
    RunResult,
    RunStore,
    SubAgent,
    SubAgentTask,
    TaskGraph,
)

_RUN_EVENTS = (EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_FAILED)


class PipelineRun(RecordedRun):
    """A research run: planner, synthesizer and verifier are steps; the researchers one inner graph."""

    def __init__(self, name: str, budget: Budget, bus: EventBus | None, store: RunStore | None,
                 run_id: str | None = None) -> None:
        super().__init__(name, budget, bus, store, run_id)
        self.stop_message: str | None = None
        """Why the run's budget stopped it, when a phase before the current tracker was stopped."""
        self.extra_usage: dict[str, Usage] = {}
        """Usage spent inside the researchers' graph (its own tracker), by agent."""
        self.phase_seconds = self.step_seconds

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
        self.tracker = self.new_tracker(Budget(
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
