"""Issue #34's server and CLI reproductions on a real uvicorn server on loopback: non-finite numbers
and lone surrogates in JSON bodies, /api/chat and the run queue, the board's event stream (changes,
one watcher, a cap), `moot serve --port 99999`, a lone surrogate in `moot board submit --file`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.server import ServerSettings
from moot.teams.board import open_board
from moot.teams.board.folder import FolderBoard
from test_server_api import Server, sse


def board_at(path: Path) -> str:
    board = open_board(str(path))
    board.init()
    board.close()
    return str(path)


def raw_post(url: str, body: str) -> httpx.Response:
    return httpx.post(url, content=body.encode("utf-8"), headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/board/tasks", '{"description": "write it", "requirements": {"weight": NaN}}'),
        ("/api/board/tasks", '{"description": "write it", "requirements": {"weight": Infinity}}'),
        ("/api/board/tasks", '{"description": "bad \\ud800 text"}'),
        ("/api/chat", '{"prompt": "hi \\udfff"}'),
        ("/api/chat", '{"prompt": "hi", "temperature": -Infinity}'),
        ("/api/learning/kbs/notes/learn", '{"text": "Norway won \\ud83d gold", "source": "s"}'),
    ],
)
def test_non_finite_numbers_and_lone_surrogates_are_422_not_500(tmp_path: Path, path: str, body: str) -> None:
    # Issue #34: a NaN, an Infinity or a lone surrogate in a JSON body got 500 with a traceback in the log.
    settings = ServerSettings(model=FunctionModel(lambda r: "ok"), store_path=tmp_path / "runs.db",
                              board=board_at(tmp_path / "board"))
    with Server(settings) as srv:
        refused = raw_post(srv.url + path, body)
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert "not a JSON number" in detail or "lone surrogate" in detail
        # what is allowed still is: a surrogate *pair* is an ordinary character
        assert raw_post(srv.url + "/api/board/tasks", '{"description": "ok \\ud83d\\ude00"}').status_code == 201
    assert FolderBoard(tmp_path / "board").stats().pending == 1


def test_chat_waits_in_the_same_queue_as_runs(tmp_path: Path) -> None:
    # Issue #34: /api/chat ignored --max-concurrent and --max-queued: 40 concurrent chats were all accepted.
    gate = threading.Event()
    in_flight, most = [0], [0]

    async def slow(request: ModelRequest) -> str:
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        while not gate.is_set():
            await asyncio.sleep(0.02)
        in_flight[0] -= 1
        return "hello"

    settings = ServerSettings(model=FunctionModel(slow), store_path=tmp_path / "runs.db", max_concurrent=1, max_queued=2)
    with Server(settings) as srv, ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(httpx.post, f"{srv.url}/api/chat", json={"prompt": "hi"}, timeout=60) for _ in range(8)]
        deadline = time.monotonic() + 30
        while sum(f.done() for f in futures) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)  # 1 runs, 2 wait, 5 are refused at once
        health = httpx.get(f"{srv.url}/api/health").json()
        gate.set()
        codes = sorted(f.result().status_code for f in futures)
    assert codes == [200, 200, 200, 429, 429, 429, 429, 429]
    assert most[0] == 1 and health["active_runs"] == 1 and health["queued_runs"] == 2
    refused = next(f.result() for f in futures if f.result().status_code == 429)
    assert int(refused.headers["Retry-After"]) >= 1 and "--max-queued" in refused.json()["detail"]


def test_the_board_stream_sends_changes_from_one_watcher_and_caps_streams(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue #34: each /api/board/events stream re-read and re-encoded the whole board every 0.5 s.
    location = board_at(tmp_path / "board")
    board = FolderBoard(location)
    for i in range(40):
        board.submit(board_task(f"t{i:02d}"))
    reads = [0]
    real_list = FolderBoard.list

    def counting(self: FolderBoard, *args: Any, **kw: Any) -> Any:
        if not args and not kw:  # the whole board (the columns)
            reads[0] += 1
        return real_list(self, *args, **kw)

    monkeypatch.setattr(FolderBoard, "list", counting)
    settings = ServerSettings(model=FunctionModel(lambda r: "ok"), store_path=tmp_path / "runs.db", board=location,
                              max_board_streams=4)
    with Server(settings) as srv:
        streams = [httpx.stream("GET", f"{srv.url}/api/board/events", timeout=30) for _ in range(4)]
        opened = [s.__enter__() for s in streams]
        events = [sse(s.iter_lines()) for s in opened]
        firsts = [next(e) for e in events]
        assert all(name == "board" and len(data["pending"]) == 40 for name, data in firsts)
        refused = httpx.get(f"{srv.url}/api/board/events")
        assert refused.status_code == 429 and "--max-board-streams" in refused.json()["detail"]
        before = reads[0]
        time.sleep(1.6)  # three polls of an unchanged board
        idle_reads = reads[0] - before
        board.submit(board_task("new-one"))
        changes = [next(e) for e in events]
        for s in streams:
            s.__exit__(None, None, None)
    assert idle_reads == 0  # an idle board is one look at its change token per poll, never a read
    for name, data in changes:
        assert name == "change" and [t["id"] for t in data["changed"]] == ["new-one"] and data["removed"] == []
        assert data["counts"]["pending"] == 41
    assert reads[0] - before == 1  # one read for the change, shared by all four streams


def board_task(task_id: str) -> Any:
    from moot.teams.board import BoardTask

    return BoardTask(id=task_id, description=f"job {task_id}")


def moot(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=env, timeout=60)


def test_a_port_out_of_range_is_one_line(tmp_path: Path) -> None:
    # Issue #34: `moot serve --port 99999` printed a 40-line traceback.
    result = moot("serve", "--port", "99999", tmp_path=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "--port 99999" in line and "1 to 65535" in line


def test_a_lone_surrogate_in_a_task_file_is_one_line(tmp_path: Path) -> None:
    # Issue #34: a lone surrogate in `moot board submit --file` printed a traceback.
    location = board_at(tmp_path / "board")
    task = tmp_path / "task.json"
    task.write_text('{"description": "broken \\ud800 text"}')
    result = moot("board", "submit", location, "--file", str(task), tmp_path=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "lone surrogate" in line and "fix:" in line
    assert FolderBoard(location).stats().pending == 0
