"""The folder backend: the board contract, plus what only a folder has (files, layout, crashes)."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from board_contract import *  # noqa: F401,F403  (the backend contract, run against folders)
from moot.errors import MootError
from moot.teams.board import BoardTask, TaskStatus
from moot.teams.board.folder import BoardWriteError, FolderBoard


@pytest.fixture
def board(tmp_path: Path) -> FolderBoard:
    b = FolderBoard(tmp_path / "ws")
    b.init()
    return b


def _names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_init_lays_out_the_seed_workspace(board: FolderBoard) -> None:
    root = board.root
    for sub in ("tasks/pending", "tasks/active", "tasks/completed", "tasks/failed", "agents", "context", "results"):
        assert (root / sub).is_dir(), sub
    registry = json.loads((root / "agents" / "registry.json").read_text())
    assert "echo" in {a["name"] for a in registry["active_agents"]}
    board.init()  # idempotent


def test_not_a_board_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MootError) as info:
        FolderBoard(tmp_path / "nothing").list()
    assert "not a task board" in info.value.one_line() and "moot board init" in info.value.one_line()


def test_files_move_between_status_folders(board: FolderBoard) -> None:
    board.submit(BoardTask(id="a1", description="x"))
    assert _names(board.dirs[TaskStatus.PENDING]) == ["a1.json"]
    board.claim("a1", "w1", lease_s=30)
    assert _names(board.dirs[TaskStatus.PENDING]) == []
    assert _names(board.dirs[TaskStatus.ACTIVE]) == ["a1__w1.json"]
    board.complete("a1", "w1", {"answer": 42})
    assert _names(board.dirs[TaskStatus.ACTIVE]) == [] and _names(board.dirs[TaskStatus.COMPLETED]) == ["a1.json"]
    stored = json.loads((board.dirs[TaskStatus.COMPLETED] / "a1.json").read_text())
    assert stored["result"] == {"answer": 42} and stored["status"] == "completed" and stored["attempts"] == 1
    result = json.loads((board.root / "results" / "a1.json").read_text())
    assert result["result"] == {"answer": 42}


def test_seed_style_dropped_file_without_id_is_accepted(board: FolderBoard) -> None:
    (board.dirs[TaskStatus.PENDING] / "build_user_api.json").write_text(
        json.dumps({"description": "Build a REST API", "type": "software_development", "context": {"x": 1}})
    )
    task = board.claim("build_user_api", "w1", lease_s=30)
    assert task is not None and task.id == "build_user_api" and task.type == "software_development"


@pytest.mark.parametrize(
    "content, reason",
    [
        ("{not json", "not JSON"),
        ('["a list"]', "not a JSON object"),
        ('{"id": "other", "description": "x"}', "does not match"),
        ('{"id": "bad1", "description": ""}', "description"),
        ('{"id": "bad1", "description": "x", "depth": 99}', "depth"),
    ],
)
def test_malformed_files_go_to_failed_with_the_reason(board: FolderBoard, content: str, reason: str) -> None:
    path = board.dirs[TaskStatus.PENDING] / "bad1.json"
    path.write_text(content)
    old = time.time() - 10
    os.utime(path, (old, old))  # settled: not a file a person is still writing
    board.submit(BoardTask(id="good", description="fine"))
    assert [t.id for t in board.list(TaskStatus.PENDING)] == ["good"]
    failed = board.dirs[TaskStatus.FAILED]
    assert "pending.bad1.json.invalid" in _names(failed)
    assert (failed / "pending.bad1.json.invalid").read_text() == content  # raw bytes kept
    why = json.loads((failed / "pending.bad1.json.invalid.why").read_text())
    assert reason in why["reason"]
    shown = board.list(TaskStatus.FAILED)
    assert len(shown) == 1 and shown[0].type == "invalid" and reason in shown[0].error
    assert board.stats().failed == 1


def test_hand_edited_active_file_is_quarantined_by_recovery(board: FolderBoard) -> None:
    board.submit(BoardTask(id="e1", description="x"))
    board.claim("e1", "w1", lease_s=30)
    path = board.dirs[TaskStatus.ACTIVE] / "e1__w1.json"
    path.write_text('{"id": "e1", "description": ')
    assert board.recover_expired(now=time.time() + 60) == []
    assert "active.e1__w1.json.invalid" in _names(board.dirs[TaskStatus.FAILED])


def test_a_young_malformed_pending_file_is_left_alone(board: FolderBoard) -> None:
    (board.dirs[TaskStatus.PENDING] / "half.json").write_text('{"description": "being wri')
    assert board.list(TaskStatus.PENDING) == []
    assert _names(board.dirs[TaskStatus.PENDING]) == ["half.json"]


def _fail_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)


def test_full_disk_on_submit_leaves_no_half_written_task(board: FolderBoard, monkeypatch: pytest.MonkeyPatch) -> None:
    _fail_fsync(monkeypatch)
    with pytest.raises(BoardWriteError, match="No space left"):
        board.submit(BoardTask(id="s1", description="x"))
    monkeypatch.undo()
    assert _names(board.dirs[TaskStatus.PENDING]) == [] and board.list() == []


def test_full_disk_on_complete_keeps_the_active_task(board: FolderBoard, monkeypatch: pytest.MonkeyPatch) -> None:
    board.submit(BoardTask(id="s2", description="x"))
    board.claim("s2", "w1", lease_s=30)
    before = (board.dirs[TaskStatus.ACTIVE] / "s2__w1.json").read_bytes()
    _fail_fsync(monkeypatch)
    with pytest.raises(BoardWriteError):
        board.complete("s2", "w1", {"r": 1})
    monkeypatch.undo()
    assert (board.dirs[TaskStatus.ACTIVE] / "s2__w1.json").read_bytes() == before
    assert _names(board.dirs[TaskStatus.COMPLETED]) == []
    assert board.complete("s2", "w1", {"r": 1}).result == {"r": 1}  # and it can still finish


def test_crash_during_replace_keeps_the_previous_file(board: FolderBoard, monkeypatch: pytest.MonkeyPatch) -> None:
    board.submit(BoardTask(id="s3", description="x"))
    board.claim("s3", "w1", lease_s=30)
    path = board.dirs[TaskStatus.ACTIVE] / "s3__w1.json"
    before = path.read_bytes()

    def crash(src: Any, dst: Any) -> None:
        raise OSError(errno.EIO, "simulated crash")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(BoardWriteError):
        board.update(board.get("s3").model_copy(update={"subtasks": ["a"]}))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [n for n in _names(board.dirs[TaskStatus.ACTIVE]) if n.endswith(".tmp")] == []


def test_crash_between_commit_and_move_rolls_forward(board: FolderBoard, monkeypatch: pytest.MonkeyPatch) -> None:
    board.submit(BoardTask(id="s4", description="x"))
    board.claim("s4", "w1", lease_s=30)
    monkeypatch.setattr(FolderBoard, "_roll_forward", lambda self, marker: None)  # "crash" after the commit point
    board.complete("s4", "w1", {"r": 4})
    monkeypatch.undo()
    assert board.list(TaskStatus.COMPLETED) == []  # the commit file is still hidden
    board.recover_expired()
    assert board.get("s4").status is TaskStatus.COMPLETED and board.get("s4").result == {"r": 4}
    assert [n for n in _names(board.dirs[TaskStatus.ACTIVE])] == []


def test_bad_worker_ids_are_rejected(board: FolderBoard) -> None:
    board.submit(BoardTask(id="w", description="x"))
    for bad in ("a__b", "../x", "a/b", ""):
        with pytest.raises(MootError):
            board.claim("w", bad, lease_s=30)
    assert board.get("w").status is TaskStatus.PENDING


def test_a_hand_edited_registry_is_kept_aside(board: FolderBoard) -> None:
    board.registry_path.write_text("{broken")
    assert board.agents() == []
    board.init()
    assert "echo" in {s.name for s in board.agents()}
    assert any(n.endswith(".invalid") for n in os.listdir(board.registry_path.parent))


def test_the_storage_backends_do_not_import_the_agents() -> None:
    import subprocess
    import sys

    code = ("import sys, moot.teams.board.folder, moot.teams.board.postgres; "
            "print(sorted(m for m in sys.modules if m.startswith(('moot.teams.board.agents', 'moot.runtime', 'moot.models'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
    from moot.teams.board.folder import FolderBoard  # noqa: F401
    from moot.teams.board.specs import BUILTIN_SPECS

    assert [s.name for s in BUILTIN_SPECS] == ["echo", "breakdown", "search", "file", "terminal"]
