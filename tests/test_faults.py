"""Fault injection: what a user sees when a process is killed or a model misbehaves (issue #20).

Run it alone with ``.venv/bin/python -m pytest tests/test_faults.py -q`` (about a minute).
Every case uses real processes and real files: ``kill -9`` lands on a real ``moot`` process
in the middle of its work (learn, setup, a board task, an index), and the models are a real
OpenAI-compatible HTTP server on loopback that injects one fault per request (429 with
Retry-After, 500, a body that is not JSON, an answer cut at ``max_tokens``, a connection
dropped mid-body, a reply slower than the timeout). Each case checks the stop reason the
user reads, the exit code, and that the work done before the fault is kept.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from learning_support import label_body
import pytest

from test_research_support import fake_answer, make_repo

MOOT = [sys.executable, "-m", "moot"]


# --------------------------------------------------------------------------- helpers


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), **extra}
    env.pop("MOOT_MODEL", None)
    env.pop("MOOT_BLOCK_REAL_REQUESTS", None)
    return env


def moot(*args: str, home: Path, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env_for(home, **extra), timeout=timeout)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def kill9(process: subprocess.Popen[Any]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    assert process.returncode == -signal.SIGKILL


def integrity_ok(path: Path) -> bool:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


class FaultServer:
    """An OpenAI-compatible chat-completions server that plays ``faults`` in order, one per
    request (``None`` = a normal answer), then ``then`` for every later request."""

    def __init__(self, answer: Callable[[dict[str, Any]], str], faults: list[str | None], then: str | None = None,
                 delay_s: float = 0.0) -> None:
        self.answer = answer
        self.faults: deque[str | None] = deque(faults)
        self.then = then
        self.delay_s = delay_s
        self.log: list[tuple[float, str]] = []
        """(time, what was played) per request."""
        self.lock = threading.Lock()

    def next_fault(self) -> str | None:
        with self.lock:
            fault = self.faults.popleft() if self.faults else self.then
            self.log.append((time.monotonic(), fault or "ok"))
            return fault


def _completion(content: str, finish: str = "stop") -> bytes:
    return json.dumps({
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
    }).encode()


@contextmanager
def fault_server(server: FaultServer) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            fault = server.next_fault()
            if server.delay_s:
                time.sleep(server.delay_s)
            error = json.dumps({"error": {"message": f"injected {fault}", "type": "server_error"}}).encode()
            if fault == "429":
                self.reply(429, error, {"retry-after": "1"})
            elif fault == "500":
                self.reply(500, error)
            elif fault == "malformed":
                self.reply(200, b'{"id": "c1", "choices": [{"message": ')
            elif fault == "truncated":
                text = server.answer(body)
                self.reply(200, _completion(text[: max(1, len(text) // 2)], finish="length"))
            elif fault == "hangup":  # headers and half a body, then the connection is gone
                payload = _completion(server.answer(body))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload[: len(payload) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            elif fault == "slow":
                time.sleep(3)
                self.reply(200, _completion(server.answer(body)))
            else:
                self.reply(200, _completion(server.answer(body)))

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"openai-compatible:http://127.0.0.1:{httpd.server_address[1]}/v1#m"
    finally:
        httpd.shutdown()
        httpd.server_close()


def learning_answer(body: dict[str, Any]) -> str:
    """Extracts each sentence as a fact; anything else gets a short plain answer."""
    system, task = body["messages"][0]["content"], body["messages"][-1]["content"]
    labels = label_body(body)
    if labels is not None:
        return labels
    if system.startswith("You extract facts"):
        text = task.split("Text:", 1)[1]
        sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", text) if "Bridge" in s]
        return json.dumps({"facts": [{"content": s, "entity": s.split(" is ")[0], "attribute": "length", "value": s}
                                     for s in sentences]})
    if system.startswith("Summarise"):
        return "A bridge."
    return "ok"


# --------------------------------------------------------------------------- kill -9


def test_kill_9_during_learn_keeps_every_file_learned_before_it(tmp_path: Path) -> None:
    articles = []
    for i in range(6):
        article = tmp_path / f"bridge{i}.md"
        article.write_text(f"---\npublished: 2024-0{i + 1}-01\n---\nBridge {i} is {100 + i} metres long.\n")
        articles.append(article)
    kb = tmp_path / "bridges.sqlite3"
    home = tmp_path / "home"
    with fault_server(FaultServer(learning_answer, [], delay_s=0.3)) as model:
        process = subprocess.Popen([*MOOT, "learn", *map(str, articles), "--kb", str(kb), "--model", model, "--json",
                                    "--parallel", "1"],
                                   env=env_for(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def learned() -> int:
            if not kb.exists():
                return 0
            try:
                with sqlite3.connect(kb, timeout=5) as conn:
                    return conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
            except sqlite3.Error:
                return 0

        wait_for(lambda: learned() >= 2, "two files learned")
        kill9(process)
        assert integrity_ok(kb)
        before = learned()
        assert 2 <= before < 6  # killed in the middle; whole files only (one fact per file)
        stats = moot("kb", "stats", "--kb", str(kb), "--json", home=home)
        assert stats.returncode == 0, stats.stderr
        again = moot("learn", *map(str, articles), "--kb", str(kb), "--model", model, "--json", home=home)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["kb_facts"] == 6  # the rest learned, nothing twice


def test_kill_9_during_setup_leaves_a_partial_that_the_next_setup_removes(tmp_path: Path) -> None:
    models = tmp_path / "models"
    home = tmp_path / "home"
    process = subprocess.Popen([*MOOT, "setup", "--json"], env=env_for(home, MOOT_MODELS_DIR=str(models)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: any(p.stat().st_size > 20_000_000 for p in models.glob(".*.partial")) if models.is_dir() else False,
             "a partial weights file")
    kill9(process)
    partials = list(models.glob(".*.partial"))
    assert partials and not list(models.glob("*.gguf"))  # nothing that looks usable
    again = moot("setup", "--json", home=home, MOOT_MODELS_DIR=str(models))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["assembled"] is True
    assert list(models.glob(".*.partial")) == []
    assert sorted(p.name for p in models.iterdir())[0].endswith(".gguf")


_WORKER = """
import asyncio, sys
from moot.teams.board.echo import EchoAgent
from moot.teams.board.folder import FolderBoard
from moot.teams.board.worker import Worker
board = FolderBoard(sys.argv[1])
asyncio.run(Worker(board, EchoAgent(delay_s=float(sys.argv[2])), worker_id=sys.argv[3], lease_s=1.0,
                   stop_when_idle=True, idle_grace_s=0).run())
