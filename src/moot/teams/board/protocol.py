"""The agent side of the board: the minimal protocol every board agent implements.

Workers (``moot.teams.board.worker``) only ever see this protocol, so the built-in ``echo``
agent, the model-driven agents (``moot.teams.board.agents``) and a user's own class are
interchangeable.
"""

from __future__ import annotations

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


@runtime_checkable
class BoardAgent(Protocol):
    """What a worker needs from an agent."""

    agent_type: str
    """The registry name (``echo``, ``breakdown`` …); also the prefix of worker ids."""
    capabilities: list[str]
    """Matched against a task's ``requirements``."""

    async def should_handle(self, task: BoardTask, board: BoardBackend) -> bool:
        """Whether to claim ``task`` (cheap checks first; a model may be asked)."""
        ...

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        """Do the work and return a JSON-serialisable result, or :data:`AWAITING_SUBTASKS`.

        Raising fails the task with the exception's message (retried when the exception has
        ``retryable = True`` and attempts are left).
        """
        ...


__all__ = ["AWAITING_OWNER", "AWAITING_SUBTASKS", "BoardAgent"]
