"""Task graphs: SubAgentTasks with dependencies, run by an asyncio executor.

The executor starts every task whose dependencies are done the moment the last one finishes
(no batching by levels), hands each task its dependency results through an explicit reducer,
and applies each task's failure policy: ``fail`` the run, ``skip`` its dependents, or
``fallback`` to another agent (the learning-team design's degradation path). Whatever happens — a failure, a
budget stop, a deadline, Ctrl-C — the run ends with a :class:`RunResult` that keeps every
partial result and says why it stopped, and the run store has it.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from moot.errors import ConfigError
from moot.models.base import Usage
from moot.runtime.agent import SubAgent, render_value
from moot.runtime.budget import Budget, BudgetTracker
from moot.runtime.events import EventBus
from moot.runtime.prompts import load_prompt
from moot.runtime.reducers import Reducer

TaskStatus = Literal["not_started", "running", "completed", "failed", "skipped", "fell_back", "stopped", "cancelled"]
FailurePolicy = Literal["fail", "skip", "fallback"]
RunStatus = Literal["running", "completed", "failed", "stopped", "cancelled"]
_POLICIES = ("fail", "skip", "fallback")
_USABLE = ("completed", "fell_back", "stopped")
"""Statuses whose output a dependent task may use (``stopped`` = an agent's own budget hit)."""


@dataclass
class SubAgentTask:
    """One piece of work for one agent (the learning-team design's name and fields, plus the graph's needs)."""

    agent: str
    """Name of the :class:`SubAgent` that does it."""
    task: str
    """What to do, in words."""
    depends_on: list[str] = field(default_factory=list)
    """Ids of tasks whose results this task needs."""
    id: str | None = None
    """Defaults to the agent's name (when the agent has only this task)."""
    reducer: Reducer | None = None
    """Combines the dependency outputs; default: each output under its task id."""
    on_failure: FailurePolicy = "fail"
    """``fail`` the run, ``skip`` the dependents, or ``fallback`` to another agent."""
    fallback_agent: str | None = None
    """The agent for ``fallback``; ``None`` = a plain single agent on the same model."""
    output_type: Any = None
    """This task's structured output type, in place of the agent's: for a schema built from this
    task's input (choices among this chunk's sentences), so one agent serves every such task."""


@dataclass
class TaskResult:
    """What became of one task."""

    id: str
    agent: str
    status: TaskStatus = "not_started"
    output: Any = None
    text: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    started_at: float | None = None
    finished_at: float | None = None
    stop_reason: str | None = None
    turns: int = 0
    transcript: tuple[Any, ...] = ()
    fallback_agent: str | None = None
    """The agent that produced the output after ``agent`` failed (status ``fell_back``)."""

    def to_dict(self) -> dict[str, Any]:
        from pydantic_core import to_jsonable_python

        try:
            output = to_jsonable_python(self.output)
        except Exception:
            output = render_value(self.output)
        return {
            "id": self.id,
            "agent": self.agent,
            "status": self.status,
            "output": output,
            "error": self.error,
            "usage": self.usage.model_dump(),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "stop_reason": self.stop_reason,
            "turns": self.turns,
            "fallback_agent": self.fallback_agent,
        }


@dataclass
class RunResult:
    """The outcome of a whole run, partial results included."""

    run_id: str
    name: str
    status: RunStatus
    stop_reason: str
    """A sentence a user can read: why the run ended."""
    results: dict[str, TaskResult]
    usage: Usage
    usage_by_agent: dict[str, Usage]
    started_at: float
    finished_at: float
    sink_ids: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    @property
    def output(self) -> Any:
        """The sink task's output, or ``{task id: output}`` when the graph has several sinks."""
        if len(self.sink_ids) == 1:
            return self.results[self.sink_ids[0]].output
        return {tid: self.results[tid].output for tid in self.sink_ids}

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "name": self.name,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "usage": self.usage.model_dump(),
            "usage_by_agent": {a: u.model_dump() for a, u in self.usage_by_agent.items()},
            "results": {tid: r.to_dict() for tid, r in self.results.items()},
            "sink_ids": list(self.sink_ids),
        }


