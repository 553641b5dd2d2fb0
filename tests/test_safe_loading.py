"""Issue #34's file reproductions, each on today's entry points: a deliberation data folder whose
links lead out of --repo-root, FIFOs and /dev/zero given to the loaders, `moot index /` and the
home folder. Real processes, real FIFOs, a real server on loopback."""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.server import ServerSettings
from test_server_api import Server, sse

SECRET = "the-secret-outside-the-root-7731"
TOKEN = "sk-proj-" + "Zq9Xw8Vu7" * 5
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"


def moot(*args: str, home: Path, timeout: float = 120, env: dict[str, str] | None = None,
         memory_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "COLUMNS": "200",
            **(env or {})}
    full.pop("MOOT_MODEL", None)

    def limit() -> None:  # /dev/zero used to grow without end: bound the child, never the machine
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=full,
                          timeout=timeout, preexec_fn=limit)


def one_line_error(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    # a piped team command's progress lines are timestamped; the error is the one line besides them
    lines = [line for line in result.stderr.strip().splitlines() if not re.match(r"\[\d\d:\d\d:\d\d\] ", line)]
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines) == 1 and lines[0].startswith("error:") and "fix:" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


# --------------------------------------------------------------------------- deliberation data


def hostile_data_folder(tmp_path: Path) -> Path:
    from deliberation_support import SLEEP_VS_DEADLINE

    repo = tmp_path / "repo"
    data = repo / "exports"
    shutil.copytree(SLEEP_VS_DEADLINE, data)
    (tmp_path / "secret.md").write_text(f"{SECRET}\n")
    os.symlink(tmp_path / "secret.md", data / "leak.md")
    os.symlink("/etc/passwd", data / "passwd.txt")
    (data / "keys.md").write_text(KEY)
    (data / "token.txt").write_text(f"deploy with {TOKEN}\n")
    os.mkfifo(data / "stuck.md")
    return data


def test_a_data_folder_never_sends_links_out_of_it_keys_or_tokens_to_the_model_or_the_record(tmp_path: Path) -> None:
    # Issue #34: leak.md -> a secret and passwd.txt -> /etc/passwd under --repo-root went to the model in
    # every request, and GET /api/runs/ID returned them with --record-content; a key and a token were loaded too.
    from deliberation_support import NOW, REQUEST, Deliberators

    data = hostile_data_folder(tmp_path)
    script, prompts = Deliberators(), []

    async def spy(request: ModelRequest) -> Any:
        prompts.append("\n".join(m.content for m in request.messages))
        return await script(request)

    settings = ServerSettings(model=FunctionModel(spy), store_path=tmp_path / "runs.db", repo_roots=[tmp_path / "repo"],
                              record_content=True)
    with Server(settings) as srv:
        started = httpx.post(f"{srv.url}/api/deliberation/runs", json={"request": REQUEST, "data": str(data), "now": NOW})
        assert started.status_code == 202, started.text
        with httpx.stream("GET", srv.url + started.json()["events"], timeout=60) as stream:
            events = list(sse(stream.iter_lines()))
        assert events[-1][1]["status"] == "completed"
        record = httpx.get(f"{srv.url}/api/runs/{started.json()['run_id']}").text
    assert prompts and record
    passwd_line = Path("/etc/passwd").read_text().splitlines()[0]
    for leaked in (SECRET, passwd_line, "PRIVATE KEY", TOKEN):
        assert not any(leaked in p for p in prompts), leaked
        assert leaked not in record, leaked
    from moot.teams.deliberation import load_folder

    skipped = {s.file: s.reason for s in load_folder(data).skipped}
    assert "leads outside" in skipped["leak.md"] and "leads outside" in skipped["passwd.txt"]
    assert "private key" in skipped["keys.md"] and "access token" in skipped["token.txt"]
    assert skipped["stuck.md"] == "not a regular file"


# --------------------------------------------------------------------------- FIFOs and devices


def test_moot_learn_refuses_dev_zero_in_one_line(tmp_path: Path) -> None:
    # Issue #34: `moot learn /dev/zero` grew to 23 GB before the kernel killed it.
    result = moot("learn", "/dev/zero", "--kb", "zero", home=tmp_path, memory_bytes=2 << 30)
    one_line_error(result, "/dev/zero", "not a regular file")


