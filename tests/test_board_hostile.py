"""No file can stop the folder board (issue #20): hostile and malformed entries in its folders.

Each case drops something into ``pending/`` next to a good task and checks what a user sees:
the good task still gets done by a real worker process, the bad entry ends up in ``failed/``
with its reason, and nothing crashes, hangs or prints what a link points at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moot.teams.board import BoardTask, TaskStatus
from moot.teams.board.folder import FolderBoard
from moot.teams.board.task import InvalidTaskError, parse_task


def nested(levels: int) -> str:
    return json.dumps({"description": "deep", "context": {"x": "PLACEHOLDER"}}).replace(
        '"PLACEHOLDER"', "[" * levels + "]" * levels
    )


@pytest.fixture
def board(tmp_path: Path) -> FolderBoard:
    b = FolderBoard(tmp_path / "ws")
    b.init()
    b.submit(BoardTask(id="good", description="say hello", type="greeting", requirements=["echo"]))
    return b


def pending(board: FolderBoard) -> Path:
    return board.dirs[TaskStatus.PENDING]


def settle(path: Path) -> None:
    """Make a file look written long ago (the board leaves fresh files for their writer to finish)."""
    old = time.time() - 60
    os.utime(path, (old, old), follow_symlinks=False)


def run_worker(board: FolderBoard, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moot", "board", "worker", str(board.root), "--agent", "echo", "--until-idle",
         "--idle-grace", "0", "--lease", "5", "--json"],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, "MOOT_BLOCK_REAL_REQUESTS": "1"},
    )


def failed_reasons(board: FolderBoard) -> dict[str, str]:
    return {t.context.get("file", t.id): t.error or "" for t in board.list(TaskStatus.FAILED) if t.type == "invalid"}


@pytest.mark.parametrize("levels", [1000, 500])
def test_a_deeply_nested_task_is_quarantined_and_good_tasks_run(board: FolderBoard, levels: int) -> None:
    # Issue #20: 1,000 deep crashed every worker and `board status` (RecursionError); 500 deep
    # could not be written back and went round pending for ever without its attempt counted.
    bad = pending(board) / "deep.json"
    bad.write_text(nested(levels))
    settle(bad)
    status = subprocess.run([sys.executable, "-m", "moot", "board", "status", str(board.root), "--json"],
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr[-2000:]
    done = run_worker(board)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert board.get("good").status is TaskStatus.COMPLETED
    assert "deeper than 32 levels" in failed_reasons(board)["pending/deep.json"]
    assert not bad.exists()


def test_a_folder_named_like_a_task_is_quarantined(board: FolderBoard) -> None:
    # Issue #20: a directory named x.json in pending killed the worker.
    (pending(board) / "x.json").mkdir()
    done = run_worker(board)
    assert done.returncode == 0, done.stderr[-2000:]
    assert board.get("good").status is TaskStatus.COMPLETED
    assert "is a folder" in failed_reasons(board)["pending/x.json"]


def test_a_fifo_named_like_a_task_never_blocks_a_worker(board: FolderBoard) -> None:
    # Issue #20: a FIFO named x.json blocked a worker for ever, deaf to SIGTERM.
    os.mkfifo(pending(board) / "x.json")
    done = run_worker(board, timeout=60)  # before the fix this never returned
    assert done.returncode == 0, done.stderr[-2000:]
    assert board.get("good").status is TaskStatus.COMPLETED
    assert "FIFO" in failed_reasons(board)["pending/x.json"]


def test_a_symlink_is_never_followed_nor_shown(board: FolderBoard, tmp_path: Path) -> None:
    # Issue #20: a link to /dev/zero raised MemoryError, and `board status --json` printed a
    # quarantined link's target.
    secret = tmp_path / "secret.txt"
    secret.write_text('{"description": "TOPSECRET-VALUE"}')
    os.symlink("/dev/zero", pending(board) / "zero.json")
    os.symlink(secret, pending(board) / "leak.json")
    done = run_worker(board)
    assert done.returncode == 0, done.stderr[-2000:]
    assert board.get("good").status is TaskStatus.COMPLETED
    reasons = failed_reasons(board)
    assert "symbolic link" in reasons["pending/zero.json"] and "symbolic link" in reasons["pending/leak.json"]
    status = subprocess.run([sys.executable, "-m", "moot", "board", "status", str(board.root), "--json"],
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 0, status.stderr
    assert "TOPSECRET" not in status.stdout
    assert secret.read_text() == '{"description": "TOPSECRET-VALUE"}'  # the target was left alone


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"attempts": -5}, "attempts -5 is outside"),
        ({"max_attempts": 0}, "max_attempts 0 is outside"),
        ({"priority": 3_000_000_000}, "priority 3000000000 is outside"),
        ({"description": "a\x00b"}, "NUL character"),
        ({"context": {"k\x00": "v"}}, "NUL character"),
        ({"created_at": float("nan")}, "is not a time"),
    ],
)
def test_out_of_range_fields_are_refused_at_submit_and_quarantined_on_disk(
    board: FolderBoard, fields: dict, message: str
) -> None:
    # Issue #20: the board accepted attempts -5, max_attempts 0, priority 3e9 and NUL characters.
    record = {"description": "bad", **fields}
    with pytest.raises(InvalidTaskError, match=message):
        parse_task(record)
    bad = pending(board) / "bad.json"
    bad.write_text(json.dumps(record))
    settle(bad)
    assert [t.id for t in board.list(TaskStatus.PENDING)] == ["good"]
    assert message.split(" is ")[0] in failed_reasons(board)["pending/bad.json"] or message in failed_reasons(board)["pending/bad.json"]


def test_an_attempt_is_counted_when_the_worker_died_right_after_claiming(board: FolderBoard) -> None:
    # A worker killed between the claiming rename and writing its claim left the old count, so
    # the task could go back to pending for ever.
    board.submit(BoardTask(id="fragile", description="x", attempts=2, max_attempts=3))
    src = pending(board) / "fragile.json"
    dst = board.dirs[TaskStatus.ACTIVE] / "fragile__dead-worker.json"
    os.rename(src, dst)  # exactly what claim() does first
    past = time.time() - 10
    os.utime(dst, (past, past))  # its lease ran out
    recovered = board.recover_expired()
    assert [(t.id, t.status) for t in recovered] == [("fragile", TaskStatus.FAILED)]
    assert "max_attempts 3" in (board.get("fragile").error or "")


def test_board_submit_file_with_a_deep_task_is_one_line(tmp_path: Path) -> None:
    # Issue #20: `board submit --file` with the deep file printed a traceback.
    ws = tmp_path / "ws"
    FolderBoard(ws).init()
    deep = tmp_path / "deep.json"
    deep.write_text(nested(1000))
    result = subprocess.run([sys.executable, "-m", "moot", "board", "submit", str(ws), "--file", str(deep)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "deeper than 32 levels" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_board_agents_cannot_read_credentials_in_the_workspace(tmp_path: Path) -> None:
    from moot.teams.board.agent_tools import file_tools, search_documents_tool

    workspace = tmp_path / "ws"
    (workspace / "context").mkdir(parents=True)
    (workspace / "context" / ".env").write_text("OPENAI_API_KEY=sk-" + "x" * 48)
    (workspace / "context" / "notes.md").write_text("deploy notes: token ghp_" + "A" * 36 + "\n")
    (workspace / "context" / "plan.md").write_text("deploy the bridge on Monday\n")
    tools = file_tools(workspace)
    for rel in ("context/.env", "context/notes.md"):
        with pytest.raises(Exception, match="credentials|key or token"):
            tools["read_file"].function(path=rel)  # type: ignore[attr-defined]
    assert "Monday" in tools["read_file"].function(path="context/plan.md")  # type: ignore[attr-defined]
    found = search_documents_tool(workspace).function(query="deploy token")  # type: ignore[attr-defined]
    assert "plan.md" in found and "ghp_" not in found
