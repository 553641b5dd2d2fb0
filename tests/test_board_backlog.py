"""The folder board with a backlog: a claim costs the same with 600 tasks waiting as with 20, the
claim order stays right across processes (priority, hand-dropped files), kill -9 loses nothing,
and what killed writers leave behind is cleaned up (issue #34). Real files, real processes."""

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

from moot.teams.board import BoardTask, TaskStatus
from moot.teams.board import claim_order as claim_order_module
from moot.teams.board.echo import EchoAgent
from moot.teams.board.folder import FolderBoard
from moot.teams.board.folder_files import write_locked
from moot.teams.board.worker import Worker

_ctx = mp.get_context("fork")


def fresh(path: Path, n: int) -> FolderBoard:
    board = FolderBoard(path)
    board.init()
    for i in range(n):
        board.submit(BoardTask(id=f"t{i:04d}", description=f"job {i}"))
    return FolderBoard(path)  # another process's view: it has read nothing yet


def entries_listed_per_claim(path: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> float:
    """How many pending-folder entries one claim looks at, once the worker has started."""
    board = fresh(path, n)
    assert board.claim_next("w1", lease_s=60) is not None  # the start: the folder is listed once
    counted = [0]
    real_scandir = os.scandir

    class Counting:
        def __init__(self, *args: Any) -> None:
            self.inner = real_scandir(*args)

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def __iter__(self) -> Any:
            for entry in self.inner:
                counted[0] += 1
                yield entry

    monkeypatch.setattr(os, "scandir", Counting)
    for _ in range(15):
        assert board.claim_next("w1", lease_s=60) is not None
    monkeypatch.setattr(os, "scandir", real_scandir)
    return counted[0] / 15


def test_a_claim_looks_at_no_more_files_with_600_waiting_than_with_20(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue #34: every claim listed the whole pending folder (8 workers: 159 claims/s at 200, 22/s at 3,000).
    monkeypatch.setattr(claim_order_module, "FULL_SCAN_S", 3600.0)
    small = entries_listed_per_claim(tmp_path / "small", 20, monkeypatch)
    large = entries_listed_per_claim(tmp_path / "large", 600, monkeypatch)
    assert large == small == 0


def test_claims_follow_priority_across_processes_and_find_hand_dropped_files(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claim_order_module, "FULL_SCAN_S", 3600.0)
    worker = fresh(tmp_path, 5)
    assert worker.claim_next("w1", lease_s=60).id == "t0000"  # type: ignore[union-attr]
    FolderBoard(tmp_path).submit(BoardTask(id="urgent", description="now", priority=10))  # another process
    assert worker.claim_next("w1", lease_s=60).id == "urgent"  # type: ignore[union-attr]
    # A person drops a task file in by hand: no log line; found once the order runs dry.
    (tmp_path / "tasks" / "pending" / "by-hand.json").write_text(json.dumps({"description": "hand written"}))
    claimed = [worker.claim_next("w1", lease_s=60) for _ in range(5)]
    assert [t.id for t in claimed if t] == ["t0001", "t0002", "t0003", "t0004", "by-hand"]
    assert worker.claim_next("w1", lease_s=60) is None


def test_a_retried_task_goes_back_into_every_claim_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claim_order_module, "FULL_SCAN_S", 3600.0)
    first, second = fresh(tmp_path, 2), FolderBoard(tmp_path)
    task = first.claim_next("w1", lease_s=60)
    assert task is not None and second.claim_next("w2", lease_s=60).id == "t0001"  # type: ignore[union-attr]
    assert second.claim_next("w2", lease_s=60) is None
    first.fail(task.id, "w1", "try again", retry=True)  # back to pending, through the move protocol
    again = second.claim_next("w2", lease_s=60)
    assert again is not None and again.id == task.id and again.attempts == 2


class JournalEcho(EchoAgent):
    """The echo agent that notes each task it finished, in a file that survives kill -9."""

    def __init__(self, journal: str) -> None:
        super().__init__(delay_s=0.02)
        self.journal = journal

    async def process(self, task: BoardTask, board: Any) -> Any:
        result = await super().process(task, board)
        fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, f"{task.id}\n".encode())
        os.close(fd)
        return result


def _worker(location: str, journal: str, queue: Any) -> None:
    worker = Worker(FolderBoard(location), JournalEcho(journal), lease_s=1.0, poll_s=0.02, stop_when_idle=True,
                    recover_every_s=0.2)
    stats = asyncio.run(worker.run())
    queue.put(stats.completed_ids)


