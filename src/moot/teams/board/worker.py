"""The worker: one agent watching one board (the seed's ``monitor_workspace`` loop, made safe).

Each loop: recover expired leases (any worker may; the backend makes it race-safe), look at
pending tasks, ask the agent ``should_handle``, claim, run ``process`` while a heartbeat keeps
the lease alive, then complete or fail. A parent whose subtasks are all done is settled by
:func:`settle_parents`, which every worker runs after finishing a subtask, so no single process
has to stay alive for a breakdown to finish.

Every loop is bounded: ``max_tasks``, ``stop_when_idle``, and a stop on SIGTERM/Ctrl-C that
releases the tasks in hand so nothing waits for a lease to expire.

``stop_when_idle`` (``moot board worker --until-idle``) stops a worker only when no work can
come its way any more:

- a pending task it has not declined, or any task held by a live lease (someone may still split
  it into subtasks for this agent), keeps it working;
- when nothing is pending or active, it stops at once;
- when the only pending tasks are ones it declined (a specialist started before the breakdown
  agent took the goal, or subtasks for another agent type), another worker may still turn them
  into work for it, so it stops only after the board has stood still — no task added, claimed,
  charged or finished — for ``idle_grace_s`` (``--idle-grace``, default 120 s). Every model
  call another agent makes on a goal is charged to it, so a slow model deciding counts as movement.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import random
import signal
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from moot.teams.board.backend import BoardBackend, LeaseLostError, UnknownTaskError
from moot.teams.board.protocol import AWAITING_OWNER, AWAITING_SUBTASKS, BoardAgent, Defer, gathered_result
from moot.teams.board.task import BoardTask, TaskStatus

log = logging.getLogger(__name__)

SCAN_WINDOW = 32
"""How many pending tasks a worker looks at per scan (oldest, highest priority first)."""
IDLE_GRACE_S = 120.0
"""How long the board must stand still, with only declined work left, before ``stop_when_idle`` stops."""


@dataclass
class WorkerStats:
    """What one worker did; ``moot board worker --json`` prints it."""

    worker_id: str
    claimed: int = 0
    completed: int = 0
    failed: int = 0
    parked: int = 0
    lost: int = 0
    """Tasks whose lease was lost before the result could be committed (someone else redoes them)."""
    released: int = 0
    recovered: int = 0
    parents_settled: int = 0
    stop_reason: str = ""
    completed_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class WorkerEvent:
    """One thing a worker did, for a progress display (``moot board worker``'s lines)."""

    kind: str
    """``claimed``, ``completed``, ``failed``, ``retry`` (failed, back to pending), ``parked`` (split
    into subtasks), ``released`` (handed back on stop), ``lost`` (its lease expired), ``recovered``
    (expired tasks put back) or ``settled`` (a parent whose subtasks finished)."""
    task_id: str = ""
    task_type: str = ""
    title: str = ""
    """The task's goal or title, cut to a line."""
    seconds: float | None = None
    """How long the agent worked on it (completed, failed, parked)."""
    detail: str = ""
    """The error of a failure, the count of a recovery, the subtasks of a parked task."""


WorkerListener = Callable[[WorkerEvent], None]


def _title(task: BoardTask) -> str:
    text = " ".join(task.description.split())
    return text[:80] + ("…" if len(text) > 80 else "")


def default_worker_id(agent_type: str) -> str:
    """``<type>-<host>-<pid>-<random>``: unique across machines sharing a board, readable in ls."""
    host = "".join(c if c.isalnum() or c in "-." else "-" for c in socket.gethostname())[:20] or "host"
    return f"{agent_type}-{host}-{os.getpid()}-{uuid.uuid4().hex[:6]}".replace("__", "_")


def settle_parents(board: BoardBackend, parent_ids: list[str] | None = None) -> list[BoardTask]:
    """Complete parked parents whose subtasks all completed (result: :func:`gathered_result`,
    ``{subtask_id: result}`` unless the parent holds a typed plan).

    A parent with a failed subtask fails with the subtask's error. Safe to run from any number
    of workers at once: ``complete`` is exactly-once, the losers get :class:`LeaseLostError`.
    ``parent_ids`` limits the check (and walks up the tree as parents complete); ``None`` checks
    every parked parent.
    """
    settled: list[BoardTask] = []
    queue = list(parent_ids) if parent_ids is not None else [
        t.id for t in board.list(TaskStatus.ACTIVE) if t.claimed_by == AWAITING_OWNER
    ]
    seen: set[str] = set()
    while queue:
        parent_id = queue.pop(0)
        if parent_id in seen:
            continue
        seen.add(parent_id)
        try:
            parent = board.get(parent_id)
        except UnknownTaskError:
            continue
        if parent.status is not TaskStatus.ACTIVE or parent.claimed_by != AWAITING_OWNER or not parent.subtasks:
            continue
        try:
            children = [board.get(sid) for sid in parent.subtasks]
        except UnknownTaskError as exc:
            children = []
            outcome: BoardTask | None = _settle(board, parent, error=f"a subtask is missing: {exc.message}")
        else:
            failed = [c for c in children if c.status is TaskStatus.FAILED]
            if failed:
                outcome = _settle(board, parent, error=f"subtask {failed[0].id} failed: {failed[0].error}")
            elif all(c.status is TaskStatus.COMPLETED for c in children):
                outcome = _settle(board, parent, result=gathered_result(parent, children))
            else:
                outcome = None
        if outcome is not None:
            settled.append(outcome)
            if outcome.parent_id:
                queue.append(outcome.parent_id)
    return settled


def _settle(board: BoardBackend, parent: BoardTask, *, result: Any = None, error: str | None = None) -> BoardTask | None:
    try:
        if error is not None:
            return board.fail(parent.id, AWAITING_OWNER, error)
        return board.complete(parent.id, AWAITING_OWNER, result)
    except LeaseLostError:
        return None  # another worker settled it first


class Worker:
    """Runs one agent against one board until stopped, idle, or ``max_tasks`` were taken."""

    def __init__(
        self,
        board: BoardBackend,
        agent: BoardAgent,
        *,
        worker_id: str | None = None,
        lease_s: float = 30.0,
        heartbeat_s: float | None = None,
        concurrency: int = 1,
        poll_s: float = 0.5,
        max_tasks: int | None = None,
        stop_when_idle: bool = False,
        recover_every_s: float | None = None,
        idle_grace_s: float = IDLE_GRACE_S,
        on_event: WorkerListener | None = None,
    ) -> None:
        """``on_event`` hears each :class:`WorkerEvent` (a display; an exception in it is logged, never
        the worker's)."""
        if lease_s <= 0 or concurrency < 1:
            raise ValueError("lease_s must be > 0 and concurrency >= 1")
        self.board = board
        self.agent = agent
        self.worker_id = worker_id or default_worker_id(agent.agent_type)
        self.lease_s = lease_s
        self.heartbeat_s = heartbeat_s if heartbeat_s is not None else lease_s / 3
        self.concurrency = concurrency
        self.poll_s = poll_s
        self.max_tasks = max_tasks
        self.stop_when_idle = stop_when_idle
        self.idle_grace_s = max(0.0, idle_grace_s)
        self.recover_every_s = recover_every_s if recover_every_s is not None else min(lease_s / 2, 5.0)
        self.stats = WorkerStats(self.worker_id)
        self.on_event = on_event
        self._started_at: dict[str, float] = {}
        self._stop = asyncio.Event()
        self._taken = 0
        self._declined: set[str] = set()
        self._deferred: dict[str, tuple[float, bool]] = {}
        """Tasks the agent said "later" to: when to ask again, and whether it waits on others' work."""
        self._in_hand: dict[str, asyncio.Task[Any]] = {}
        self._last_recover = 0.0
        self._idle_slots = 0
        self._still_since: tuple[str, float] | None = None
        """The board's fingerprint and since when it has not changed (for the idle grace)."""

    def _tell(self, kind: str, task: BoardTask | None = None, *, detail: str = "") -> None:
        if self.on_event is None:
            return
        started = self._started_at.pop(task.id, None) if task is not None and kind not in ("claimed", "settled") else None
        event = WorkerEvent(kind, task.id if task else "", task.type if task else "", _title(task) if task else "",
                            round(time.monotonic() - started, 1) if started is not None else None, detail)
        try:
            self.on_event(event)
        except Exception as exc:  # a display must never stop the work
            log.warning("worker progress display failed: %s", exc)

    @property
    def stopping(self) -> bool:
        """Whether the worker was told to stop (it finishes or releases what it holds)."""
        return self._stop.is_set()

    def stop(self, reason: str = "stopped") -> None:
        """Stop claiming; tasks in hand are cancelled and released back to pending."""
        if not self._stop.is_set():
            self.stats.stop_reason = reason
            self._stop.set()
            for task in self._in_hand.values():
                task.cancel()

    async def run(self, *, handle_signals: bool = False) -> WorkerStats:
        """Work until stopped; with ``handle_signals``, SIGTERM and SIGINT stop it gracefully."""
        loop = asyncio.get_running_loop()
        installed: list[int] = []
        if handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                try:
                    loop.add_signal_handler(sig, self.stop, f"signal {signal.Signals(sig).name}")
                    installed.append(sig)
                except (NotImplementedError, RuntimeError):
                    pass
        try:
            await asyncio.gather(*(self._slot(i) for i in range(self.concurrency)))
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
        if not self.stats.stop_reason:
            self.stats.stop_reason = "stopped"
        return self.stats

    # ------------------------------------------------------------------ the loop

    def _budget_left(self) -> bool:
        return self.max_tasks is None or self._taken < self.max_tasks

    async def _slot(self, index: int) -> None:
        while not self._stop.is_set():
            if not self._budget_left():
                if not self._in_hand:
                    self.stop(f"max_tasks {self.max_tasks} reached")
                return
            await self._maybe_recover()
            task = await self._next_task()
            if task is None:
                idle = await self._board_idle() if self.stop_when_idle else None
                if idle:
                    self.stop(idle)
                    return
                await self._wait(self.poll_s)
                continue
            await self._run_task(task)

    async def _wait(self, seconds: float) -> None:
        """Wait for new work, but wake at once on stop."""
        waiter = asyncio.ensure_future(asyncio.to_thread(self.board.wait_for_work, seconds))
        stopper = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()

    async def _maybe_recover(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_recover < self.recover_every_s:
            return
        self._last_recover = now
        recovered = await asyncio.to_thread(self.board.recover_expired)
        self.stats.recovered += len(recovered)
        failed_parents = [t.parent_id for t in recovered if t.status is TaskStatus.FAILED and t.parent_id]
        if recovered:
            log.info("recovered %d expired task(s): %s", len(recovered), ", ".join(t.id for t in recovered))
            self._tell("recovered", detail=f"{len(recovered)} expired task(s): {', '.join(t.id for t in recovered[:5])}")
        if failed_parents:
            self.stats.parents_settled += len(await asyncio.to_thread(settle_parents, self.board, failed_parents))

    async def _next_task(self) -> BoardTask | None:
        # The first tasks in claim order, at a cost that does not grow with the backlog.
        pending = await asyncio.to_thread(self.board.candidates, SCAN_WINDOW)
        # Shuffle within a priority so N workers don't all race for the same oldest task.
        random.shuffle(pending)
        pending.sort(key=lambda t: -t.priority)
        for candidate in pending:
            if self._stop.is_set() or not self._budget_left():
                return None
            if candidate.id in self._declined:
                continue
            deferred = self._deferred.get(candidate.id)
            if deferred is not None and time.monotonic() < deferred[0]:
                continue
            decision = await self.agent.should_handle(candidate, self.board)
            if isinstance(decision, Defer):
                self._deferred[candidate.id] = (time.monotonic() + max(0.0, decision.seconds), decision.waiting_on_others)
                continue
            self._deferred.pop(candidate.id, None)
            if not decision:
                self._declined.add(candidate.id)
                continue
            claimed = await asyncio.to_thread(self.board.claim, candidate.id, self.worker_id, lease_s=self.lease_s)
            if claimed is not None:
                self._taken += 1
                self.stats.claimed += 1
                self._started_at[claimed.id] = time.monotonic()
                self._tell("claimed", claimed)
                return claimed
        return None

    async def _board_idle(self) -> str | None:
        """Why this worker may stop now, or ``None`` while work may still come its way."""
        await self._maybe_recover(force=True)
        pending = await asyncio.to_thread(self.board.list, TaskStatus.PENDING)
        waiting = {t.id for t in pending}
        self._deferred = {k: v for k, v in self._deferred.items() if k in waiting}  # forget tasks that moved on
        # A task it declined, or one it waits on because another agent's work comes first, is
        # someone else's to move; anything else pending (a task it will take later too) is its own.
        if any(t.id not in self._declined and not self._deferred.get(t.id, (0.0, False))[1] for t in pending):
            return None
        active = await asyncio.to_thread(self.board.list, TaskStatus.ACTIVE)
        working = [t for t in active if t.claimed_by != AWAITING_OWNER]
        if working or self._in_hand:
            self._still_since = None
            return None
        self.stats.parents_settled += len(await asyncio.to_thread(settle_parents, self.board))
        if not pending:
            # The pending and active tasks are two reads: another worker can split its task
            # between them (its subtasks added after the first, the parent parked before the
            # second), and the board looks empty. So the board is read again, and an empty board
            # counts only when both reads agree; any backend, however coarse its change token.
            again = await asyncio.to_thread(self.board.list, TaskStatus.PENDING)
            if again or _fingerprint(active) != _fingerprint(await asyncio.to_thread(self.board.list, TaskStatus.ACTIVE)):
                return None  # it moved while it was read: look again on the next turn
            # Nothing pending, nothing held: what is left parked settles by itself.
            return "idle: nothing pending or active"
        # Only tasks this agent declined are pending. Another agent may take one and split it
        # into subtasks for this one, so wait until the board has stood still for the grace.
        fingerprint = _fingerprint([*pending, *active])
        now = time.monotonic()
        if self._still_since is None or self._still_since[0] != fingerprint:
            self._still_since = (fingerprint, now)
        if now - self._still_since[1] < self.idle_grace_s:
            return None
        return (
            f"idle: only {len(pending)} pending task(s) for other agents, "
            f"unchanged for {self.idle_grace_s:g}s"
        )

    async def _heartbeat(self, task_id: str, work: asyncio.Task[Any]) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await asyncio.to_thread(self.board.heartbeat, task_id, self.worker_id, lease_s=self.lease_s)
            except LeaseLostError:
                log.warning("lost the lease on %s; abandoning it", task_id)
                work.cancel()
                return

    async def _run_task(self, task: BoardTask) -> None:
        work = asyncio.ensure_future(self.agent.process(task, self.board))
        self._in_hand[task.id] = work
        beat = asyncio.ensure_future(self._heartbeat(task.id, work))
        try:
            try:
                result = await work
            finally:
                beat.cancel()
                self._in_hand.pop(task.id, None)
        except asyncio.CancelledError:
            await self._after_cancel(task)
            return
        except Exception as exc:  # the agent's failure is the task's failure, never the worker's
            retry = bool(getattr(exc, "retryable", False))
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            try:
                outcome = await asyncio.to_thread(self.board.fail, task.id, self.worker_id, message, retry=retry)
                self.stats.failed += outcome.status is TaskStatus.FAILED
            except LeaseLostError:
                self.stats.lost += 1
                self._tell("lost", task)
                return
            self._tell("failed" if outcome.status is TaskStatus.FAILED else "retry", task, detail=message)
            settled = []
            if outcome.status is TaskStatus.FAILED and task.parent_id:
                settled = await asyncio.to_thread(settle_parents, self.board, [task.parent_id])
            self._goals_settled([outcome, *settled])
            return
        await self._finish(task, result)

    async def _after_cancel(self, task: BoardTask) -> None:
        """Cancelled by stop() (release the task) or by a lost lease (nothing left to do)."""
        if not self._stop.is_set():
            self.stats.lost += 1
            self._tell("lost", task)
            return
        try:
            await asyncio.to_thread(self.board.release, task.id, self.worker_id)
            self.stats.released += 1
            self._tell("released", task)
        except LeaseLostError:
            self.stats.lost += 1
            self._tell("lost", task)

    async def _finish(self, task: BoardTask, result: Any) -> None:
        try:
            if result is AWAITING_SUBTASKS:
                await asyncio.to_thread(self._park, task.id)
                self.stats.parked += 1
                subtasks = (await asyncio.to_thread(self.board.get, task.id)).subtasks
                self._tell("parked", task, detail=f"{len(subtasks)} subtask(s): {', '.join(subtasks[:6])}")
                settled = await asyncio.to_thread(settle_parents, self.board, [task.id])
            else:
                done = await asyncio.to_thread(self.board.complete, task.id, self.worker_id, result)
                self.stats.completed += 1
                self.stats.completed_ids.append(done.id)
                self._tell("completed", task)
                settled = await asyncio.to_thread(settle_parents, self.board, [task.parent_id]) if task.parent_id else []
                settled = [done, *settled]
            self.stats.parents_settled += len([t for t in settled if t.id != task.id])
            for parent in settled:
                if parent.id != task.id:
                    self._tell("settled", parent, detail=str(parent.status.value))
            self._goals_settled(settled)
        except ValueError as exc:
            try:
                await asyncio.to_thread(self.board.fail, task.id, self.worker_id, str(exc))
                self.stats.failed += 1
                self._tell("failed", task, detail=str(exc))
            except LeaseLostError:
                self.stats.lost += 1
                self._tell("lost", task)
        except LeaseLostError:
            # Recovered while we worked: another worker redoes it; our result is dropped, never doubled.
            log.warning("lease on %s was lost before its result was committed", task.id)
            self.stats.lost += 1
            self._tell("lost", task)

    def _goals_settled(self, tasks: list[BoardTask]) -> None:
        """Tell the agent about root goals that just completed or failed (it closes their parent run)."""
        hook = getattr(self.agent, "goal_settled", None)
        if hook is None:
            return
        for t in tasks:
            if t.parent_id is None and t.status in (TaskStatus.COMPLETED, TaskStatus.FAILED):
                try:
                    hook(t)
                except Exception as exc:  # recording is secondary: never fail a worker over it
                    log.warning("could not close the run of goal %s: %s", t.id, exc)

    def _park(self, task_id: str) -> None:
        """Hand a broken-down parent to its subtasks: no lease, never recovered, settled later."""
        current = self.board.get(task_id)
        if current.claimed_by != self.worker_id or current.status is not TaskStatus.ACTIVE:
            raise LeaseLostError(f"worker {self.worker_id} no longer holds task {task_id}")
        if not current.subtasks:
            raise ValueError(f"agent returned AWAITING_SUBTASKS but task {task_id} has no subtasks")
        self.board.update(current.model_copy(update={"claimed_by": AWAITING_OWNER, "lease_expires_at": None}))


def _fingerprint(tasks: list[BoardTask]) -> str:
    """A digest of the open tasks' state: it changes with every claim, charge, subtask or result."""
    digest = hashlib.sha256()
    for task in sorted(tasks, key=lambda t: t.id):
        digest.update(task.model_dump_json().encode("utf-8"))
    return digest.hexdigest()


def run_worker(board: BoardBackend, agent: BoardAgent, **options: Any) -> WorkerStats:
    """Run a worker to the end in a fresh event loop, with SIGTERM/Ctrl-C handled gracefully."""
    worker = Worker(board, agent, **options)
    return asyncio.run(worker.run(handle_signals=True))


__all__ = ["IDLE_GRACE_S", "SCAN_WINDOW", "Worker", "WorkerEvent", "WorkerListener", "WorkerStats", "default_worker_id", "run_worker", "settle_parents"]
