"""The guarantees every board backend must give, as plain test functions taking a ``board``.

Not collected on its own (no ``test_`` file name). A backend's test module imports them and
provides a ``board`` fixture (an initialised, empty board)::

    from board_contract import *  # noqa: F401,F403

Process tests reopen the board in child processes with ``open_board(board.location)``, so the
location must be reopenable (a folder path, or a ``postgresql://`` URL).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import signal
import threading
import time
from typing import Any

import pytest

from moot.errors import MootError
from moot.teams.board import AgentSpec, BoardTask, InvalidTaskError, LeaseLostError, TaskStatus, open_board, parse_task
from moot.teams.board.echo import EchoAgent
from moot.teams.board.protocol import AWAITING_OWNER
from moot.teams.board.worker import Worker, settle_parents

_ctx = mp.get_context("fork")


def wait_until(predicate: Any, timeout: float = 30.0, every: float = 0.05) -> Any:
    """Poll instead of timing: generous overall timeout, no assertion on how long it took."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError("condition not reached in time")


# ---------------------------------------------------------------------------- basics


def test_submit_get_and_list(board: Any) -> None:
    task = board.submit(BoardTask(id="t-1", description="find things", type="research", requirements=["web_search"]))
    got = board.get("t-1")
    assert got.description == "find things" and got.status is TaskStatus.PENDING and got.attempts == 0
    assert task.root_id == "t-1"
    assert [t.id for t in board.list(TaskStatus.PENDING)] == ["t-1"]
    assert board.stats().pending == 1


def test_path_character_ids_are_rejected(board: Any) -> None:
    for bad in ("../escape", "a/b", "..", "x\\y", ""):
        with pytest.raises((InvalidTaskError, MootError)):
            board.submit(BoardTask.model_construct(id=bad, description="x"))  # skips the model's own check
        with pytest.raises(InvalidTaskError, match="not allowed|id"):
            parse_task({"id": bad, "description": "x"})
    assert board.list() == []


def test_duplicate_id_is_rejected(board: Any) -> None:
    board.submit(BoardTask(id="dup", description="one"))
    with pytest.raises(MootError, match="already"):
        board.submit(BoardTask(id="dup", description="two"))
    assert board.get("dup").description == "one"


def test_pending_order_puts_priority_first(board: Any) -> None:
    board.submit(BoardTask(id="low", description="low"))
    board.submit(BoardTask(id="high", description="high", priority=5))
    assert board.claim_next("w1", lease_s=30).id == "high"
    assert board.claim_next("w1", lease_s=30).id == "low"
    assert board.claim_next("w1", lease_s=30) is None


# ---------------------------------------------------------------------------- claiming


def test_claim_sets_lease_and_attempts(board: Any) -> None:
    board.submit(BoardTask(id="c1", description="x"))
    before = time.time()
    task = board.claim("c1", "w1", lease_s=30)
    assert task is not None and task.status is TaskStatus.ACTIVE
    assert task.claimed_by == "w1" and task.attempts == 1 and task.lease_expires_at >= before + 29
    assert board.claim("c1", "w2", lease_s=30) is None
    assert board.get("c1").claimed_by == "w1"


def test_claim_race_threads_exactly_one_wins(board: Any) -> None:
    board.submit(BoardTask(id="race", description="x"))
    barrier = threading.Barrier(16)
    wins: list[str] = []

    def claim(i: int) -> None:
        mine = open_board(board.location)
        barrier.wait()
        if mine.claim("race", f"w{i}", lease_s=30) is not None:
            wins.append(f"w{i}")

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert board.get("race").claimed_by == wins[0]


def _claim_in_process(location: str, worker: str, barrier: Any, queue: Any) -> None:
    mine = open_board(location)
    barrier.wait()
    queue.put((worker, mine.claim("race", worker, lease_s=30) is not None))


