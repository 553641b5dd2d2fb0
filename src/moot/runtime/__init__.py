"""The shared runtime: tools, sub-agents, task graphs, budgets, events and the run store.

Define agents and a graph in a few lines::

    from moot.runtime import SubAgent, SubAgentTask, TaskGraph, Budget, RunStore

    a = SubAgent("pros", "lists advantages", "List three advantages, one per line.")
    b = SubAgent("cons", "lists drawbacks", "List three drawbacks, one per line.")
    c = SubAgent("judge", "weighs both", "Weigh the results and give a verdict.")
    graph = TaskGraph([a, b, c], [
        SubAgentTask("pros", "Remote work"),
        SubAgentTask("cons", "Remote work"),
        SubAgentTask("judge", "Is remote work a good idea?", depends_on=["pros", "cons"]),
    ])
    result = graph.run_sync(budget=Budget.preset("quick"), store=RunStore())

Every way of running agents goes through one lifecycle, :class:`Run` (record, events, spans,
budget, cancellation): a task graph is a run around one graph; a pipeline sequenced by code
calls ``run.step(...)`` and ``run.graph(...)`` on one run.
"""

from __future__ import annotations

from moot.runtime.agent import AgentProgress, AgentResult, SubAgent, render_context
from moot.runtime.budget import PRESETS, Budget, BudgetExceeded, BudgetTracker
from moot.runtime.events import BoundEmitter, Event, EventBus, EventType
from moot.runtime.graph import (
    FailurePolicy,
    RunCancelled,
    RunResult,
    RunStatus,
    SubAgentTask,
    TaskGraph,
    TaskResult,
    TaskStatus,
    run_graph,
)
from moot.runtime.prompts import load_prompt
from moot.runtime.run import RecordedRun, Run
from moot.runtime.reducers import ReducerConflict, collect, concat_text, merge_dicts_strict, merge_lists
from moot.runtime.store import RunRecord, RunStore
from moot.runtime.tools import Tool, tool

__all__ = [
    "PRESETS",
    "RecordedRun",
    "AgentProgress",
    "AgentResult",
    "BoundEmitter",
    "Budget",
    "BudgetExceeded",
    "BudgetTracker",
    "Event",
    "EventBus",
    "EventType",
    "FailurePolicy",
    "ReducerConflict",
    "RunCancelled",
    "RunRecord",
    "Run",
    "RunResult",
    "RunStatus",
    "RunStore",
    "SubAgent",
    "SubAgentTask",
    "TaskGraph",
    "TaskResult",
    "TaskStatus",
    "Tool",
    "collect",
    "concat_text",
    "load_prompt",
    "merge_dicts_strict",
    "merge_lists",
    "render_context",
    "run_graph",
    "tool",
]
