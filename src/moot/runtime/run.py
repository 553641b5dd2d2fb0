"""One run lifecycle for every way agents are run: task graphs, code-sequenced pipelines, board agents.

A :class:`Run` owns, in one place, everything a run does besides calling agents:

- the **record**: its row in the run store (``running`` when it starts, its final status,
  usage per agent and task results when it ends), with a ``parent_run_id`` when the run is one
  of several that one command made (a board goal, one learned file of many);
- the **events**: ``run_started`` … ``run_finished`` on its :class:`EventBus`, stored as they
  happen;
- the **spans**: with ``MOOT_OTEL=1`` the bus is exported as OpenTelemetry spans (GenAI
  semantic-convention names, see :mod:`moot.runtime.otel`);
- the **budget**: one :class:`BudgetTracker` for the whole run. Hand an existing tracker in
  and it is used as it is (never rebuilt), so a pipeline's phases, a graph inside a pipeline
  and a child run all spend from the same limits;
- **cancellation**: used as ``async with Run(...) as run:``, a cancellation or a crash still
  records the run (``cancelled`` / ``failed``) with every partial result, then propagates.

Agents are called through :meth:`Run.step` (one agent call as one task of the run) or
:meth:`Run.graph` (a :class:`~moot.runtime.graph.TaskGraph` run under this run's id, tracker
and bus). :meth:`TaskGraph.run` is itself a :class:`Run` around one graph.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from moot.models.base import Usage
from moot.runtime.agent import AgentResult, SubAgent
from moot.runtime.budget import Budget, BudgetTracker
from moot.runtime.events import EventBus, EventType

if TYPE_CHECKING:
    from moot.runtime.graph import RunResult, RunStatus, TaskGraph, TaskResult
    from moot.runtime.store import RunStore


class Run:
    """One recorded run; see the module docstring.

    Use it as an async context manager, or call :meth:`start` and :meth:`finish` yourself::

        async with Run("plan and write", Budget(max_calls=6), store=RunStore()) as run:
            plan = await run.step("plan", planner, "Plan a talk on budgets")
            draft = await run.step("write", writer, plan.text if plan else "", depends_on=["plan"])
        run.result  # the recorded RunResult
    """

    def __init__(
        self,
        name: str,
        budget: Budget | BudgetTracker | None = None,
        bus: EventBus | None = None,
        store: RunStore | None = None,
        run_id: str | None = None,
        *,
        parent_run_id: str | None = None,
    ) -> None:
        self.name = name
        self.run_id = run_id or uuid.uuid4().hex
        self.parent_run_id = parent_run_id
        """The run this one belongs to (a board goal, a command that made several runs)."""
        self.bus = bus if bus is not None else EventBus()
        self.store = store
        if isinstance(budget, BudgetTracker):
            self.tracker = budget
            self.tracker.add_warning_listener(self._warn)
        else:
            if budget is not None and budget.fits_model:  # a preset no model was known for: the default's
                budget = budget.fit_to(None)
            self.tracker = BudgetTracker(budget, on_warning=self._warn)
        self.budget = self.tracker.budget
        self.results: dict[str, TaskResult] = {}
        self.failures: list[str] = []
        """``"task_id: error"`` for every step that failed (not counting budget stops)."""
        self.step_seconds: dict[str, float] = {}
        self.started_at = time.time()
        self.result: RunResult | None = None
        """The recorded result, once :meth:`finish` ran."""
        self._unsubscribe: list[Callable[[], None]] = []
        self._started = False
        self._usage_at_start = self.tracker.usage_by_agent.copy()

    def _warn(self, scope: str, which: str, detail: str) -> None:
        self.bus.emit(EventType.BUDGET_WARNING, run_id=self.run_id, scope=scope, which=which, detail=detail)

    # ------------------------------------------------------------------ start

    def start(self, graph: list[dict[str, Any]] | None = None) -> Run:
        """Record the run's start (``graph``: the planned tasks, when known, for the run's page)."""
        if self._started:
            return self
        self._started = True
        tasks = list(graph or [])
        if self.store is not None:
            self.store.start_run(self.run_id, self.name, graph=tasks, budget=self.budget.describe(),
                                 parent_run_id=self.parent_run_id)
            recording: set[int] = self.bus.__dict__.setdefault("_moot_recording_stores", set())
            if id(self.store) not in recording:  # a child on its parent's bus and store: already recorded
                recording.add(id(self.store))
                remove = self.bus.subscribe(self.store.record_event)

                def stop_recording(store_id: int = id(self.store)) -> None:
                    remove()
                    recording.discard(store_id)

                self._unsubscribe.append(stop_recording)
        from moot.runtime.otel import attach_if_requested

        detach = attach_if_requested(self.bus)
        if detach is not None:
            self._unsubscribe.append(detach)
        payload: dict[str, Any] = {"name": self.name, "tasks": tasks, "budget": self.budget.describe()}
        if self.parent_run_id is not None:
            payload["parent_run_id"] = self.parent_run_id
        self.bus.emit(EventType.RUN_STARTED, run_id=self.run_id, **payload)
        return self

    async def __aenter__(self) -> Run:
        return self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if self.result is not None:
            return
        if exc_type is None:
            await self.finish()
        elif issubclass(exc_type, asyncio.CancelledError):
            await self.finish("cancelled", f"{self.name} was cancelled (Ctrl-C or cancellation); partial results kept")
        else:
            await self.finish("failed", f"{self.name} crashed inside moot ({exc_type.__name__}); partial results kept")

    def child(self, name: str, *, run_id: str | None = None) -> Run:
        """A run that belongs to this one (``parent_run_id``), on the same bus, store and
        tracker: the parent's limits hold across all its children together."""
        self.start()
        return Run(name, self.tracker, self.bus, self.store, run_id, parent_run_id=self.run_id)

    # ------------------------------------------------------------------ state

    @property
    def stopped(self) -> bool:
        """Whether the budget stopped the run (no further step calls its agent)."""
        return self.tracker.run_stop is not None

    @property
    def stop_reason(self) -> str | None:
        """The budget's sentence when it stopped the run."""
        return None if self.tracker.run_stop is None else str(self.tracker.run_stop)

    def usage_by_agent(self) -> dict[str, Usage]:
        """What each agent of this run spent (a shared tracker's earlier spending excluded)."""
        out: dict[str, Usage] = {}
        for agent, usage in self.tracker.usage_by_agent.items():
            before = self._usage_at_start.get(agent)
            spent = usage if before is None else usage - before
            if spent.requests or spent.total_tokens or spent.cost_usd:
                out[agent] = spent
        return out

    @property
    def usage(self) -> Usage:
        return sum(self.usage_by_agent().values(), Usage())

    # ------------------------------------------------------------------ agent calls

    async def step(self, task_id: str, agent: SubAgent, task: str, *, context: Mapping[str, Any] | None = None,
                   depends_on: list[str] | None = None, on_text: Callable[[str], None] | None = None) -> AgentResult | None:
        """Run one agent call as task ``task_id``; ``None`` (task ``not_started``) once the budget stopped the run.
        ``on_text`` hears the model's text as it is generated (:meth:`SubAgent.run`)."""
        from moot.runtime.graph import TaskResult

        self.start()
        if self.tracker.out_of_room():
            self.results[task_id] = TaskResult(id=task_id, agent=agent.name, status="not_started")
            return None
        started = time.perf_counter()
        result = self.results[task_id] = TaskResult(id=task_id, agent=agent.name, status="running", started_at=time.time())
        self.bus.emit(EventType.TASK_STARTED, run_id=self.run_id, task_id=task_id, agent=agent.name,
                      depends_on=depends_on or [])
        try:
            outcome = await agent.run(task, context, budget=self.tracker, bus=self.bus, run_id=self.run_id, task_id=task_id,
                                      **({"on_text": on_text} if on_text is not None else {}))
        except asyncio.CancelledError:
            result.status, result.finished_at, result.stop_reason = "cancelled", time.time(), "cancelled"  # type: ignore[assignment]
            self.bus.emit(EventType.TASK_FAILED, run_id=self.run_id, task_id=task_id, agent=agent.name,
                          error="cancelled", policy="none", status="cancelled")
            raise
        self.settle(result, outcome)
        self.step_seconds[task_id] = time.perf_counter() - started
        return outcome

    async def python(self, task_id: str, name: str, work: Callable[[], Any], *,
                     depends_on: list[str] | None = None) -> Any:
        """A step done by Python, with no model call: recorded like an agent's task (agent ``name``),
        with its output and its time, so a run's page shows it between the model calls. ``work`` may
        be a plain or an async function; an exception fails the task and is raised."""
        from moot.runtime.graph import TaskResult

        self.start()
        started = time.perf_counter()
        result = self.results[task_id] = TaskResult(id=task_id, agent=name, status="running", started_at=time.time())
        self.bus.emit(EventType.TASK_STARTED, run_id=self.run_id, task_id=task_id, agent=name, depends_on=depends_on or [])
        try:
            output = work()
            if asyncio.iscoroutine(output):
                output = await output
        except Exception as exc:
            result.status, result.error, result.finished_at = "failed", f"{type(exc).__name__}: {exc}", time.time()
            self.failures.append(f"{task_id}: {result.error}")
            self.bus.emit(EventType.TASK_FAILED, run_id=self.run_id, task_id=task_id, agent=name, error=result.error,
                          policy="raise")
            raise
        result.output = output.model_dump(mode="json") if hasattr(output, "model_dump") else output
        result.status, result.stop_reason, result.finished_at = "completed", "python", time.time()
        self.step_seconds[task_id] = time.perf_counter() - started
        self.bus.emit(EventType.TASK_FINISHED, run_id=self.run_id, task_id=task_id, agent=name, status="completed",
                      stop_reason="python", **result.usage.model_dump())
        return output

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

    async def graph(self, graph: TaskGraph, *, max_parallel: int | None = None) -> RunResult:
        """Run a task graph as part of this run: same run id, tracker, bus and record.

        Returns the graph's own :class:`RunResult` (its tasks, usage and verdict); its tasks
        are also this run's tasks. A cancellation cancels the graph's agents and propagates.
        """
        from moot.runtime.executor import Execution

        self.start()
        execution = Execution(graph, self, max_parallel=max_parallel)
        try:
            await execution.schedule()
        except BaseException:
            await execution.cancel_running("cancelled")
            self.results.update(execution.results)
            raise
        self.results.update(execution.results)
        for tid, r in execution.results.items():
            if r.status == "failed":
                self.failures.append(f"{tid}: {r.error}")
        return execution.result(*execution.verdict(), own_usage=False)

    # ------------------------------------------------------------------ the end

    def verdict(self) -> tuple[RunStatus, str]:
        """``stopped`` when the budget stopped the run, else ``completed`` (naming failed steps)."""
        if self.stopped:
            return "stopped", f"stopped: {self.stop_reason}"
        if self.failures:
            return "completed", f"completed with {len(self.failures)} failed task(s)"
        return "completed", f"all {len(self.results)} tasks completed"

    async def finish(self, status: RunStatus | None = None, reason: str | None = None, *,
                     sink_ids: tuple[str, ...] = ()) -> RunResult:
        """Emit the run's end, flush the bus, record the result in the store, and return it.

        Without ``status`` the run's :meth:`verdict` decides. Calling it twice returns the
        first result.
        """
        from moot.runtime.graph import RunResult

        if self.result is not None:
            return self.result
        self.start()
        if status is None:
            status, default_reason = self.verdict()
            reason = reason or default_reason
        by_agent = self.usage_by_agent()
        result = self.result = RunResult(
            run_id=self.run_id, name=self.name, status=status, stop_reason=reason or "", results=self.results,
            usage=sum(by_agent.values(), Usage()), usage_by_agent=by_agent, started_at=self.started_at,
            finished_at=time.time(), sink_ids=sink_ids,
        )
        kind = EventType.RUN_FAILED if status == "failed" else EventType.RUN_FINISHED
        self.bus.emit(kind, run_id=self.run_id, status=status, stop_reason=result.stop_reason, **result.usage.model_dump())
        try:
            await self.bus.flush()
        except asyncio.CancelledError:  # a second Ctrl-C: still record the run below
            pass
        finally:
            for remove in self._unsubscribe:
                remove()
            self._unsubscribe.clear()
            self.tracker.remove_warning_listener(self._warn)
            if self.store is not None:
                self.store.finish_run(result)
                if not by_agent and self.store.children(self.run_id):
                    # a parent whose children spent on trackers of their own: its usage is theirs
                    self.store.close_parent(self.run_id, status, result.stop_reason)
        return result


RecordedRun = Run
"""The former name of :class:`Run` for code-sequenced runs (kept so existing code reads on)."""


__all__ = ["RecordedRun", "Run"]