def test_claim_race_processes_exactly_one_wins(board: Any) -> None:
    board.submit(BoardTask(id="race", description="x"))
    barrier, queue = _ctx.Barrier(8), _ctx.Queue()
    procs = [_ctx.Process(target=_claim_in_process, args=(board.location, f"p{i}", barrier, queue)) for i in range(8)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    winners = [w for w, won in results if won]
    assert len(winners) == 1
    task = board.get("race")
    assert task.claimed_by == winners[0] and task.attempts == 1


# ---------------------------------------------------------------------------- leases


def test_completing_after_the_lease_was_recovered_raises(board: Any) -> None:
    board.submit(BoardTask(id="l1", description="x"))
    board.claim("l1", "w1", lease_s=30)
    recovered = board.recover_expired(now=time.time() + 60)
    assert [t.id for t in recovered] == ["l1"]
    assert board.get("l1").status is TaskStatus.PENDING
    assert board.claim("l1", "w2", lease_s=30).attempts == 2
    with pytest.raises(LeaseLostError):
        board.complete("l1", "w1", {"late": True})
    with pytest.raises(LeaseLostError):
        board.heartbeat("l1", "w1", lease_s=30)
    done = board.complete("l1", "w2", {"ok": 1})
    assert done.status is TaskStatus.COMPLETED and done.result == {"ok": 1} and done.attempts == 2
    with pytest.raises(LeaseLostError):
        board.complete("l1", "w2", {"again": 1})
    assert board.get("l1").result == {"ok": 1}


def test_heartbeat_keeps_the_lease(board: Any) -> None:
    board.submit(BoardTask(id="hb", description="x"))
    board.claim("hb", "w1", lease_s=1)
    board.heartbeat("hb", "w1", lease_s=120)
    assert board.recover_expired(now=time.time() + 60) == []
    assert board.get("hb").lease_expires_at > time.time() + 100


def test_max_attempts_then_failed(board: Any) -> None:
    board.submit(BoardTask(id="m1", description="x", max_attempts=2))
    for worker in ("w1", "w2"):
        assert board.claim("m1", worker, lease_s=1) is not None
        board.recover_expired(now=time.time() + 60)
    task = board.get("m1")
    assert task.status is TaskStatus.FAILED and task.attempts == 2 and "expired" in task.error


def test_fail_with_retry_goes_back_to_pending(board: Any) -> None:
    board.submit(BoardTask(id="f1", description="x", max_attempts=2))
    board.claim("f1", "w1", lease_s=30)
    assert board.fail("f1", "w1", "flaky", retry=True).status is TaskStatus.PENDING
    assert board.get("f1").error == "flaky"
    board.claim("f1", "w1", lease_s=30)
    assert board.fail("f1", "w1", "flaky again", retry=True).status is TaskStatus.FAILED
    assert board.get("f1").error == "flaky again"


def test_release_does_not_count_an_attempt(board: Any) -> None:
    board.submit(BoardTask(id="r1", description="x"))
    board.claim("r1", "w1", lease_s=30)
    released = board.release("r1", "w1")
    assert released.status is TaskStatus.PENDING and board.get("r1").attempts == 0


# ---------------------------------------------------------------------------- parents


def _park_parent_with_children(board: Any, n: int = 3) -> list[str]:
    board.submit(BoardTask(id="parent", description="big goal"))
    parent = board.claim("parent", "w1", lease_s=30)
    kids = [board.submit(BoardTask(id=f"kid{i}", description=f"part {i}", parent_id="parent", depth=1)).id for i in range(n)]
    board.update(parent.model_copy(update={"subtasks": kids}))
    board.update(board.get("parent").model_copy(update={"claimed_by": AWAITING_OWNER, "lease_expires_at": None}))
    return kids


def test_parent_completes_with_gathered_subtask_results(board: Any) -> None:
    kids = _park_parent_with_children(board)
    parked = board.get("parent")
    assert parked.status is TaskStatus.ACTIVE and parked.claimed_by == AWAITING_OWNER
    assert board.recover_expired(now=time.time() + 3600) == []  # a parked parent holds no lease
    for kid in kids[:-1]:
        board.claim(kid, "w2", lease_s=30)
        board.complete(kid, "w2", {"part": kid})
    assert settle_parents(board) == [] and board.get("parent").status is TaskStatus.ACTIVE
    board.claim(kids[-1], "w2", lease_s=30)
    board.complete(kids[-1], "w2", {"part": kids[-1]})
    settle_parents(board, ["parent"])
    settled_twice = settle_parents(board, ["parent"])
    parent = board.get("parent")
    assert parent.status is TaskStatus.COMPLETED and settled_twice == []
    assert parent.result == {k: {"part": k} for k in kids}


def test_parent_fails_when_a_subtask_fails(board: Any) -> None:
    kids = _park_parent_with_children(board, 2)
    board.claim(kids[0], "w2", lease_s=30)
    board.fail(kids[0], "w2", "no such thing")
    settle_parents(board)
    parent = board.get("parent")
    assert parent.status is TaskStatus.FAILED and "no such thing" in parent.error


# ---------------------------------------------------------------------------- registry


def test_registry_has_builtins_and_accepts_new_specs(board: Any) -> None:
    assert "echo" in {s.name for s in board.agents()}
    board.register_agent(AgentSpec(name="summarizer", capabilities=["summaries"], created_by="test"))
    board.register_agent(AgentSpec(name="summarizer", capabilities=["summaries", "tables"], created_by="test"))
    specs = {s.name: s for s in board.agents()}
    assert specs["summarizer"].capabilities == ["summaries", "tables"] and "echo" in specs


# ---------------------------------------------------------------------------- workers in processes


def _echo_worker(location: str, queue: Any, lease_s: float, delay_s: float) -> None:
    board = open_board(location)
    worker = Worker(board, EchoAgent(delay_s=delay_s), lease_s=lease_s, poll_s=0.05, stop_when_idle=True)
    stats = asyncio.run(worker.run())
    queue.put((worker.worker_id, stats.completed_ids))


def test_four_worker_processes_complete_every_task_exactly_once(board: Any) -> None:
    ids = [board.submit(BoardTask(id=f"job{i:03d}", description=f"job {i}")).id for i in range(200)]
    queue = _ctx.Queue()
    procs = [_ctx.Process(target=_echo_worker, args=(board.location, queue, 30.0, 0.0)) for _ in range(4)]
    for p in procs:
        p.start()
    reports = [queue.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    completed_by_workers = [tid for _, done in reports for tid in done]
    assert sorted(completed_by_workers) == sorted(ids)  # every task once, none twice
    completed = board.list(TaskStatus.COMPLETED)
    assert sorted(t.id for t in completed) == sorted(ids)
    workers = {w for w, _ in reports}
    for task in completed:
        assert task.attempts == 1 and task.claimed_by in workers and task.result == {"echo": task.description}
    assert board.stats().pending == board.stats().active == board.stats().failed == 0


def test_killed_worker_task_is_recovered_and_completed(board: Any) -> None:
    board.submit(BoardTask(id="victim", description="survive a kill -9"))
    queue = _ctx.Queue()
    doomed = _ctx.Process(target=_echo_worker, args=(board.location, queue, 1.0, 3600.0))
    doomed.start()
    holder = wait_until(lambda: board.get("victim").claimed_by if board.get("victim").status is TaskStatus.ACTIVE else None)
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.join(timeout=30)
    rescuer = Worker(open_board(board.location), EchoAgent(), lease_s=5, poll_s=0.05, stop_when_idle=True)
    stats = asyncio.run(rescuer.run())
    task = board.get("victim")
    assert task.status is TaskStatus.COMPLETED and task.attempts == 2
    assert task.claimed_by == rescuer.worker_id != holder and stats.completed_ids == ["victim"]


__all__ = [name for name in dir() if name.startswith("test_")] + ["wait_until"]