class RunCancelled(asyncio.CancelledError):
    """The run was cancelled; ``result`` holds what it had done (status ``cancelled``)."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(result.stop_reason)
        self.result = result


class TaskGraph:
    """Agents and the tasks they do, validated before anything runs."""

    def __init__(self, agents: Sequence[SubAgent] | Mapping[str, SubAgent], tasks: Sequence[SubAgentTask]) -> None:
        agent_list = list(agents.values()) if isinstance(agents, Mapping) else list(agents)
        self.agents: dict[str, SubAgent] = {}
        for agent in agent_list:
            if agent.name in self.agents:
                raise ConfigError(f"two agents are named {agent.name!r}", fix="give each SubAgent a unique name")
            self.agents[agent.name] = agent
        counts: dict[str, int] = {}
        for t in tasks:
            counts[t.agent] = counts.get(t.agent, 0) + 1
        resolved: list[SubAgentTask] = []
        for t in tasks:
            if t.id is None and counts[t.agent] > 1:
                raise ConfigError(
                    f"agent {t.agent!r} has {counts[t.agent]} tasks, so a task id cannot default to its name",
                    fix="give each of those SubAgentTask an id=",
                )
            resolved.append(replace(t, id=t.id or t.agent, depends_on=list(t.depends_on)))
        self.tasks: dict[str, SubAgentTask] = {}
        for t in resolved:
            assert t.id is not None
            if t.id in self.tasks:
                raise ConfigError(f"two tasks have the id {t.id!r}", fix="give each SubAgentTask a unique id=")
            self.tasks[t.id] = t
        self.validate()

    def validate(self) -> None:
        """Unknown agents or dependencies, bad policies and cycles → :class:`ConfigError`."""
        known_agents = ", ".join(sorted(self.agents)) or "none"
        for tid, t in self.tasks.items():
            if t.agent not in self.agents:
                raise ConfigError(
                    f"task {tid!r} uses unknown agent {t.agent!r} (known: {known_agents})",
                    fix="add the agent to TaskGraph(agents=[...]) or correct the name",
                )
            for dep in t.depends_on:
                if dep not in self.tasks:
                    raise ConfigError(
                        f"task {tid!r} depends on unknown task {dep!r} (tasks: {', '.join(self.tasks)})",
                        fix="depends_on must name task ids",
                    )
            if t.on_failure not in _POLICIES:
                raise ConfigError(f"task {tid!r} has on_failure={t.on_failure!r}", fix="use 'fail', 'skip' or 'fallback'")
            if t.fallback_agent is not None and t.fallback_agent not in self.agents:
                raise ConfigError(
                    f"task {tid!r} falls back to unknown agent {t.fallback_agent!r} (known: {known_agents})",
                    fix="add the fallback agent to TaskGraph(agents=[...])",
                )
        cycle = self._find_cycle()
        if cycle:
            raise ConfigError(
                f"the task graph has a cycle: {' → '.join(cycle)}", fix="remove one of these depends_on links"
            )

    def _find_cycle(self) -> list[str] | None:
        state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
        path: list[str] = []

        def visit(tid: str) -> list[str] | None:
            state[tid] = 1
            path.append(tid)
            for dep in self.tasks[tid].depends_on:
                if state.get(dep) == 1:
                    # Shown in execution order: the dependency first.
                    loop = path[path.index(dep):] + [dep]
                    return list(reversed(loop))
                if dep not in state:
                    found = visit(dep)
                    if found:
                        return found
            path.pop()
            state[tid] = 2
            return None

        for tid in self.tasks:
            if tid not in state:
                found = visit(tid)
                if found:
                    return found
        return None

    @property
    def sink_ids(self) -> tuple[str, ...]:
        """Tasks no other task depends on: their outputs are the run's output."""
        needed = {dep for t in self.tasks.values() for dep in t.depends_on}
        return tuple(tid for tid in self.tasks if tid not in needed)

    def dependents(self, tid: str) -> list[str]:
        """Every task that needs ``tid``, directly or not."""
        found: list[str] = []
        frontier = [tid]
        while frontier:
            current = frontier.pop()
            for other, t in self.tasks.items():
                if current in t.depends_on and other not in found:
                    found.append(other)
                    frontier.append(other)
        return found

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"id": tid, "agent": t.agent, "depends_on": list(t.depends_on), "on_failure": t.on_failure}
            for tid, t in self.tasks.items()
        ]

    async def run(
        self,
        *,
        budget: Budget | BudgetTracker | None = None,
        store: Any | None = None,
        bus: EventBus | None = None,
        name: str | None = None,
        run_id: str | None = None,
        max_parallel: int | None = None,
        parent_run_id: str | None = None,
        model: Any = None,
    ) -> RunResult:
        """Run the graph as one :class:`~moot.runtime.run.Run` (record, events, spans, budget).

        ``model`` (a model string or a :class:`~moot.models.base.Model`) is the model of every
        agent created without one (``None``: ``MOOT_MODEL``, else the embedded model); the
        agents themselves are not changed. A preset budget (``Budget.preset("standard")``)
        gets the deadline that fits the slowest model the agents run on.

        Cancelling this coroutine raises :class:`RunCancelled` (a ``CancelledError`` carrying
        the partial :class:`RunResult`) after recording it. ``max_parallel`` caps the tasks in
        flight at once (ready tasks wait for a slot in the graph's order); ``None`` starts every
        ready task at once. ``budget`` may be a :class:`BudgetTracker` already spending for a
        longer piece of work: it is used as it is. To run a graph as one part of a longer run,
        use :meth:`Run.graph <moot.runtime.run.Run.graph>` instead.
        """
        from moot.runtime.executor import Execution
        from moot.runtime.run import Run

        if max_parallel is not None and max_parallel < 1:
            raise ConfigError(f"max_parallel={max_parallel} would run nothing", fix="use max_parallel=1 or more")
        graph = self.with_default_model(model) if model is not None else self
        if isinstance(budget, Budget):
            budget = budget.fit_to_any(graph.models())
        run = Run(name or "graph " + "+".join(self.tasks), budget or Budget(), bus, store, run_id,
                  parent_run_id=parent_run_id)
        return await Execution(graph, run, max_parallel=max_parallel).run_to_end()

    def models(self) -> list[Any]:
        """The model (object or string; ``None``: the default) of each agent."""
        return [agent._model or agent.model for agent in self.agents.values()]

    def with_default_model(self, model: Any) -> TaskGraph:
        """This graph with ``model`` given to every agent that names none (copies; the graph's
        own agents keep theirs)."""
        graph = copy.copy(self)
        graph.agents = {
            name: (agent if agent.model is not None or agent._model is not None else _with_model(agent, model))
            for name, agent in self.agents.items()
        }
        return graph

    def run_sync(self, **kwargs: Any) -> RunResult:
        """Run from synchronous code (the keyword arguments of :meth:`run`, ``model=`` included).
        Ctrl-C cancels the sub-agents and returns the partial result with status ``cancelled``
        (also recorded in the store)."""

        async def main() -> RunResult:
            try:
                return await self.run(**kwargs)
            except RunCancelled as cancelled:
                return cancelled.result

        return asyncio.run(main())


