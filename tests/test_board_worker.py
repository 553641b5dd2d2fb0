"""The worker loop: breakdown and parent completion, failures, declines, malformed files, stop."""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from board_contract import wait_until
from moot.errors import ModelTimeoutError
from moot.teams.board import BoardTask, TaskStatus
from moot.teams.board.echo import EchoAgent
from moot.teams.board.folder import FolderBoard
from moot.teams.board.protocol import AWAITING_SUBTASKS, BoardAgent
from moot.teams.board.worker import Worker


@pytest.fixture
def board(tmp_path: Path) -> FolderBoard:
    b = FolderBoard(tmp_path / "ws")
    b.init()
    return b


def work(board: FolderBoard, agent: Any, **options: Any) -> Worker:
    worker = Worker(board, agent, poll_s=0.02, stop_when_idle=True, **{"idle_grace_s": 0.2, **options})
    asyncio.run(worker.run())
    return worker


class SplitAgent(EchoAgent):
    """Breaks a 'goal' into three parts (a nested one for 'deep goal'); echoes everything else."""

    agent_type = "split"

    async def process(self, task: BoardTask, board: Any) -> Any:
        if task.type != "goal":
            return await super().process(task, board)
        parts = []
        for i in range(3):
            nested = task.description == "deep goal" and i == 0
            sub = BoardTask(id=f"{task.id}-{i}", description=f"{task.description} part {i}",
                            type="goal" if nested else "step", parent_id=task.id, depth=task.depth + 1)
            if nested:
                sub.description = "leaf goal"
            parts.append(board.submit(sub).id)
        board.update(board.get(task.id).model_copy(update={"subtasks": parts}))
        return AWAITING_SUBTASKS


def test_echo_agent_satisfies_the_protocol() -> None:
    assert isinstance(EchoAgent(), BoardAgent)


def test_parent_completes_with_its_subtasks_results(board: FolderBoard) -> None:
    board.submit(BoardTask(id="g", description="deep goal", type="goal"))
    worker = work(board, SplitAgent(), concurrency=2)
    parent = board.get("g")
    assert parent.status is TaskStatus.COMPLETED
    assert set(parent.result) == {"g-0", "g-1", "g-2"}
    assert parent.result["g-1"] == {"echo": "deep goal part 1"}
    assert set(parent.result["g-0"]) == {"g-0-0", "g-0-1", "g-0-2"}  # the nested breakdown, gathered too
    assert worker.stats.parked == 2 and json.loads((board.root / "results" / "g.json").read_text())["result"]
    assert board.stats().active == 0


class Boom(EchoAgent):
    async def process(self, task: BoardTask, board: Any) -> Any:
        if "boom" in task.description:
            raise RuntimeError("the tool broke")
        if "flaky" in task.description:
            raise ModelTimeoutError("model timed out")
        return await super().process(task, board)


def test_agent_errors_fail_the_task_not_the_worker(board: FolderBoard) -> None:
    board.submit(BoardTask(id="b1", description="boom"))
    board.submit(BoardTask(id="f1", description="flaky", max_attempts=2))
    board.submit(BoardTask(id="ok", description="fine"))
    worker = work(board, Boom())
    assert board.get("b1").status is TaskStatus.FAILED and "the tool broke" in board.get("b1").error
    flaky = board.get("f1")  # retryable: tried again until attempts ran out
    assert flaky.status is TaskStatus.FAILED and flaky.attempts == 2
    assert board.get("ok").status is TaskStatus.COMPLETED and worker.stats.completed == 1


def test_the_worker_tells_its_display_what_it_did_to_each_task(board: FolderBoard) -> None:
    from moot.cli.board_cmd import worker_line
    from moot.teams.board.worker import WorkerEvent

    board.submit(BoardTask(id="g", description="deep goal", type="goal"))
    board.submit(BoardTask(id="b1", description="boom"))
    board.submit(BoardTask(id="f1", description="flaky", max_attempts=2))
    heard: list[WorkerEvent] = []

    class SplitBoom(SplitAgent, Boom):
        pass

    work(board, SplitBoom(), on_event=heard.append)
    by_task: dict[str, list[str]] = {}
    for e in heard:
        by_task.setdefault(e.task_id, []).append(e.kind)
    assert by_task["b1"] == ["claimed", "failed"]
    assert by_task["f1"] == ["claimed", "retry", "claimed", "failed"]  # retryable: back to pending once
    assert by_task["g"] == ["claimed", "parked", "settled"] and by_task["g-1"] == ["claimed", "completed"]
    failed = next(e for e in heard if e.task_id == "b1" and e.kind == "failed")
    assert failed.seconds is not None and "the tool broke" in failed.detail
    parked = next(e for e in heard if e.task_id == "g" and e.kind == "parked")
    assert parked.detail.startswith("3 subtask(s): g-0, g-1, g-2") and parked.title == "deep goal"
    assert worker_line(failed).startswith("b1 (general): failed in ") and worker_line(failed).endswith("the tool broke")