def test_a_fifo_hangs_neither_learn_nor_graph_nor_index(tmp_path: Path) -> None:
    # Issue #34: a FIFO hung `moot learn`, `moot index` (and research runs over the API) and `moot graph --source`.
    fifo = tmp_path / "notes.md"
    os.mkfifo(fifo)
    one_line_error(moot("learn", str(fifo), "--kb", "k", home=tmp_path, timeout=60), "FIFO")
    one_line_error(moot("graph", "what happened?", "--source", str(fifo), home=tmp_path, timeout=60), "FIFO")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n")
    os.mkfifo(repo / "stuck.py")
    os.mkfifo(repo / ".gitignore")
    indexed = moot("index", str(repo), "--json", home=tmp_path, timeout=60)
    assert indexed.returncode == 0, indexed.stderr
    import json

    stats = json.loads(indexed.stdout)
    assert stats["files"] == 1 and stats["skipped"] == {"special": 1}


def _build_index(repo: str, db: str, queue: Any) -> None:
    from moot.codeindex import CodeIndex

    with CodeIndex.build(repo, db_path=db) as index:
        queue.put((index.stats()["skipped"], index.read_file("app.py")))


def test_research_over_the_api_indexes_a_repository_holding_a_fifo(tmp_path: Path) -> None:
    # Research runs (over the API too) build the index first: in a child, so a hang fails the test.
    import multiprocessing

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def main():\n    return 1\n")
    os.mkfifo(repo / "stuck.py")
    os.symlink("/etc/passwd", repo / "passwd.py")
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_build_index, args=(str(repo), str(tmp_path / "index.sqlite3"), queue))
    child.start()
    child.join(120)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung, "indexing a tree with a FIFO in it hung"
    skipped, text = queue.get(timeout=10)
    assert set(skipped) == {"special", "symlink"} and "return 1" in text


# --------------------------------------------------------------------------- moot index /


def test_moot_index_refuses_the_machine_and_the_home_folder(tmp_path: Path) -> None:
    # Issue #34: `moot index /` read 20,561 files, the home folder and /etc included, into 800 MB.
    home = tmp_path / "me"
    home.mkdir()
    (home / "app.py").write_text("x = 1\n")
    started = time.monotonic()
    one_line_error(moot("index", "/", home=tmp_path, env={"HOME": str(home)}), "whole filesystem", "--allow-large")
    one_line_error(moot("index", str(home), home=tmp_path, env={"HOME": str(home)}), "home folder", "--allow-large")
    one_line_error(moot("index", str(tmp_path), home=tmp_path, env={"HOME": str(home)}), "holds your home folder")
    assert time.monotonic() - started < 600  # (refused at once: nothing was walked)
    allowed = moot("index", str(home), "--allow-large", "--json", home=tmp_path, env={"HOME": str(home)})
    assert allowed.returncode == 0, allowed.stderr


def test_a_tree_over_the_size_cap_needs_allow_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from moot.codeindex import CodeIndex
    from moot.codeindex import index as index_module
    from moot.errors import MootError

    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(f"VALUE_{i} = {i}\n")
    monkeypatch.setattr(index_module, "MAX_INDEX_FILES", 10)
    with pytest.raises(MootError) as refused:
        CodeIndex.build(tmp_path, db_path=tmp_path / "big.sqlite3")
    assert "more than 10 files" in refused.value.one_line() and "--allow-large" in refused.value.one_line()
    assert not (tmp_path / "big.sqlite3").exists()
    with CodeIndex.build(tmp_path, db_path=tmp_path / "big.sqlite3", allow_large=True) as index:
        assert index.stats()["files"] == 12
    with CodeIndex.build(tmp_path, db_path=tmp_path / "big.sqlite3") as index:  # already allowed once
        assert index.stats()["files"] == 12


# --------------------------------------------------------------------------- board agents' files


def test_board_tools_neither_hang_on_a_fifo_nor_follow_a_link_out(tmp_path: Path) -> None:
    from moot.errors import MootError
    from moot.teams.board.agent_tools import file_tools, search_documents_tool

    workspace = tmp_path / "ws"
    (workspace / "context").mkdir(parents=True)
    (workspace / "context" / "plan.md").write_text("the launch plan is ready\n")
    (tmp_path / "secret.md").write_text(f"launch {SECRET}\n")
    os.symlink(tmp_path / "secret.md", workspace / "context" / "leak.md")
    os.mkfifo(workspace / "context" / "stuck.md")
    search = search_documents_tool(workspace)
    found = search.function(query="launch plan")  # type: ignore[attr-defined]
    assert "plan.md" in found and SECRET not in found
    read_file = file_tools(workspace)["read_file"].function  # type: ignore[attr-defined]
    with pytest.raises(MootError):
        read_file(path="context/leak.md")
    assert SECRET not in str(read_file(path="context/stuck.md"))