async def run_graph(
    agents: Sequence[SubAgent] | Mapping[str, SubAgent], tasks: Sequence[SubAgentTask], **options: Any
) -> RunResult:
    """Build a :class:`TaskGraph` and run it: ``await run_graph(agents, tasks, budget=...)``."""
    return await TaskGraph(agents, tasks).run(**options)


def generic_fallback_agent(original: SubAgent) -> SubAgent:
    """The learning-team design's degradation path: a plain single agent on the same model, no tools."""
    return SubAgent(
        name=f"{original.name}-fallback",
        role="handles a task directly after a specialist failed",
        system_prompt=load_prompt("fallback"),
        tools=(),
        model=original._model or original.model,
        output_type=original.output_type,
        max_turns=max(2, min(original.max_turns, 3)),
        settings=original.settings,
    )


def _with_model(agent: SubAgent, model: Any) -> SubAgent:
    return replace(agent, model=model)


def isolated(value: Any) -> Any:
    """A private copy for one consumer, so parallel branches never share mutable state."""
    try:
        return copy.deepcopy(value)
    except Exception:  # uncopyable objects (locks, clients) are handed over as they are
        return value


__all__ = [
    "FailurePolicy",
    "RunCancelled",
    "RunResult",
    "RunStatus",
    "SubAgentTask",
    "TaskGraph",
    "TaskResult",
    "TaskStatus",
    "generic_fallback_agent",
    "run_graph",
]
