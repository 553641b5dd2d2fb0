"""One progress reporter for every team command (issue #35): timestamped lines when piped, and on
Ctrl-C or a budget stop the run id, the reason and the partial answer, with exit 130 or 1.

Each command runs in a real subprocess (stderr is a pipe, as in CI) against an OpenAI-compatible
model on loopback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from openai_stub import openai_compatible_server
from test_research_support import fake_answer, fake_openai_server, make_repo

MOOT = [sys.executable, "-m", "moot"]
STAMP = re.compile(r"^\[\d\d:\d\d:\d\d\] ")


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_")}
    env.update({"MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "MOOT_CONFIG": ""})
    return env


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env_for(home), timeout=120)


def interrupt_after(args: list[str], marker: str, env: dict[str, str], release: threading.Event) -> tuple[int, str]:
    """Start `moot ARGS`, press Ctrl-C once a stderr line holds ``marker``; the exit status and all of stderr."""
    proc = subprocess.Popen([*MOOT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if marker in line:
                break
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, "".join(seen) + rest


def test_piped_research_prints_timestamped_lines_from_the_first_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with fake_openai_server() as model:
        out = moot("research", "How does a request flow end-to-end?", "--repo", str(repo), "--mode", "multi",
                   "--model", model, home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines and all(STAMP.match(line) for line in lines), out.stderr
    assert "research: indexing" in lines[0]  # said before the index is built or a model is loaded
    text = "\n".join(lines)
    assert re.search(r"run [0-9a-f]{12} started", text)
    assert "researcher-1: started" in text and "researcher-1: completed" in text
    assert "app/server.py:4" in out.stdout  # the answer stays on stdout


def test_ctrl_c_prints_the_run_id_reason_and_partial_answer_and_exits_130(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    release = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
        if schema == "ResearcherReport":
            release.wait(60)  # the researchers are still working when the user presses Ctrl-C
        return fake_answer(body)

    with openai_compatible_server(answer) as model:
        code, err = interrupt_after(["research", "How does a request flow end-to-end?", "--repo", str(repo), "--mode", "multi",
                                     "--model", model], "researcher-1: started", env_for(tmp_path / "home"), release)
    assert code == 130, err
    match = re.search(r"interrupted: run ([0-9a-f]{12}) cancelled", err)
    assert match, err
    assert "partial answer" in err and "planner:" in err  # the plan was finished before Ctrl-C
    assert "researcher-1: cancelled" in err and "researcher-1: failed" not in err
    assert f"moot runs show {match.group(1)}" in err
    shown = moot("runs", "show", match.group(1), home=tmp_path / "home")
    assert "cancelled" in shown.stdout


def test_a_budget_stop_prints_the_run_id_and_what_it_kept_and_exits_1(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with fake_openai_server() as model:
        out = moot("research", "How does a request flow end-to-end?", "--repo", str(repo), "--mode", "multi",
                   "--budget", "calls=2", "--model", model, home=tmp_path / "home")
    assert out.returncode == 1, out.stderr
    assert re.search(r"stopped: run [0-9a-f]{12}: ", out.stderr), out.stderr
    assert "fix: pass a larger --budget" in out.stderr
    assert "partial answer" in out.stderr or "no task had finished" in out.stderr


def test_ctrl_c_during_learn_says_what_was_kept_and_exits_130(tmp_path: Path) -> None:
    release = threading.Event()
    files = []
    for name in ("a.md", "b.md"):
        path = tmp_path / name
        path.write_text(f"# {name}\n\nThe Ashby Pier has 40 berths.\n")
        files.append(str(path))

    def answer(body: dict[str, Any]) -> str:
        release.wait(60)  # every file is still being learned when the user presses Ctrl-C
        return "{}"

    home = tmp_path / "home"
    with openai_compatible_server(answer) as model:  # Ctrl-C once a file is at its first chunk: the model was asked
        code, err = interrupt_after(["learn", *files, "--kb", "pier", "--model", model], "chunk 0/", env_for(home), release)
    assert code == 130, err
    match = re.search(r"interrupted: run ([0-9a-f]{12}) cancelled: 0 of 2 file\(s\) learned and kept", err)
    assert match, err
    assert "Traceback" not in err and f"moot runs show {match.group(1)}" in err
    assert not (home / "kb" / "pier.sqlite3").exists()  # a knowledge base that learned nothing is not left behind


def test_piped_board_worker_prints_a_line_per_task_it_works_on(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", str(tmp_path / "board")
    assert moot("board", "init", ws, home=home).returncode == 0
    for text in ("say hello", "say goodbye"):
        assert moot("board", "submit", ws, text, "--requires", "echo", home=home).returncode == 0
    out = moot("board", "worker", ws, "--agent", "echo", "--until-idle", "--lease", "5", home=home)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines and all(STAMP.match(line) for line in lines), out.stderr
    assert lines[0].endswith("board worker: started")  # before the agent is built
    claimed = [line for line in lines if ": claimed — " in line]
    completed = [line for line in lines if re.search(r"\(general\): completed in \d+\.\ds$", line)]
    assert len(claimed) == 2 and len(completed) == 2, out.stderr
    assert any("say goodbye" in line for line in claimed)
    assert "2 completed, 0 failed" in out.stdout  # the summary stays on stdout
    quiet = moot("board", "worker", ws, "--agent", "echo", "--until-idle", "--json", home=home)
    assert quiet.returncode == 0 and quiet.stderr.strip() == "", quiet.stderr  # --json: no progress lines
