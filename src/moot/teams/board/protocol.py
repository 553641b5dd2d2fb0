"""The agent side of the board: the minimal protocol every board agent implements.

Workers (``moot.teams.board.worker``) only ever see this protocol, so the built-in ``echo``
agent, the model-driven agents (``moot.teams.board.agents``) and a user's own class are
interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

if TYPE_CHECKING:
    from moot.teams.board.backend import BoardBackend
    from moot.teams.board.task import BoardTask


class _AwaitingSubtasks:
    """Sentinel type: ``process`` broke the task down and the parent must wait for its subtasks."""

    _instance: _AwaitingSubtasks | None = None

    def __new__(cls) -> _AwaitingSubtasks:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "AWAITING_SUBTASKS"


AWAITING_SUBTASKS: Final = _AwaitingSubtasks()
"""Return this from ``process`` after ``board.submit``-ing subtasks and ``board.update``-ing the
task's ``subtasks`` list: the worker then parks the parent instead of completing it, and the
parent completes (with ``{subtask_id: result}``) once every subtask has completed."""

AWAITING_OWNER: Final = "awaiting-subtasks"
"""The ``claimed_by`` of a parked parent. A parked parent is ACTIVE with ``lease_expires_at``
None: no worker holds it, so it is never recovered; :func:`moot.teams.board.worker.settle_parents`
completes (or fails) it with ``worker_id=AWAITING_OWNER`` when its subtasks are done."""


@dataclass(frozen=True)
class Defer:
    """``should_handle``'s "not yet": ask again after ``seconds``; false in a boolean test.

    An agent defers a task it may take but not now: its dependencies are still running
    (``waiting_on_others``), or a better-fitting agent should get the first chance (the
    model's fitness ranks agents by how long each waits before claiming). A worker does not
    count a deferred task as declined: it asks again, so a task is never left untaken because
    it was not ready when first seen.
    """

    seconds: float
    reason: str = ""
    waiting_on_others: bool = False
    """Waiting for other agents' work (dependencies): the idle grace applies, as for declined tasks."""

    def __bool__(self) -> bool:
        return False


@runtime_checkable
class BoardAgent(Protocol):
    """What a worker needs from an agent."""

    agent_type: str
    """The registry name (``echo``, ``breakdown`` …); also the prefix of worker ids."""
    capabilities: list[str]
    """Matched against a task's ``requirements``."""

    async def should_handle(self, task: BoardTask, board: BoardBackend) -> bool | Defer:
        """Whether to claim ``task`` now (rules first; a model may rank); :class:`Defer` for "later"."""
        ...

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        """Do the work and return a JSON-serialisable result, or :data:`AWAITING_SUBTASKS`.

        Raising fails the task with the exception's message (retried when the exception has
        ``retryable = True`` and attempts are left).
        """
        ...


def result_text(result: Any) -> str:
    """The text of a task's result: an agent's ``output``, a gathered goal's ``answer``, or the value as JSON."""
    if isinstance(result, dict):
        for key in ("answer", "output"):
            if isinstance(result.get(key), str):
                return str(result[key])
    if isinstance(result, str):
        return result
    import json

    return json.dumps(result, ensure_ascii=False, default=str)


def gathered_result(parent: BoardTask, children: list[BoardTask]) -> Any:
    """A settled parent's result.

    A typed plan (``context.plan``) gives ``{"answer", "steps", "read"}``: the answer is the final
    step's output (the step that received the others' results), else every step's output in plan
    order; ``read`` lists the files its steps read. Any other breakdown keeps ``{subtask_id: result}``.
    """
    steps = {c.id: c.result for c in children}
    if not isinstance(parent.context.get("plan"), list):
        return steps
    final = parent.context.get("final_step")
    if isinstance(final, str) and final in steps:
        answer = result_text(steps[final])
    else:
        answer = "\n\n".join(result_text(steps[c.id]) for c in children)
    read: list[str] = []
    for child in children:
        if isinstance(child.result, dict):
            read.extend(p for p in child.result.get("read") or [] if p not in read)
    return {"answer": answer, "steps": steps, "read": read}


__all__ = ["AWAITING_OWNER", "AWAITING_SUBTASKS", "BoardAgent", "Defer", "gathered_result", "result_text"]