"""


def test_kill_9_during_a_board_task_recovers_it_with_the_attempt_counted(tmp_path: Path) -> None:
    from moot.teams.board import BoardTask, TaskStatus
    from moot.teams.board.folder import FolderBoard

    board = FolderBoard(tmp_path / "ws")
    board.init()
    board.submit(BoardTask(id="t1", description="slow work", max_attempts=3))
    doomed = subprocess.Popen([sys.executable, "-c", _WORKER, str(board.root), "60", "doomed"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: board.get("t1").status is TaskStatus.ACTIVE, "the task claimed")
    kill9(doomed)
    assert board.get("t1").claimed_by == "doomed"
    rescuer = subprocess.run([sys.executable, "-c", _WORKER, str(board.root), "0", "rescuer"],
                             capture_output=True, text=True, timeout=60)
    assert rescuer.returncode == 0, rescuer.stderr
    task = board.get("t1")
    assert task.status is TaskStatus.COMPLETED and task.result == {"echo": "slow work"}
    assert task.attempts == 2 and task.claimed_by == "rescuer"


def test_kill_9_during_index_leaves_a_usable_index(tmp_path: Path) -> None:
    repo = tmp_path / "big"
    for i in range(1500):
        folder = repo / f"pkg{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"def function_{i}(x):\n    return x + {i}\n\n\nclass Thing{i}:\n    pass\n")
    db = tmp_path / "index.db"
    home = tmp_path / "home"
    process = subprocess.Popen([*MOOT, "index", str(repo), "--db", str(db)], env=env_for(home),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def files_indexed() -> int:
        try:
            with sqlite3.connect(db, timeout=5) as conn:
                return conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        except sqlite3.Error:
            return 0

    wait_for(lambda: files_indexed() >= 100, "some files indexed")
    kill9(process)
    assert integrity_ok(db)
    assert files_indexed() < 1500  # killed in the middle
    again = moot("index", str(repo), "--db", str(db), "--json", home=home)
    assert again.returncode == 0, again.stderr
    assert files_indexed() == 1500
    from moot.codeindex import CodeIndex

    with CodeIndex.open(repo, db_path=db) as index:
        assert [hit.path for hit in index.search("function_1234", mode="lexical")][0] == "pkg12/mod1234.py"


# --------------------------------------------------------------------------- a model that misbehaves


def research(model: str, tmp_path: Path, mode: str = "single") -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_repo(repo)
    out = moot("research", "Where is parse_request defined?", "--repo", str(repo), "--mode", mode, "--model", model,
               "--json", home=tmp_path / "home")
    lines = out.stdout.strip().splitlines()
    return out, (json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {})


def test_a_429_with_retry_after_is_waited_out_and_the_run_completes(tmp_path: Path) -> None:
    server = FaultServer(fake_answer, ["429", "429"])
    with fault_server(server) as model:
        out, result = research(model, tmp_path)
    assert out.returncode == 0, out.stderr
    assert result["status"] == "completed" and "parse_request" in result["answer"]
    times = [t for t, _ in server.log]
    assert times[1] - times[0] >= 0.95 and times[2] - times[1] >= 0.95  # Retry-After: 1 honoured
    assert result["usage"]["requests"] >= 1


@pytest.mark.parametrize(
    "fault, cause",
    [("500", "500"), ("malformed", "not a valid response"), ("hangup", "connect")],
    ids=["500 every time", "not JSON every time", "connection dropped mid-body every time"],
)
def test_a_model_that_keeps_failing_ends_the_run_failed_with_the_cause(tmp_path: Path, fault: str, cause: str) -> None:
    with fault_server(FaultServer(fake_answer, [], then=fault)) as model:
        out, result = research(model, tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert result["status"] == "failed"
    assert cause.lower() in result["stop_reason"].lower(), result["stop_reason"]
    assert "budget" not in result["answer"]
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("fault", ["500", "malformed", "hangup"])
def test_one_fault_is_retried_and_the_run_completes(tmp_path: Path, fault: str) -> None:
    server = FaultServer(fake_answer, [fault])
    with fault_server(server) as model:
        out, result = research(model, tmp_path)
    assert out.returncode == 0, out.stderr
    assert result["status"] == "completed" and "parse_request" in result["answer"]
    assert [what for _, what in server.log][:2] == [fault, "ok"]


def test_the_researchers_evidence_is_kept_when_the_synthesizer_fails(tmp_path: Path) -> None:
    # planner, two researchers answer; then the model is gone for good
    with fault_server(FaultServer(fake_answer, [None, None, None], then="500")) as model:
        out, result = research(model, tmp_path, mode="multi")
    assert out.returncode == 1, out.stdout + out.stderr
    assert result["status"] == "failed" and "500" in result["stop_reason"]
    assert len(result["evidence"]) == 2 and all(bundle["findings"] for bundle in result["evidence"])
    assert {f["file_path"] for bundle in result["evidence"] for f in bundle["findings"]} >= {"app/server.py"}
    shown = moot("runs", "show", result["run_id"][:12], home=tmp_path / "home")
    assert shown.returncode == 0 and "researcher-1" in shown.stdout


def test_an_answer_cut_at_max_tokens_is_kept_and_said_so(tmp_path: Path) -> None:
    with fault_server(FaultServer(fake_answer, [], then="truncated")) as model:
        out, result = research(model, tmp_path)
    assert out.returncode == 0, out.stderr
    assert result["status"] == "completed"
    assert result["answer"].startswith("Requests are split")  # the half that came is kept


async def test_a_model_slower_than_the_deadline_stops_with_a_deadline_reason(tmp_path: Path, allow_real: None) -> None:
    from moot.models.registry import infer_model
    from moot.teams.research import ResearchConfig, ResearchTeam

    with fault_server(FaultServer(fake_answer, [], then="slow")) as model:
        team = ResearchTeam(make_repo(tmp_path / "repo"), model=infer_model(model), db_path=tmp_path / "i.db",
                            config=ResearchConfig(deadline_s=1.0))
        try:
            started = time.monotonic()
            result = await team.ask("Where is parse_request defined?", mode="single")
        finally:
            team.close()
    assert time.monotonic() - started < 2.9  # the hanging request was cancelled, not waited for
    assert result.status == "stopped" and "deadline" in result.stop_reason