def test_a_broken_display_never_stops_the_worker(board: FolderBoard) -> None:
    board.submit(BoardTask(id="ok", description="fine"))

    def broken(event: Any) -> None:
        raise RuntimeError("the terminal went away")

    worker = work(board, EchoAgent(), on_event=broken)
    assert worker.stats.completed == 1 and board.get("ok").status is TaskStatus.COMPLETED


class Picky(EchoAgent):
    async def should_handle(self, task: BoardTask, board: Any) -> bool:
        return "web_search" not in task.requirements


def test_declined_tasks_stay_pending_for_another_agent(board: FolderBoard) -> None:
    board.submit(BoardTask(id="mine", description="x"))
    board.submit(BoardTask(id="theirs", description="y", requirements=["web_search"]))
    worker = work(board, Picky())
    assert board.get("mine").status is TaskStatus.COMPLETED
    assert board.get("theirs").status is TaskStatus.PENDING and board.get("theirs").attempts == 0
    assert worker.stats.stop_reason.startswith("idle")


def test_malformed_files_never_stop_a_worker(board: FolderBoard) -> None:
    pending = board.dirs[TaskStatus.PENDING]
    for name, content in (("junk.json", "{{{"), ("evil.json", '{"id": "../../etc", "description": "x"}')):
        (pending / name).write_text(content)
        os.utime(pending / name, (time.time() - 10, time.time() - 10))
    for i in range(5):
        board.submit(BoardTask(id=f"ok{i}", description=f"ok {i}"))
    worker = work(board, EchoAgent())
    assert worker.stats.completed == 5
    failed = board.list(TaskStatus.FAILED)
    assert {t.type for t in failed} == {"invalid"} and len(failed) == 2


def test_max_tasks_stops_the_worker(board: FolderBoard) -> None:
    for i in range(4):
        board.submit(BoardTask(id=f"t{i}", description="x"))
    worker = Worker(board, EchoAgent(), poll_s=0.02, max_tasks=3)
    asyncio.run(worker.run())
    assert worker.stats.completed == 3 and board.stats().pending == 1 and "max_tasks" in worker.stats.stop_reason


def _slow_worker(location: str) -> None:
    board = FolderBoard(location)
    asyncio.run(Worker(board, EchoAgent(delay_s=3600), lease_s=600, poll_s=0.02).run(handle_signals=True))


def test_sigterm_releases_the_task_in_hand(board: FolderBoard) -> None:
    board.submit(BoardTask(id="held", description="x"))
    proc = mp.get_context("fork").Process(target=_slow_worker, args=(board.location,))
    proc.start()
    wait_until(lambda: board.get("held").status is TaskStatus.ACTIVE)
    os.kill(proc.pid, signal.SIGTERM)
    proc.join(timeout=60)
    assert proc.exitcode == 0
    task = board.get("held")  # back at once, not after the 600 s lease
    assert task.status is TaskStatus.PENDING and task.attempts == 0


class LeaseThief(EchoAgent):
    """Simulates a worker stalled past its lease: someone recovers the task while it works."""

    async def process(self, task: BoardTask, board: Any) -> Any:
        board.recover_expired(now=time.time() + 3600)
        board.claim(task.id, "other-worker", lease_s=600)
        return await super().process(task, board)


def test_a_result_after_the_lease_was_lost_is_dropped_not_doubled(board: FolderBoard) -> None:
    board.submit(BoardTask(id="stolen", description="x"))
    worker = Worker(board, LeaseThief(), poll_s=0.02, max_tasks=1)
    asyncio.run(worker.run())
    assert worker.stats.lost == 1 and worker.stats.completed == 0
    task = board.get("stolen")
    assert task.status is TaskStatus.ACTIVE and task.claimed_by == "other-worker" and task.attempts == 2
