"""The board's storage contract, implemented by the folder and the PostgreSQL backends.

Agents, workers and the CLI talk only to :class:`BoardBackend`, so the same worker runs on a
shared folder on one machine or on a PostgreSQL database with workers on many machines.

Every method is synchronous and safe to call from several processes at once; workers call them
from a thread when they run inside an event loop. The guarantees every backend must give
(tested against both):

- ``claim`` is atomic: of any number of concurrent claims on one pending task, exactly one wins.
- A task is completed at most once: ``complete`` by a worker that no longer holds the lease
  (it expired and the task was reclaimed) raises :class:`LeaseLostError` and changes nothing.
- Writes are atomic: a crash mid-write leaves the previous state (no half-written task).
- ``recover_expired`` puts active tasks whose lease expired back to pending (``attempts`` kept),
  or to failed once ``attempts`` reached ``max_attempts``. Nothing is ever lost.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, Field

from moot.errors import MootError
from moot.teams.board.task import BoardTask, TaskStatus


class LeaseLostError(MootError):
    """The worker no longer holds the task's lease (it expired and was recovered or reclaimed)."""

    fix = "heartbeat more often than the lease time (moot board worker --lease SECONDS)"


class UnknownTaskError(MootError):
    """No task with that id on the board."""

    fix = "list tasks with `moot board status DIR`"


class AgentSpec(BaseModel):
    """A registered agent type: declarative only (no code), so self-extension is safe.

    Built-in types (``echo``, ``breakdown``, ``search``, ``file``, ``terminal``) and specs drafted
    by the breakdown agent live side by side in the registry.
    """

    name: str
    capabilities: list[str] = Field(default_factory=list)
    instructions: str = ""
    tools: list[str] = Field(default_factory=list)
    """Tool names chosen from the board's allow-list; anything else is rejected on registration."""
    threshold: int = 6
    """Fitness score (1-10) at or above which the agent takes a task."""
    created_by: str = "builtin"
    created_at: float | None = None


class BoardStats(BaseModel):
    """Counts by status, for `moot board status`."""

    pending: int = 0
    active: int = 0
    completed: int = 0
    failed: int = 0
    by_type: dict[str, int] = Field(default_factory=dict)


class BoardBackend(ABC):
    """Storage for one board."""

    location: str
    """The folder path or the database URL (password removed), for messages."""

    @abstractmethod
    def init(self) -> None:
        """Create the board (folders or schema, migrations applied); idempotent."""

    @abstractmethod
    def submit(self, task: BoardTask) -> BoardTask:
        """Add a pending task. A duplicate id raises :class:`moot.errors.MootError`."""

    @abstractmethod
    def get(self, task_id: str) -> BoardTask:
        """The task, wherever it is; raises :class:`UnknownTaskError`."""

    @abstractmethod
    def list(self, status: TaskStatus | None = None, *, limit: int | None = None) -> list[BoardTask]:
        """Tasks (all, or in one status), oldest first (priority first for pending)."""

    @abstractmethod
    def claim(self, task_id: str, worker_id: str, *, lease_s: float) -> BoardTask | None:
        """Atomically move a pending task to active for ``worker_id``; ``None`` if it was taken.

        Increments ``attempts`` and sets ``claimed_by``, ``claimed_at``, ``lease_expires_at``.
        """

    @abstractmethod
    def claim_next(self, worker_id: str, *, lease_s: float, types: list[str] | None = None) -> BoardTask | None:
        """Claim the first pending task (optionally of the given types); ``None`` when none is left."""

    def candidates(self, limit: int) -> list[BoardTask]:
        """The first ``limit`` pending tasks in claim order, for a worker to choose from. Unlike
        :meth:`list` it may be a moment behind (a task in it may be claimed already; the claim
        then fails), and it costs the same however many tasks wait."""
        return self.list(TaskStatus.PENDING, limit=limit)

    @abstractmethod
    def heartbeat(self, task_id: str, worker_id: str, *, lease_s: float) -> None:
        """Extend the lease; raises :class:`LeaseLostError` if the worker no longer holds it."""

    @abstractmethod
    def complete(self, task_id: str, worker_id: str, result: Any) -> BoardTask:
        """Mark completed with ``result`` (atomically; exactly once); raises :class:`LeaseLostError`."""

    @abstractmethod
    def fail(self, task_id: str, worker_id: str | None, error: str, *, retry: bool = False) -> BoardTask:
        """Mark failed with ``error``; with ``retry`` and attempts left, back to pending instead."""

    @abstractmethod
    def release(self, task_id: str, worker_id: str) -> BoardTask:
        """Give a claimed task back to pending without counting a failure (the agent stepped back)."""

    @abstractmethod
    def update(self, task: BoardTask) -> BoardTask:
        """Write fields of a task in place (e.g. its ``subtasks`` list), keeping its status."""

    @abstractmethod
    def recover_expired(self, *, now: float | None = None) -> list[BoardTask]:
        """Return expired active tasks to pending (or failed after max attempts); the recovered tasks."""

    @abstractmethod
    def stats(self) -> BoardStats: ...

    # --- the agent registry (the seed's agents/registry.json)

    @abstractmethod
    def agents(self) -> list[AgentSpec]: ...

    @abstractmethod
    def register_agent(self, spec: AgentSpec) -> AgentSpec:
        """Add or replace a spec (validated by the caller against the tool allow-list)."""

    def version(self) -> str | None:
        """A cheap token that changes whenever a task is added, moved or rewritten (``None``: the
        backend cannot tell, so a watcher reads the board instead). A watcher compares it before
        reading every task, so an idle board costs one look, however large."""
        return None

    # --- waiting for work

    @abstractmethod
    def wait_for_work(self, timeout_s: float) -> None:
        """Block until new work may be there (LISTEN/NOTIFY, or a short poll) or the timeout."""

    def close(self) -> None:
        """Release connections."""


def open_board(location: str) -> BoardBackend:
    """A folder path, or a ``postgresql://`` URL."""
    if location.startswith(("postgresql://", "postgres://")):
        from moot.teams.board.postgres import PostgresBoard

        return PostgresBoard(location)
    from moot.teams.board.folder import FolderBoard

    return FolderBoard(location)


__all__ = [
    "AgentSpec",
    "BoardBackend",
    "BoardStats",
    "LeaseLostError",
    "UnknownTaskError",
    "open_board",
]
