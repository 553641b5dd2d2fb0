"""Who may take a task, decided by rule; the model's fitness only ranks those who may.

The seed let every agent ask its evaluator "can I do this?" and "how well?" and its
metacognition "should I step back?", all by model. On the embedded 0.5B model those yes/no
answers were noise that decided routing: the search agent took a whole goal and answered it
with a restatement, and with ``--requires task_decomposition`` no agent took the goal at all.
Routing is exact information the board already has, so it is decided here, with no model call:

- a task of type ``goal`` is for agents that can break work down (``task_decomposition``);
- a task whose type names an agent type (``file``, ``search``, a registered type) is for that
  type: a typed plan assigns each step its agent;
- a task whose type is a capability is for the agents that have it;
- every stated requirement must be one of the agent's capabilities;
- anything else (``general``, no requirements) is open to every model-driven agent.

The model's fitness score is asked only when more than one agent type may take a task, and it
only *ranks* them: a capable agent claims after a delay that shrinks with its score, and one
whose score is under its threshold still claims after a longer wait, recording its doubt (the
best-scoring of the doubtful claims first). So a task that someone may take is never left untaken.

Stepping back needs evidence Python computed (:func:`dependency_state`, :func:`duplicate_state`,
the goal's budget, the depth limit), never a model's mood.
"""

from __future__ import annotations

from dataclasses import dataclass

from moot.errors import MootError
from moot.teams.board.backend import AgentSpec, BoardBackend, UnknownTaskError
from moot.teams.board.task import BoardTask, TaskStatus

GOAL_TYPE = "goal"
"""The type of a goal a person submits; it goes to the breakdown agent."""
DECOMPOSITION = "task_decomposition"
RANK_STEP_S = 2.0
"""Seconds of claiming delay per fitness point under 10: a 9 claims 2 s before an 8."""
DOUBT_WAIT_S = 30.0
"""How long an agent whose fitness is under its threshold leaves a task to better-fitting agents."""
DEPENDENCY_POLL_S = 0.0
"""How long a task waiting for its dependencies is left alone: 0, it is looked at again on every
scan (one ``get`` per dependency), so it is claimed on the first poll after they are done."""


def may_take(spec: AgentSpec, task: BoardTask, specs: dict[str, AgentSpec]) -> bool:
    """Whether an agent of ``spec`` may take ``task``, by the rules in the module docstring."""
    if not set(task.requirements) <= set(spec.capabilities):
        return False
    if task.type == GOAL_TYPE:
        return DECOMPOSITION in spec.capabilities
    if task.type in specs:
        return spec.name == task.type
    if any(task.type in s.capabilities for s in specs.values()):
        return task.type in spec.capabilities
    return True


def capable_types(task: BoardTask, specs: dict[str, AgentSpec]) -> list[str]:
    """Every agent type that may take ``task`` (the ones fitness would rank)."""
    return [name for name, spec in specs.items() if may_take(spec, task, specs)]


def claim_delay(score: int, threshold: int, *, rank_step_s: float = RANK_STEP_S,
                doubt_wait_s: float = DOUBT_WAIT_S) -> tuple[float, str | None]:
    """How long to wait before claiming, for a fitness ``score``, and the doubt to record (if any).

    Under the threshold the agent waits :data:`DOUBT_WAIT_S` more, so any agent that wants the
    task claims first; among doubtful agents the better score still claims sooner."""
    delay = max(0, 10 - score) * rank_step_s
    if score >= threshold:
        return delay, None
    return doubt_wait_s + delay, (f"fitness {score}/10 is under this agent's threshold {threshold}; "
                                  "no better-fitting agent took it")


@dataclass(frozen=True)
class Dependencies:
    """Where a task's dependencies (``context.step.after``) stand."""

    waiting: list[str]
    failed: list[tuple[str, str]]
    """``(task id, error)`` of each failed dependency."""


def step_of(task: BoardTask) -> dict[str, object]:
    """The typed plan step a task carries (``context.step``), or ``{}``."""
    step = task.context.get("step")
    return step if isinstance(step, dict) else {}


def dependency_ids(task: BoardTask) -> list[str]:
    after = step_of(task).get("after") or []
    return [str(a) for a in after] if isinstance(after, list) else []


def dependency_state(task: BoardTask, board: BoardBackend) -> Dependencies:
    """Which of the task's dependencies are still open or have failed (a missing one has failed)."""
    waiting: list[str] = []
    failed: list[tuple[str, str]] = []
    for dep_id in dependency_ids(task):
        try:
            dep = board.get(dep_id)
        except UnknownTaskError:
            failed.append((dep_id, "it is not on the board"))
            continue
        except MootError as exc:
            failed.append((dep_id, exc.one_line()))
            continue
        if dep.status is TaskStatus.FAILED:
            failed.append((dep_id, dep.error or "failed"))
        elif dep.status is not TaskStatus.COMPLETED:
            waiting.append(dep_id)
    return Dependencies(waiting, failed)


def duplicate_state(task: BoardTask, board: BoardBackend) -> tuple[str, BoardTask | None]:
    """For a task marked ``context.duplicate_of``: ``("done", original)``, ``("open", original)``
    while the original runs, or ``("redo", None)`` when it failed, vanished or there is none."""
    original_id = task.context.get("duplicate_of")
    if not isinstance(original_id, str) or original_id == task.id:
        return "redo", None
    try:
        original = board.get(original_id)
    except MootError:
        return "redo", None
    if original.status is TaskStatus.COMPLETED:
        return "done", original
    if original.status is TaskStatus.FAILED:
        return "redo", None
    return "open", original


__all__ = [
    "DECOMPOSITION",
    "DEPENDENCY_POLL_S",
    "DOUBT_WAIT_S",
    "Dependencies",
    "GOAL_TYPE",
    "RANK_STEP_S",
    "capable_types",
    "claim_delay",
    "dependency_ids",
    "dependency_state",
    "duplicate_state",
    "may_take",
    "step_of",
]
