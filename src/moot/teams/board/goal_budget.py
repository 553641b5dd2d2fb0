"""A budget per root goal: the most model calls and tasks one goal may cost, with a readable stop.

Loops in peer systems run away because nothing owns the total. Here every task carries its
root goal's id, and the **root task's context** holds the limits and what has been spent:

```json
"context": {"budget": {"max_model_calls": 80, "max_tasks": 25},
            "budget_used": {"model_calls": 12, "tasks": 4}}
```

Why the root task and not a side file: it works the same on every backend (folder or
PostgreSQL), it is visible in ``moot board show`` and it disappears with the goal. The
price is that counting is a read-modify-write through :meth:`BoardBackend.update`: two workers
charging at the same instant may lose one increment, so the limit can be overshot by a few
calls per concurrent worker — never without bound, since every check re-reads the root.

A user sets the limits when submitting (``context.budget``); otherwise :data:`DEFAULT_LIMITS`.

Model calls are **reserved before** an agent call (:func:`reserve_calls`: as many as the call
may make, at most what the goal has left) and the unused part is handed back afterwards
(:func:`release_calls`). The agent call runs under a budget of exactly the calls it was
granted, so a multi-turn call can never take the goal past its limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from moot.errors import MootError
from moot.teams.board.backend import BoardBackend, UnknownTaskError
from moot.teams.board.task import BoardTask

DEFAULT_MAX_MODEL_CALLS = 80
DEFAULT_MAX_TASKS = 25


class GoalBudgetExceeded(MootError):
    """The root goal has spent its model calls or tasks; no new work is started for it."""

    fix = "submit the goal again with a larger budget (moot board submit --budget deep, or context.budget)"
    exit_code = 1  # the work stopped short: a runtime failure, not a usage mistake


@dataclass(frozen=True)
class GoalBudget:
    """Limits and spending of one root goal."""

    root_id: str
    max_model_calls: int
    max_tasks: int
    model_calls: int
    tasks: int

    def exceeded(self, *, new_tasks: int = 0) -> str | None:
        """A sentence when a limit is reached (or would be by ``new_tasks`` more), else ``None``."""
        if self.model_calls >= self.max_model_calls:
            return (
                f"the goal's budget of {self.max_model_calls} model calls is spent "
                f"({self.model_calls} used); no new work is started for goal {self.root_id}"
            )
        if new_tasks and self.tasks + new_tasks > self.max_tasks:
            return (
                f"the goal's budget of {self.max_tasks} tasks would be exceeded "
                f"({self.tasks} created, {new_tasks} more proposed); no more subtasks for goal {self.root_id}"
            )
        return None


def root_of(board: BoardBackend, task: BoardTask) -> BoardTask:
    """The root task of ``task`` (itself for a root, or when the root was removed)."""
    root_id = task.root_id or task.id
    if root_id == task.id:
        try:
            return board.get(task.id)
        except UnknownTaskError:
            return task
    try:
        return board.get(root_id)
    except UnknownTaskError:
        return task


def read_budget(board: BoardBackend, task: BoardTask) -> GoalBudget:
    root = root_of(board, task)
    limits = root.context.get("budget") or {}
    used = root.context.get("budget_used") or {}
    return GoalBudget(
        root_id=root.id,
        max_model_calls=int(limits.get("max_model_calls", DEFAULT_MAX_MODEL_CALLS)),
        max_tasks=int(limits.get("max_tasks", DEFAULT_MAX_TASKS)),
        model_calls=int(used.get("model_calls", 0)),
        tasks=int(used.get("tasks", 0)),
    )


def check_budget(board: BoardBackend, task: BoardTask, *, new_tasks: int = 0) -> None:
    """Raise :class:`GoalBudgetExceeded` when the goal cannot afford more work."""
    reason = read_budget(board, task).exceeded(new_tasks=new_tasks)
    if reason:
        raise GoalBudgetExceeded(reason)


def charge(board: BoardBackend, task: BoardTask, *, model_calls: int = 0, tasks: int = 0) -> GoalBudget:
    """Add spending to the root goal's counters (best effort under concurrency, see the module doc)."""
    root = root_of(board, task)
    if not model_calls and not tasks:
        return read_budget(board, root)
    used = dict(root.context.get("budget_used") or {})
    used["model_calls"] = int(used.get("model_calls", 0)) + model_calls
    used["tasks"] = int(used.get("tasks", 0)) + tasks
    context = {**root.context, "budget_used": used}
    try:
        board.update(root.model_copy(update={"context": context}))
    except MootError:
        pass  # the root was removed, or claimed/expired mid-write: counting is best effort
    return read_budget(board, root)


def reserve_calls(board: BoardBackend, task: BoardTask, wanted: int) -> int:
    """Hold up to ``wanted`` of the goal's model calls before an agent call; how many were granted.

    Raises :class:`GoalBudgetExceeded` when the goal has none left.
    """
    budget = read_budget(board, task)
    left = budget.max_model_calls - budget.model_calls
    if left <= 0:
        raise GoalBudgetExceeded(budget.exceeded() or f"the goal's budget of {budget.max_model_calls} model calls is spent")
    granted = max(1, min(wanted, left))
    charge(board, task, model_calls=granted)
    return granted


def release_calls(board: BoardBackend, task: BoardTask, unused: int) -> None:
    """Hand back the reserved calls an agent call did not make."""
    if unused > 0:
        charge(board, task, model_calls=-unused)


__all__ = [
    "DEFAULT_MAX_MODEL_CALLS",
    "DEFAULT_MAX_TASKS",
    "GoalBudget",
    "GoalBudgetExceeded",
    "charge",
    "check_budget",
    "read_budget",
    "release_calls",
    "reserve_calls",
    "root_of",
]