def test_eight_workers_with_two_killed_lose_nothing_and_complete_nothing_twice(tmp_path: Path) -> None:
    board = fresh(tmp_path / "board", 300)
    ids = {f"t{i:04d}" for i in range(300)}
    queue = _ctx.Queue()
    procs = [_ctx.Process(target=_worker, args=(board.location, str(tmp_path / f"journal-{i}"), queue)) for i in range(8)]
    for p in procs:
        p.start()
    while len(list(board.dirs[TaskStatus.COMPLETED].glob("*.json"))) < 60:
        time.sleep(0.02)
    for victim in procs[:2]:
        os.kill(victim.pid, signal.SIGKILL)  # mid-run, each most likely holding a task
    reports = [queue.get(timeout=300) for _ in procs[2:]]
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs[:2]] == [-signal.SIGKILL] * 2
    completed = {t.id: t for t in board.list(TaskStatus.COMPLETED)}
    assert set(completed) == ids  # nothing lost
    assert board.stats().pending == board.stats().active == board.stats().failed == 0
    by_survivors = [tid for done in reports for tid in done]
    assert len(by_survivors) == len(set(by_survivors))  # no task completed twice
    assert all(t.attempts in (1, 2) for t in completed.values())
    # A worker killed inside a move leaves its hidden commit record; once no living writer can
    # need it (older than LEFTOVER_AGE_S), the next worker's start removes it.
    leftovers = [p for d in board.dirs.values() for p in d.iterdir() if p.name.startswith(".")]
    for path in leftovers:
        _age(path, 3600)
    FolderBoard(board.location).recover_expired()
    assert [p.name for d in board.dirs.values() for p in d.iterdir() if p.name.startswith(".")] == []
    assert {t.id for t in board.list(TaskStatus.COMPLETED)} == ids


# --------------------------------------------------------------------------- leftovers and junk


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _hold_commit(path: str, ready: Any) -> None:
    write_locked(Path(path), b"{}")
    ready.set()
    time.sleep(3600)


def test_commit_leftovers_of_a_killed_writer_are_cleaned_on_start_and_a_living_ones_kept(tmp_path: Path) -> None:
    # Issue #34: kill -9 during a commit left completed/.commit~… files that were never removed.
    board = fresh(tmp_path, 1)
    completed = board.dirs[TaskStatus.COMPLETED]
    orphan = completed / ".commit~aaaa11112222~t9"
    orphan.write_text("{}")
    _age(orphan, 3600)
    stale_submit = board.dirs[TaskStatus.PENDING] / ".submit~bbbb~t8"
    stale_submit.write_text("{}")
    _age(stale_submit, 3600)
    fresh_commit = completed / ".commit~cccc33334444~t7"  # a mover at work right now: kept
    fresh_commit.write_text("{}")
    ready = _ctx.Event()
    held = completed / ".commit~dddd55556666~t6"
    holder = _ctx.Process(target=_hold_commit, args=(str(held), ready))
    holder.start()
    assert ready.wait(30)
    _age(held, 3600)  # old, but its writer is alive and holds the lock
    worker = FolderBoard(tmp_path)
    worker.recover_expired()  # a worker's start
    names = {p.name for p in completed.iterdir()}
    assert orphan.name not in names and fresh_commit.name in names and held.name in names
    assert not stale_submit.exists()
    os.kill(holder.pid, signal.SIGKILL)  # now its writer is gone
    holder.join(timeout=30)
    FolderBoard(tmp_path).init()  # `moot board init` (or the next worker) cleans it
    assert not held.exists() and fresh_commit.exists()
    assert board.get("t0000").status is TaskStatus.PENDING  # the real task untouched


def test_a_commit_whose_move_reached_its_marker_is_rolled_forward_not_removed(tmp_path: Path) -> None:
    board = fresh(tmp_path, 1)
    task = board.claim_next("w1", lease_s=60)
    assert task is not None
    done = task.model_copy(update={"status": TaskStatus.COMPLETED, "result": {"ok": True}})
    commit = board.dirs[TaskStatus.COMPLETED] / f".commit~eeee77778888~{task.id}"
    commit.write_bytes(done.model_dump_json().encode())
    os.rename(board.dirs[TaskStatus.ACTIVE] / f"{task.id}__w1.json",
              board.dirs[TaskStatus.ACTIVE] / f".move~completed~eeee77778888~{task.id}")  # killed right here
    _age(commit, 3600)
    FolderBoard(tmp_path).recover_expired()
    assert board.get(task.id).status is TaskStatus.COMPLETED and board.get(task.id).result == {"ok": True}


def test_a_malformed_pending_file_dated_in_the_future_is_quarantined(tmp_path: Path) -> None:
    # Issue #34: a malformed pending file with a future mtime was never quarantined.
    board = fresh(tmp_path, 1)
    junk = board.dirs[TaskStatus.PENDING] / "junk.json"
    junk.write_text("{not json")
    later = time.time() + 86_400
    os.utime(junk, (later, later))
    board.list(TaskStatus.PENDING)
    assert not junk.exists()
    assert any(p.name.endswith(".invalid") for p in board.dirs[TaskStatus.FAILED].iterdir())
    assert board.claim_next("w1", lease_s=60).id == "t0000"  # type: ignore[union-attr]
